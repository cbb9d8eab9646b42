#!/usr/bin/env bash
# Session 7, call 2: the market loop without outlined draws on cuda (call 1: outlined draws + loop
# 687-859, below the unrolled 1,076-1,114; OpenCL's loop, draws inlined, 965/1,071), with and without
# selection, launch bound 10; OpenCL's unrolled 7-market kernel beside its loop (and the loop with
# selection, 2 paths per lane); Vulkan's loop; Nsight stall reasons for the loop kernel, and a middle
# dispatch at 4M paths (call 1's loop was slower at 4M than at 1M).
set -uo pipefail
out=/tmp/res2; mkdir -p $out
bin=$PWD/build/gpu/bin
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
export TAPELAB_CACHE_DIR=/tmp/tapelab-cache
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$out/gpu.txt"
commit=$(cat build/gpu/COMMIT); echo "$commit" >> "$out/gpu.txt"
t0=$(date +%s)
stamp() { echo "$1 at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"; }
F=PATHS_PER_LANE=1+KAHAN_LOCAL=0+APPROX_MATH=1+CUDA_OUTLINE_DRAWS=0+MARKET_LOOP=1
KS="$F+QUANTILE_SELECT=1 $F+QUANTILE_SELECT=0 $F+QUANTILE_SELECT=1+CUDA_MIN_BLOCKS=10"
C=APPROX_MATH=1+KAHAN_LOCAL=0
CL="$C+PATHS_PER_LANE=1 $C+PATHS_PER_LANE=1+MARKET_LOOP=1+QUANTILE_SELECT=1 $C+PATHS_PER_LANE=2+MARKET_LOOP=1"
mkdir -p "$out/cuda" "$out/vulkan" "$out/opencl"
( OUT=$out/opencl OCC_ENGINE=opencl OCC_SETS="$CL" OCC_JOBS=3 timeout 230 bash scripts/gpu-occupancy.sh compile ) &
( OUT=$out/vulkan OCC_ENGINE=vulkan OCC_SETS='MARKET_LOOP=1' OCC_JOBS=1 timeout 230 bash scripts/gpu-occupancy.sh compile ) &
OUT=$out/cuda OCC_SETS="$KS" OCC_JOBS=3 timeout 230 bash scripts/gpu-occupancy.sh compile
stamp "cuda compiled"
wait
stamp "all compiled"
OUT=$out/cuda OCC_SETS="$KS" OCC_PATHS='1000000 1000000 4000000 4000000' timeout 80 bash scripts/gpu-occupancy.sh time
stamp "cuda timed"
OUT=$out/opencl OCC_ENGINE=opencl OCC_SETS="$CL" OCC_PATHS='1000000 4000000' timeout 70 bash scripts/gpu-occupancy.sh time
stamp "opencl timed"
sections=(--section SpeedOfLight --section InstructionStats --section Occupancy --section LaunchStats --section WarpStateStats
          --section MemoryWorkloadAnalysis --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio')
P=(price --product asian --steps 252 --fp32 --engine cuda --kernel register --checkpoint 16
   --ladder spot=97,98,99,100,101,102,103 --markets 7)
K=(TAPELAB_PATHS_PER_LANE=1 TAPELAB_KAHAN_LOCAL=0 TAPELAB_APPROX_MATH=1 TAPELAB_QUANTILE_SELECT=1 TAPELAB_MARKET_LOOP=1)
echo "=== ncu: register-x7 1M (${K[*]} TAPELAB_CUDA_OUTLINE_DRAWS=0)" >> "$out/ncu.txt"
timeout 60 ncu --clock-control none --launch-count 1 "${sections[@]}" env "${K[@]}" TAPELAB_CUDA_OUTLINE_DRAWS=0 \
    "$bin/tapelab" "${P[@]}" --paths 1000000 >> "$out/ncu.txt" 2>&1
stamp "ncu 1"
echo "=== ncu: register-x7 4M, third launch (${K[*]} TAPELAB_CUDA_OUTLINE_DRAWS=1 TAPELAB_CUDA_MIN_BLOCKS=6)" >> "$out/ncu.txt"
timeout 60 ncu --clock-control none --launch-skip 2 --launch-count 1 --section SpeedOfLight --section LaunchStats \
    env "${K[@]}" TAPELAB_CUDA_OUTLINE_DRAWS=1 TAPELAB_CUDA_MIN_BLOCKS=6 "$bin/tapelab" "${P[@]}" --paths 4000000 >> "$out/ncu.txt" 2>&1
stamp "ncu 2"
OUT=$out/vulkan OCC_ENGINE=vulkan OCC_SETS='MARKET_LOOP=1' OCC_PATHS='1000000 4000000' timeout 100 bash scripts/gpu-occupancy.sh time
stamp "vulkan timed"
