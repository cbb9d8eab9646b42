#!/usr/bin/env bash
# pip install . from scratch, as a user without the CMake route would: a fresh virtual
# environment of Debian's /usr/bin/python3 (no system site-packages: NumPy and pytest come from
# PyPI through pyproject.toml's dependencies and its `test` extra), `pip install '.[test]'`
# (scikit-build-core builds the module and the tapelab command from this tree in a temporary
# folder), the package's metadata, then the Python tests (python/tests) against the installed
# module and command, run from outside the source tree so that nothing there is imported.
# Not part of scripts/test.sh: it builds the C++ tree a second time (about 25 minutes on 2 cores).
# The venv: $TMPDIR/tapelab-pip-venv (or /tmp/...), emptied first (--clear). Exit: pytest's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="${TMPDIR:-/tmp}/tapelab-pip-venv"
cd "$root"
start=$SECONDS
/usr/bin/python3 -m venv --clear "$venv"
"$venv/bin/pip" install '.[test]'
echo "test-pip: installed in $((SECONDS - start)) s"
"$venv/bin/pip" show tapelab
"$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("tapelab"))'
cd "${TMPDIR:-/tmp}"
unset PYTHONPATH
"$venv/bin/python" -c 'import tapelab, sys; assert tapelab.__file__.startswith(sys.prefix), tapelab.__file__; print("test-pip: tapelab from", tapelab.__file__)'
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir="$root/python/tests" \
  --tapelab-cli="$venv/bin/tapelab" "$root/python/tests"
echo "test-pip: done in $((SECONDS - start)) s"
