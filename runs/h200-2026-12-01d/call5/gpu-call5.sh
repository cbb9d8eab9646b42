#!/usr/bin/env bash
# Session 6, call 5 (draws version 3): cuda's 7-market ladder at 1M paths three more times (fastest
# knobs; call 4 gave 939.7); OpenCL one market at 10 and 12 segments with 1 and 2 paths per lane;
# Nsight Compute on the 7-market register kernel (roofline).
set -uo pipefail
out=/tmp/res; mkdir -p $out
bin=$PWD/build/gpu/bin
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$out/gpu.txt"; cat build/gpu/COMMIT >> "$out/gpu.txt"
t0=$(date +%s)
stamp() { echo "$1 at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"; }
K=(TAPELAB_PATHS_PER_LANE=1 TAPELAB_KAHAN_LOCAL=0 TAPELAB_CUDA_MIN_BLOCKS=6 TAPELAB_APPROX_MATH=1
   TAPELAB_QUANTILE_SELECT=1 TAPELAB_CUDA_OUTLINE_DRAWS=1)
KS=PATHS_PER_LANE=1+KAHAN_LOCAL=0+CUDA_MIN_BLOCKS=6+APPROX_MATH=1+QUANTILE_SELECT=1+CUDA_OUTLINE_DRAWS=1
CL="APPROX_MATH=1+PATHS_PER_LANE=1+KAHAN_LOCAL=0 APPROX_MATH=1+PATHS_PER_LANE=2+KAHAN_LOCAL=0"
mkdir -p "$out/cuda" "$out/cl10" "$out/cl12"
( OUT=$out/cl10 OCC_ENGINE=opencl OCC_SETS="$CL" OCC_EXTRA='--checkpoint 10' OCC_JOBS=2 bash scripts/gpu-occupancy.sh compile ) &
( OUT=$out/cl12 OCC_ENGINE=opencl OCC_SETS="$CL" OCC_EXTRA='--checkpoint 12' OCC_JOBS=2 bash scripts/gpu-occupancy.sh compile ) &
OUT=$out/cuda OCC_SETS=$KS OCC_JOBS=1 bash scripts/gpu-occupancy.sh compile
env "${K[@]}" "$bin/tapelab" price --product asian --steps 252 --engine cuda --fp32 --paths 4096 --kernel register \
    --checkpoint 16 --ladder spot=97,98,99,100,101,102,103 --markets 7 > /dev/null 2>> "$out/progress.txt"
wait
stamp "compiled"
OUT=$out/cuda OCC_SETS=$KS OCC_PATHS='1000000 1000000 1000000 4000000' timeout 90 bash scripts/gpu-occupancy.sh time
stamp "cuda timed"
OUT=$out/cl10 OCC_ENGINE=opencl OCC_SETS="$CL" OCC_EXTRA='--checkpoint 10' OCC_PATHS=4000000 timeout 60 bash scripts/gpu-occupancy.sh time
OUT=$out/cl12 OCC_ENGINE=opencl OCC_SETS="$CL" OCC_EXTRA='--checkpoint 12' OCC_PATHS=4000000 timeout 60 bash scripts/gpu-occupancy.sh time
stamp "opencl timed"
sections=(--section SpeedOfLight --section InstructionStats --section Occupancy --section LaunchStats --section WarpStateStats)
echo "=== ncu: register-x7 (${K[*]})" >> "$out/ncu.txt"
env "${K[@]}" timeout 45 ncu --clock-control none --launch-count 1 "${sections[@]}" "$bin/tapelab" price --product asian \
    --steps 252 --fp32 --engine cuda --paths 1000000 --kernel register --checkpoint 16 \
    --ladder spot=97,98,99,100,101,102,103 --markets 7 >> "$out/ncu.txt" 2>&1
stamp "ncu"
