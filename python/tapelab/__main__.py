"""python -m tapelab ARGS: the tapelab command (pip install . puts it beside the module; a CMake build
tree has it in cli/), with the same arguments, exit status and output."""
import os
import shutil
import sys
import sysconfig


def _command():
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(sysconfig.get_path("scripts"), "tapelab"),  # pip install .
                      os.path.join(here, "..", "..", "cli", "tapelab"),       # build/<preset>/python/tapelab
                      shutil.which("tapelab")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def main():
    exe = _command()
    if exe is None:
        sys.stderr.write("tapelab: the tapelab command is not installed beside this module (pip install . installs "
                         "it; a CMake build has it in build/<preset>/cli/)\n")
        return 3
    os.execv(exe, [exe] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
