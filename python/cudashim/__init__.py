"""cudashim: a preloaded library and a command line that show what a CUDA or PyTorch
job does with the GPU, without editing the job.

This package holds the two native files and nothing else of substance:
``library_path()`` is the preload library (``LD_PRELOAD``), ``cli_path()`` the
command line that ``cudashim`` and ``python -m cudashim`` run.
"""
from pathlib import Path

try:
    from ._version import __version__  # written into the wheel by python/cudashim_build.py
except ImportError:  # a source checkout, not an installed wheel
    __version__ = "0+source"

_HERE = Path(__file__).resolve().parent


def library_path() -> str:
    """Absolute path of libcudashim.so, for LD_PRELOAD or /etc/ld.so.preload."""
    return str(_HERE / "lib" / "libcudashim.so")


def cli_path() -> str:
    """Absolute path of the cudashim executable (it finds library_path() by itself)."""
    return str(_HERE / "bin" / "cudashim")


__all__ = ["__version__", "library_path", "cli_path"]
