# fuzz.cmake, included by tests/CMakeLists.txt: builds tests/fuzz with clang (a project of
# its own, through ExternalProject: the main build may use gcc) and registers one bounded
# libFuzzer run per target as a test labelled "fuzz" (policy files, ELF files, fatbins, and
# `cudashim report`'s reports, flight records and event streams). Without a clang that links
# -fsanitize=fuzzer (Debian: clang-14 + libclang-rt-14-dev) the tests still exist and
# skip (exit 77). The code fuzzed does not use cuda.h: built once, in the CUDA 13 tree.
set(CUDASHIM_FUZZ_BIN ${CMAKE_BINARY_DIR}/fuzz/bin)
if(CUDASHIM_FUZZ AND CUDASHIM_CUDA_HEADER_VERSION GREATER_EQUAL 13000 AND NOT CUDASHIM_SANITIZE AND NOT CUDASHIM_TSAN)
  find_program(CUDASHIM_FUZZ_CXX NAMES clang++-14 clang++)
  find_program(CUDASHIM_FUZZ_CC NAMES clang-14 clang)
  if(CUDASHIM_FUZZ_CXX AND CUDASHIM_FUZZ_CC AND NOT DEFINED CUDASHIM_FUZZ_LINKS)
    set(_probe ${CMAKE_BINARY_DIR}/fuzz-probe)
    file(WRITE ${_probe}.cpp "extern \"C\" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n")
    execute_process(COMMAND ${CUDASHIM_FUZZ_CXX} -fsanitize=fuzzer,address,undefined ${_probe}.cpp -o ${_probe}
                    RESULT_VARIABLE _probe_rc OUTPUT_QUIET ERROR_QUIET)
    if(_probe_rc EQUAL 0)
      set(CUDASHIM_FUZZ_LINKS ON CACHE INTERNAL "clang links -fsanitize=fuzzer")
    else()
      set(CUDASHIM_FUZZ_LINKS OFF CACHE INTERNAL "clang links -fsanitize=fuzzer")
    endif()
  endif()
  if(CUDASHIM_FUZZ_LINKS)
    include(ExternalProject)
    ExternalProject_Add(cudashim_fuzz
      SOURCE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz
      BINARY_DIR ${CMAKE_BINARY_DIR}/fuzz
      CMAKE_ARGS -DCMAKE_C_COMPILER=${CUDASHIM_FUZZ_CC} -DCMAKE_CXX_COMPILER=${CUDASHIM_FUZZ_CXX}
                 -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDASHIM_ROOT=${PROJECT_SOURCE_DIR}
      INSTALL_COMMAND ""
      BUILD_ALWAYS ON  # the sub-build decides what changed
      BUILD_BYPRODUCTS ${CUDASHIM_FUZZ_BIN}/fuzz_policy ${CUDASHIM_FUZZ_BIN}/fuzz_elf ${CUDASHIM_FUZZ_BIN}/fuzz_fatbin
                       ${CUDASHIM_FUZZ_BIN}/fuzz_report ${CUDASHIM_FUZZ_BIN}/fuzz_stream)
  else()
    message(STATUS "cudashim: no clang that links -fsanitize=fuzzer: the fuzz tests will be skipped")
  endif()
endif()

if(CUDASHIM_CUDA_HEADER_VERSION GREATER_EQUAL 13000 AND NOT CUDASHIM_SANITIZE AND NOT CUDASHIM_TSAN)
  # Runs sized for 20-40 s each on the 2-core CI machine (docs/reliability.md has the figures).
  set(_fuzz_runs policy 30000 elf 100000 fatbin 500000 report 30000 stream 15000)
  while(_fuzz_runs)
    list(POP_FRONT _fuzz_runs _name _runs)
    add_test(NAME fuzz.${_name} COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run_fuzz.py
      --bin ${CUDASHIM_FUZZ_BIN}/fuzz_${_name} --seeds ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${_name}
      --runs ${_runs} --work ${CMAKE_BINARY_DIR}/fuzz/work/${_name})
    set_tests_properties(fuzz.${_name} PROPERTIES LABELS fuzz SKIP_RETURN_CODE 77 TIMEOUT 300)
  endwhile()
endif()
