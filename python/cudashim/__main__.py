"""`cudashim ...` and `python -m cudashim ...`: the native command line of this wheel,
run in place of this Python process (same arguments, same exit status, same signals)."""
import os
import sys

from . import cli_path


def main() -> int:
    exe = cli_path()
    try:
        os.execv(exe, [exe] + sys.argv[1:])
    except OSError as e:  # only reached when the exec itself failed
        print(f"cudashim: cannot run {exe}: {e.strerror}; reinstall the package "
              "(pip install --force-reinstall cudashim)", file=sys.stderr)
        return 127
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
