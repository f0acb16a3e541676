"""`python3 -m hone ARGS` (and the `hone` script pip installs): runs the hone
command-line tool bundled with the package, hone/bin/hone, as `hone ARGS`.

In a build tree (PYTHONPATH=build/python) hone/bin/hone is a link to the
build's own build/hone.
"""
import os
import sys


def cli_path() -> str:
    """The bundled `hone` executable."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "hone")


def main() -> int:
    """Replaces this process with `hone sys.argv[1:]`; returns only on failure."""
    exe = cli_path()
    if not os.access(exe, os.X_OK):
        print(f"hone: the hone command is missing at {exe} (build the hone_cli target, "
              "or reinstall the package)", file=sys.stderr)
        return 127
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, ["hone", *sys.argv[1:]])
    return 127  # not reached: execv raises OSError on failure


if __name__ == "__main__":
    sys.exit(main())
