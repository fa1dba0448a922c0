"""preload_support.py: what the Python preload tests share (tests/preload/*.py import it; it sits
beside them, so a test run as a script or as its own --child finds it)."""
import subprocess


def line_of(path, tag):
    """The number of the line of `path` that ends with the comment `# tag`."""
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if line.rstrip().endswith("# " + tag):
                return i
    raise AssertionError(f"{path}: no line ends with '# {tag}'")


def interpreter(version, pythons_sh):
    """The path of CPython `version` (scripts/pythons.sh find), or None with the reason printed."""
    p = subprocess.run([pythons_sh, "find", version], capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stderr.strip())
        return None
    return p.stdout.strip()
