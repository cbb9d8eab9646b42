#!/usr/bin/env bash
# Session 7, call 3: the market loop with inlined draws and selection under tighter launch bounds
# (call 2: bound 10 -> 96 registers, 1,274 / 1,248 at 1M / 4M; none -> 128 registers, 1,049 / 1,034):
# bounds 10, 12, 14, 16; Nsight (instructions, stall reasons) on the best at 4M and on bound 10; then
# the peers (JAX in the same call) with the best set.
set -uo pipefail
out=/tmp/res3; mkdir -p $out
bin=$PWD/build/gpu/bin
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
export TAPELAB_CACHE_DIR=/tmp/tapelab-cache
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$out/gpu.txt"
commit=$(cat build/gpu/COMMIT); echo "$commit" >> "$out/gpu.txt"
t0=$(date +%s)
stamp() { echo "$1 at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"; }
F=PATHS_PER_LANE=1+KAHAN_LOCAL=0+APPROX_MATH=1+CUDA_OUTLINE_DRAWS=0+MARKET_LOOP=1+QUANTILE_SELECT=1
KS="$F+CUDA_MIN_BLOCKS=10 $F+CUDA_MIN_BLOCKS=12 $F+CUDA_MIN_BLOCKS=14 $F+CUDA_MIN_BLOCKS=16"
mkdir -p "$out/cuda"
OUT=$out/cuda OCC_SETS="$KS" OCC_JOBS=4 timeout 200 bash scripts/gpu-occupancy.sh compile
stamp "compiled"
OUT=$out/cuda OCC_SETS="$KS" OCC_PATHS='1000000 1000000 4000000 4000000' timeout 80 bash scripts/gpu-occupancy.sh time
stamp "timed"
# The best set at 4M paths (mean of its two rows).
best=$(awk '$1 == 4000000 && $2 ~ /MIN_BLOCKS/ { s[$2] += $4; n[$2]++ } END { for (k in s) print s[k] / n[k], k }' \
    "$out/cuda/occupancy-summary.txt" | sort -g | tail -1 | awk '{print $2}')
[ -n "$best" ] || best="$F+CUDA_MIN_BLOCKS=10"
echo "best at 4M: $best" | tee -a "$out/timeline.txt"
mapfile -t K < <(tr '+' '\n' <<<"$best" | sed 's/^/TAPELAB_/')
P=(price --product asian --steps 252 --fp32 --engine cuda --kernel register --checkpoint 16
   --ladder spot=97,98,99,100,101,102,103 --markets 7 --paths 1000000)
sections=(--section SpeedOfLight --section InstructionStats --section Occupancy --section LaunchStats --section WarpStateStats
          --section MemoryWorkloadAnalysis --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio')
echo "=== ncu: register-x7 1M (${K[*]})" >> "$out/ncu.txt"
timeout 60 ncu --clock-control none --launch-count 1 "${sections[@]}" env "${K[@]}" "$bin/tapelab" "${P[@]}" >> "$out/ncu.txt" 2>&1
if [ "$best" != "$F+CUDA_MIN_BLOCKS=10" ]; then
  mapfile -t K10 < <(tr '+' '\n' <<<"$F+CUDA_MIN_BLOCKS=10" | sed 's/^/TAPELAB_/')
  echo "=== ncu: register-x7 1M (${K10[*]})" >> "$out/ncu.txt"
  timeout 60 ncu --clock-control none --launch-count 1 "${sections[@]}" env "${K10[@]}" "$bin/tapelab" "${P[@]}" >> "$out/ncu.txt" 2>&1
fi
stamp "ncu"
common=(--machine h200 --sweep-bin "$bin/scratch_sweep" --tapelab-bin "$bin/tapelab" --commit "$commit" --paths 1000000,4000000)
env "${K[@]}" timeout 200 python3 experiments/drivers/peers.py "${common[@]}" --engines cuda --out "$out/peers-cuda-h200.csv" \
    2>> "$out/peers-progress.txt"
stamp "peers cuda (with JAX and the hand-written kernel)"
