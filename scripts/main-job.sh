#!/usr/bin/env bash
# The README's first command: install, build, and run the main job —
# `tapelab compare` on the 252-step Asian, value + 5 Greeks, every usable engine.
# Extra arguments go to `tapelab compare` (e.g. --paths 1000000 --engines cuda).
# Without a real GPU (lavapipe, PoCL and cpu-jit only) the default is a lighter
# run (30,000 paths, one timed ladder) that finishes in minutes on 2 cores;
# pass --paths/--ladders to override.
# It builds the same tree as the test command (scripts/test.sh: the `ci` preset, release with warnings
# as errors), so running both builds once; CI (.ci/run) runs this file after the tests.
# Exits non-zero when any row fails or differs from its plain kernel (compare's own exit code).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake --preset ci
cmake --build --preset ci
# The README's own-tape lines run `python3` and `tapelab`: both go into a virtual environment on Debian's
# Python (docs/python.md's install), made once and refreshed each time; `. .venv/bin/activate` puts it first.
[ -x .venv/bin/python3 ] || /usr/bin/python3 -m venv --system-site-packages .venv
cmake --install build/ci --component python --prefix .venv > /dev/null
ln -sf "$PWD/build/ci/cli/tapelab" .venv/bin/tapelab
tapelab=./build/ci/cli/tapelab
gpu='"name":"\(cuda\|vulkan\|opencl\)","usable":true,"compile_only":false,"cpu_device":false'
if [ $# -eq 0 ] && ! "$tapelab" engines --json | grep -q "$gpu"; then
  echo "main-job: no GPU here; running the light configuration (--paths 30000 --ladders 1)" >&2
  set -- --paths 30000 --ladders 1
fi
exec "$tapelab" compare "$@"
