"""cudashim_build: the PEP 517 build backend of the `cudashim` wheel (pyproject.toml).

`pip wheel .` (or scripts/build_wheel.sh, which also checks the result) configures a
CMake tree of its own, build-wheel/, builds only what ships (the preload library and
the CLI, tests off), strips their debug sections and packs:

    cudashim/__init__.py, __main__.py, _version.py   the Python side (library_path())
    cudashim/lib/libcudashim.so                      the preload library
    cudashim/bin/cudashim                            the CLI (static executable); it
                                                     finds ../lib/libcudashim.so itself
    cudashim-VERSION.dist-info/                      METADATA, WHEEL, RECORD, entry points

Tagged py3-none-manylinux_2_28_x86_64, or py3-none-manylinux_2_28_aarch64 for the
Grace build (the architecture is read from the packed library's ELF header): no Python
extension, nothing newer than GLIBC_2.28 (compat/, checked by tests/hygiene/check_glibc.py
and auditwheel). No dependency beyond the standard library: the build needs no network.

Settings (environment or `--config-settings KEY=VALUE`):
    CUDASHIM_CUDA_INCLUDE   the folder holding cuda.h (default: /usr/local/cuda/include,
                            else the CUDA 13.0 wheel headers scripts/setup.sh installs)
    CUDASHIM_WHEEL_BUILD    the CMake build folder (default: build-wheel, or
                            build-wheel-aarch64 for the AArch64 target)
    CUDASHIM_TARGET         x86_64 (default: the build machine's) or aarch64: cross-built
                            with cmake/aarch64-linux-gnu.cmake (docs/aarch64.md)
"""
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The wheel's platform tag for each ELF e_machine the packer accepts.
MACHINE_TAGS = {62: "py3-none-manylinux_2_28_x86_64", 183: "py3-none-manylinux_2_28_aarch64"}
TOOLCHAINS = {"aarch64": "cmake/aarch64-linux-gnu.cmake"}
SUMMARY = "See what a CUDA or PyTorch job does with the GPU, without editing the job (LD_PRELOAD shim and CLI)"
# Files of the Python package, copied as they are.
PY_FILES = ["__init__.py", "__main__.py"]


def _version() -> str:
    text = (ROOT / "CMakeLists.txt").read_text()
    m = re.search(r"project\(cudashim VERSION ([0-9.]+)", text)
    if not m:
        raise RuntimeError("cudashim_build: no 'project(cudashim VERSION x.y.z' in CMakeLists.txt")
    return m.group(1)


def _setting(config_settings, key, default=None):
    if config_settings and key in config_settings:
        return config_settings[key]
    return os.environ.get(key, default)


def _cuda_include(config_settings) -> str:
    given = _setting(config_settings, "CUDASHIM_CUDA_INCLUDE")
    candidates = [given] if given else [
        "/usr/local/cuda/include",
        str(ROOT / ".deps/cu130/nvidia/cu13/include"),
    ]
    for c in candidates:
        if c and Path(c, "cuda.h").is_file():
            return c
    raise RuntimeError(
        f"cudashim_build: no cuda.h in {', '.join(candidates)}; run scripts/setup.sh (it installs the "
        "CUDA 13.0 headers from PyPI when no toolkit is present) or set CUDASHIM_CUDA_INCLUDE")


def _run(cmd):
    print("cudashim_build: " + " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True, stdout=sys.stderr)


def _target(config_settings) -> str:
    target = _setting(config_settings, "CUDASHIM_TARGET") or "x86_64"
    if target != "x86_64" and target not in TOOLCHAINS:
        raise RuntimeError(f"cudashim_build: CUDASHIM_TARGET={target!r}: one of x86_64, {', '.join(TOOLCHAINS)}")
    return target


def _machine_tag(lib: Path) -> str:
    """The wheel tag of the library's architecture (ELF e_machine, little-endian ELF64)."""
    head = lib.read_bytes()[:20]
    if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
        raise RuntimeError(f"cudashim_build: {lib} is not a little-endian 64-bit ELF file")
    machine = int.from_bytes(head[18:20], "little")
    if machine not in MACHINE_TAGS:
        raise RuntimeError(f"cudashim_build: {lib}: ELF machine {machine} has no wheel tag here")
    return MACHINE_TAGS[machine]


def _build_native(config_settings) -> Path:
    target = _target(config_settings)
    default = "build-wheel" if target == "x86_64" else f"build-wheel-{target}"
    build = Path(_setting(config_settings, "CUDASHIM_WHEEL_BUILD", str(ROOT / default)))
    if (build / "CMakeCache.txt").is_file() and _setting(config_settings, "CUDASHIM_WHEEL_BUILD"):
        # A tree someone configured (scripts/build_wheel.sh build): built, never reconfigured.
        _run(["cmake", "--build", str(build), "--target", "cudashim_preload", "cudashim_cli"])
        return build
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    launcher = ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"] \
        if shutil.which("ccache") and os.environ.get("CCACHE_DIR") else []
    _run(["cmake", "-S", str(ROOT), "-B", str(build), *gen, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
          f"-DCUDASHIM_CUDA_INCLUDE={_cuda_include(config_settings)}", "-DCUDASHIM_BUILD_TESTS=OFF",
          "-DCUDASHIM_BUILD_EXAMPLES=OFF", "-DCUDASHIM_FUZZ=OFF", "-DCUDASHIM_GLIBC_COMPAT=ON", *launcher,
          *([f"-DCMAKE_TOOLCHAIN_FILE={ROOT / TOOLCHAINS[target]}"] if target in TOOLCHAINS else [])])
    _run(["cmake", "--build", str(build), "-j", str(os.cpu_count() or 2), "--target", "cudashim_preload", "cudashim_cli"])
    return build


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


class _Wheel:
    """A wheel written file by file: fixed timestamps, RECORD last."""

    def __init__(self, path: Path):
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.records = []

    def add(self, arcname: str, data: bytes, executable: bool = False):
        info = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))
        info.external_attr = ((0o755 if executable else 0o644) | 0o100000) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        self.records.append(_record_line(arcname, data))

    def close(self, record_name: str):
        self.records.append(f"{record_name},,")
        info = zipfile.ZipInfo(record_name, date_time=(2026, 1, 1, 0, 0, 0))
        info.external_attr = (0o644 | 0o100000) << 16
        self.zip.writestr(info, "\n".join(self.records) + "\n")
        self.zip.close()


