#!/usr/bin/env bash
# The README's test command: install the Debian packages, build with warnings
# as errors, run every test, then the sanitizer job. What CI runs (.ci/run calls this file).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake --preset ci
cmake --build --preset ci
ctest --preset ci
./scripts/test-sanitizers.sh  # ASan+UBSan CPU-side tests, a minute of each fuzzer
