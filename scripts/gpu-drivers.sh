#!/usr/bin/env bash
# The paper's drivers (issue 15: experiments/drivers/{cliff,markets,segments}.py over scratch_sweep)
# on the lent H200, within about 8 minutes for all three. Here: build release and pack
# (cmake --preset release && cmake --build --preset release && ./scripts/gpu-pack.sh), then one
# device-tool call, carrying .gpu-runtime and build/gpu.tar.xz:
#   source scripts/gpu-env.sh; bash scripts/gpu-drivers.sh [MODE...]     (default: cliff markets segments)
#   cliff     cuda,vulkan,opencl; steps 16..504 (9 lengths); plain, register (16 segments), scratch soa/aos
#             at seglen 100; 1M paths, median of 5. ~200 s cold (NVRTC of the 504-step kernels dominates).
#   markets   cuda,vulkan; 1,2,4,6,8 markets per dispatch at 252 steps; same kernels. ~170 s cold.
#   segments  cuda,vulkan; register kernel at 1..64 segments, 252 steps. ~110 s cold.
#   seglen    scratch_sweep itself (seglen x layout; not in the default: the 2026-11-29 run has it).
# Each mode runs under its own timeout (CLIFF_S, MARKETS_S, SEGMENTS_S seconds) and writes rows as
# they finish, so a mode cut short keeps what it measured. Results in $OUT (./gpu-out elsewhere):
# cliff-h200.csv, markets-h200.csv, segments-h200.csv (copy them to papers/data/ and run
# papers/build.sh), *-progress.txt (stderr).
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
bin=$PWD/build/gpu/bin
py=${PYTHON:-python3}
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
export TAPELAB_CACHE_DIR=${TAPELAB_CACHE_DIR:-/tmp/tapelab-cache}
export __GL_SHADER_DISK_CACHE=0
machine=${MACHINE:-h200}
common=(--machine "$machine" --sweep-bin "$bin/scratch_sweep" --commit "${TAPELAB_COMMIT:-$(cat COMMIT 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}")
say() { echo "=== $* ($(date +%T))"; }
[ $# -eq 0 ] && set -- cliff markets segments

for mode in "$@"; do
  say "$mode"
  case "$mode" in
  cliff)
    timeout "${CLIFF_S:-210}" "$py" experiments/drivers/cliff.py "${common[@]}" --engines cuda,vulkan,opencl \
      --steps 16,32,64,128,192,252,320,400,504 --out "$out/cliff-$machine.csv" 2> >(tee "$out/cliff-progress.txt" >&2)
    ;;
  markets)
    timeout "${MARKETS_S:-170}" "$py" experiments/drivers/markets.py "${common[@]}" --engines cuda,vulkan \
      --markets 1,2,4,6,8 --out "$out/markets-$machine.csv" 2> >(tee "$out/markets-progress.txt" >&2)
    ;;
  segments)
    timeout "${SEGMENTS_S:-110}" "$py" experiments/drivers/segments.py "${common[@]}" --engines cuda,vulkan \
      --segments 1,2,4,8,16,32,64 --out "$out/segments-$machine.csv" 2> >(tee "$out/segments-progress.txt" >&2)
    ;;
  seglen)
    timeout "${SEGLEN_S:-400}" "$bin/scratch_sweep" --engines cuda,vulkan,opencl \
      --out "$out/scratch_sweep-$machine.csv" 2> >(tee "$out/seglen-progress.txt" >&2)
    ;;
  *) echo "gpu-drivers.sh: unknown mode '$mode' (cliff, markets, segments, seglen)" >&2; exit 2 ;;
  esac
  echo "exit $? ($mode)"
done
