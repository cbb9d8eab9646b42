#!/usr/bin/env bash
# Session 5, call 4: approximate math now with sqrt.approx; register and scratch at 4M and 1M; ncu on the best knobs.
set -uo pipefail
out=$OUT
bin=$PWD/build/gpu/bin
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
cat build/gpu/COMMIT > "$out/commit.txt" 2>/dev/null
t0=$(date +%s)
SETS='PATHS_PER_LANE=1+KAHAN_LOCAL=0+CUDA_MIN_BLOCKS=5+CUDA_APPROX_MATH=1 PATHS_PER_LANE=1+KAHAN_LOCAL=0+CUDA_MIN_BLOCKS=6+CUDA_APPROX_MATH=1 PATHS_PER_LANE=1+KAHAN_LOCAL=0+CUDA_MIN_BLOCKS=8+CUDA_APPROX_MATH=1 PATHS_PER_LANE=2+KAHAN_LOCAL=0+CUDA_APPROX_MATH=1 CUDA_APPROX_MATH=1'
export OCC_SETS=$SETS OCC_NOGREEKS=1 OCC_KERNELS=register,scratch
OCC_JOBS=14 bash scripts/gpu-occupancy.sh compile
echo "compiled at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
OCC_PATHS='4000000 1000000' bash scripts/gpu-occupancy.sh time
echo "timed at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
k=(TAPELAB_PATHS_PER_LANE=1 TAPELAB_KAHAN_LOCAL=0 TAPELAB_CUDA_MIN_BLOCKS=5 TAPELAB_CUDA_APPROX_MATH=1)
sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats --section Occupancy
          --section LaunchStats --section WarpStateStats)
common=(--product asian --steps 252 --fp32 --engine cuda --paths 1000000)
lad=(--ladder spot=97,98,99,100,101,102,103 --markets 7)
run_ncu() {  # label, then tapelab price flags
  local label=$1; shift
  echo "=== ncu: $label (${k[*]})" >> "$out/ncu.txt"
  env "${k[@]}" timeout 120 ncu --clock-control none --launch-count 1 "${sections[@]}" "$bin/tapelab" price "${common[@]}" "$@" >> "$out/ncu.txt" 2>&1
}
run_ncu "plain, price only, 1 market" --kernel plain --checkpoint off --no-greeks
run_ncu "register x1, value + 5 Greeks" --kernel register --checkpoint 16
run_ncu "register x7 sequential, value + 5 Greeks" --kernel register --checkpoint 16 "${lad[@]}"
run_ncu "scratch x7 sequential, value + 5 Greeks" --kernel scratch --checkpoint 16 "${lad[@]}"
k=(TAPELAB_CUDA_MIN_BLOCKS=5)
run_ncu "plain, price only, 1 market, IEEE math" --kernel plain --checkpoint off --no-greeks
echo "ncu at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