def _stripped(path: Path, tag: str) -> bytes:
    """The file without its DWARF (symbols stay, for backtraces); the build tree keeps the full one.
    An AArch64 file needs the cross binutils' objcopy: the host's reads x86-64 only."""
    out = path.with_name(path.name + ".stripped")
    objcopy = shutil.which("aarch64-linux-gnu-objcopy" if tag.endswith("_aarch64") else "objcopy")
    if objcopy:
        subprocess.run([objcopy, "--strip-debug", str(path), str(out)], check=True)
        data = out.read_bytes()
        out.unlink()
        return data
    return path.read_bytes()


def _metadata(version: str) -> str:
    readme = (ROOT / "README.md").read_text()
    return (
        "Metadata-Version: 2.1\n"
        "Name: cudashim\n"
        f"Version: {version}\n"
        f"Summary: {SUMMARY}\n"
        "License: see the repository\n"
        "Requires-Python: >=3.8\n"
        "Classifier: Operating System :: POSIX :: Linux\n"
        "Classifier: Environment :: GPU :: NVIDIA CUDA\n"
        "Description-Content-Type: text/markdown\n"
        "\n" + readme)


def _wheel_file(tag: str) -> str:
    return ("Wheel-Version: 1.0\n"
            "Generator: cudashim_build (python/cudashim_build.py)\n"
            "Root-Is-Purelib: false\n"
            f"Tag: {tag}\n")


ENTRY_POINTS = "[console_scripts]\ncudashim = cudashim.__main__:main\n"


# --- PEP 517 hooks


def get_requires_for_build_wheel(config_settings=None):
    return []


def pack(lib: Path, cli: Path, wheel_directory) -> str:
    """Writes the wheel of two built files into wheel_directory; returns its file name."""
    version = _version()
    tag = _machine_tag(lib)
    if _machine_tag(cli) != tag:
        raise RuntimeError(f"cudashim_build: {lib} and {cli} are built for different machines")
    name = f"cudashim-{version}-{tag}.whl"
    dist_info = f"cudashim-{version}.dist-info"
    out = Path(wheel_directory) / name
    out.parent.mkdir(parents=True, exist_ok=True)
    w = _Wheel(out)
    pkg = ROOT / "python" / "cudashim"
    for f in PY_FILES:
        w.add(f"cudashim/{f}", (pkg / f).read_bytes())
    w.add("cudashim/_version.py", f'__version__ = "{version}"\n'.encode())
    w.add("cudashim/lib/libcudashim.so", _stripped(lib, tag))
    w.add("cudashim/bin/cudashim", _stripped(cli, tag), executable=True)
    w.add(f"{dist_info}/METADATA", _metadata(version).encode())
    w.add(f"{dist_info}/WHEEL", _wheel_file(tag).encode())
    w.add(f"{dist_info}/entry_points.txt", ENTRY_POINTS.encode())
    w.close(f"{dist_info}/RECORD")
    print(f"cudashim_build: wrote {out}", file=sys.stderr)
    return name


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    """The metadata without building (pip asks for it first)."""
    version = _version()
    d = Path(metadata_directory) / f"cudashim-{version}.dist-info"
    d.mkdir(parents=True, exist_ok=True)
    (d / "METADATA").write_text(_metadata(version))
    target = _target(config_settings)
    (d / "WHEEL").write_text(_wheel_file(f"py3-none-manylinux_2_28_{target}"))
    (d / "entry_points.txt").write_text(ENTRY_POINTS)
    return d.name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    build = _build_native(config_settings)
    return pack(build / "lib" / "libcudashim.so", build / "bin" / "cudashim", wheel_directory)


if __name__ == "__main__":
    # The build tree's `wheel` target (CMake) packs the files it just built and tested:
    #   python3 python/cudashim_build.py --lib LIB --cli CLI --out DIR
    import argparse

    ap = argparse.ArgumentParser(description="pack the cudashim wheel from built files")
    ap.add_argument("--lib", required=True, type=Path)
    ap.add_argument("--cli", required=True, type=Path)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    pack(a.lib, a.cli, a.out)
