#!/usr/bin/env bash
# The README's first command: install, build, and run the main job —
# `tapelab compare` on the 252-step Asian, value + 5 Greeks, every usable engine.
# Extra arguments go to `tapelab compare` (e.g. --paths 1000000 --engines cuda).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake --preset release
cmake --build --preset release
exec ./build/release/cli/tapelab compare "$@"
