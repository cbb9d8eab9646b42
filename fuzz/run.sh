#!/usr/bin/env bash
# Runs one libFuzzer harness (fuzz/README.md) for SECONDS at nice 19, one worker:
#   fuzz/run.sh tape|planfile|cli|plannest|cacheentry SECONDS [BUILD_DIR]   (BUILD_DIR: build/fuzz)
# New inputs go to BUILD_DIR/fuzz-corpus/HARNESS (the seeds in fuzz/corpus stay
# as committed); a crash input to BUILD_DIR/fuzz-artifacts/HARNESS/, which makes
# this script fail: copy it to fuzz/regressions/HARNESS/ once the reader is fixed.
# -timeout=30: a unit takes milliseconds; a loaded machine stalled nice-19 units for 11 s.
set -euo pipefail
cd "$(dirname "$0")/.."
h=$1; seconds=$2; build=${3:-build/fuzz}
work=$build/fuzz-corpus/$h; artifacts=$build/fuzz-artifacts/$h
mkdir -p "$work" "$artifacts"
dict=(); [ -f "fuzz/$h.dict" ] && dict=(-dict="fuzz/$h.dict")
# The cli harness prints help, philox words and one-line errors: closed (crash reports still show).
mask=1; [ "$h" = cli ] && mask=3
exec nice -n 19 "$build/fuzz/fuzz_$h" "$work" "fuzz/corpus/$h" "fuzz/regressions/$h" "${dict[@]}" \
  -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 -max_len=8192 -close_fd_mask="$mask" \
  -print_final_stats=1 -artifact_prefix="$artifacts/"
