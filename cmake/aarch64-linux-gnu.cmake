# aarch64-linux-gnu.cmake: the CMake toolchain of the AArch64 build (the Grace wheel), on
# an x86-64 Debian 12 with its cross toolchain: g++-aarch64-linux-gnu, and the arm64
# -dev packages of the libraries the build links statically (libelf, libdw, zlib, zstd,
# lzma, bz2) plus fmt and toml++ (scripts/setup.sh --aarch64 installs all of them).
# The same sources and options as the x86-64 build; only the compiler and where the
# libraries are found change. CUDA's headers are architecture-independent: the same
# CUDASHIM_CUDA_INCLUDE serves both builds. docs/aarch64.md.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_ASM_COMPILER aarch64-linux-gnu-gcc)
# The binutils of the target: objdump, nm and objcopy of the host do not read AArch64 ELF
# (the hygiene checks and the wheel's strip use these).
set(CMAKE_OBJDUMP aarch64-linux-gnu-objdump CACHE FILEPATH "objdump for AArch64 objects")
set(CMAKE_NM aarch64-linux-gnu-nm CACHE FILEPATH "nm for AArch64 objects")
set(CMAKE_OBJCOPY aarch64-linux-gnu-objcopy CACHE FILEPATH "objcopy for AArch64 objects")
set(CMAKE_READELF aarch64-linux-gnu-readelf CACHE FILEPATH "readelf for AArch64 objects")

# Debian multiarch: the arm64 libraries and CMake packages live under /usr/lib/aarch64-linux-gnu
# and /usr/aarch64-linux-gnu; headers in /usr/include are shared. Programs (python3, the
# generators) are the host's.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
