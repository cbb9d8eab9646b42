#!/usr/bin/env bash
# The sanitizer job (part of the README's test command): the CPU-side tests (util,
# tape, planner, reference, cpu-jit, api, cli, the quick properties, the fuzz
# replays) built by clang with ASan + UBSan (-fno-sanitize-recover; MPI off: Open MPI
# never frees what its components allocate, which LeakSanitizer reports as leaks in
# libmpi and in modules it dlopens; the ci build runs the MPI tests), then each
# libFuzzer harness for FUZZ_SECONDS (default 60). The asan preset builds the
# fuzzers in the same tree, so the libraries are compiled once for both. Cost on
# the 2-core dev machine: build about as long as the ci build (summed compile time
# 3,320 s vs 3,152 s under the same load), ctest 131 s (143 tests), fuzzing 183 s.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
cmake --preset asan "$@"
# Only what the CPU-side tests need (not the experiment drivers): their tests, the
# tapelab binary the CLI tests run, the properties, the fuzzers and their replays.
targets=$(ninja -C build/asan -t targets all |
  grep -oE '^(test_(util|tape|planner|reference|cpujit|api|cli)_[a-z0-9_]+|tapelab_properties|fuzz_[a-z_]+|tapelab):' |
  tr -d : | sort -u)
cmake --build --preset asan --target $targets
ctest --preset asan
for h in tape planfile cli plannest cacheentry; do
  fuzz/run.sh "$h" "$seconds" build/asan
done
