#!/usr/bin/env bash
# Session 8, call 5 (the device time left, ~6 min): the reductions beside the next kernel on a
# lowest-priority stream (TAPELAB_CUDA_SUMS_BESIDE=1) against behind each kernel (call 4's default),
# loop set + stored draws; the CUDA pipelined test (all sums placements) first.
set -uo pipefail
out=/tmp/res5; mkdir -p $out
bin=$PWD/build/gpu/bin
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
export TAPELAB_CACHE_DIR=/tmp/tapelab-cache
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version,power.limit --format=csv > "$out/gpu.txt"
commit=$(cat build/gpu/COMMIT); echo "$commit" >> "$out/gpu.txt"
t0=$(date +%s)
stamp() { echo "$1 at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"; }
S2=PATHS_PER_LANE=1+KAHAN_LOCAL=0+APPROX_MATH=1+QUANTILE_SELECT=1+MARKET_LOOP=1+CUDA_OUTLINE_DRAWS=0+CUDA_MIN_BLOCKS=10+STORE_DRAWS=1
mkdir -p "$out/cuda"
( timeout 100 "$bin/test_cuda_nvrtc" --gtest_filter='*Pipelined*' > "$out/test_cuda_nvrtc.txt" 2>&1; echo "exit $?" >> "$out/test_cuda_nvrtc.txt" ) &
OUT=$out/cuda OCC_SETS="$S2" OCC_JOBS=1 timeout 120 bash scripts/gpu-occupancy.sh compile
stamp "compiled"
P=(price --product asian --steps 252 --fp32 --engine cuda --kernel register --checkpoint 16
   --ladder spot=97,98,99,100,101,102,103 --markets 7)
for s in $S2+CUDA_SUMS_BESIDE=1 $S2; do
  mapfile -t K < <(tr '+' '\n' <<<"$s" | sed 's/^/TAPELAB_/')
  echo "=== timeline 4000000 paths (${K[*]})" >> "$out/timeline-runs.txt"
  env "${K[@]}" TAPELAB_TIMELINE=1 timeout 20 "$bin/tapelab" "${P[@]}" --paths 4000000 >> "$out/timeline-runs.txt" 2>&1
done
stamp "timelines"
wait
for round in 1 2; do
  OUT=$out/cuda OCC_SETS="$S2 $S2+CUDA_SUMS_BESIDE=1" OCC_PATHS='1000000 4000000' timeout 50 bash scripts/gpu-occupancy.sh time
done
stamp "timed"
