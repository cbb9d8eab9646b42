#!/usr/bin/env bash
# Session 7, call 4: TAPELAB_DRAW_LOOP (each segment's draws by a rolled loop over their Philox calls:
# the market-loop kernel's code 637 -> 318 KB, 184 KB with outlined draws) on the market loop with
# inlined draws at launch bound 10 (call 3: 1,311 / 1,301 at 1M / 4M, 52% of its roofline; Nsight:
# 31% of stall cycles 'no instruction'); beside it call 3's best without the draw loop, outlined
# draws, bounds 8 and 12; OpenCL and Vulkan market loop with and without it; the CUDA tests and cuda
# properties (the draw loop is drawn) during the compiles; Nsight on the best; the peers with it.
set -uo pipefail
out=/tmp/res4; mkdir -p $out
bin=$PWD/build/gpu/bin
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
export TAPELAB_CACHE_DIR=/tmp/tapelab-cache
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$out/gpu.txt"
commit=$(cat build/gpu/COMMIT); echo "$commit" >> "$out/gpu.txt"
t0=$(date +%s)
stamp() { echo "$1 at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"; }
B=PATHS_PER_LANE=1+KAHAN_LOCAL=0+APPROX_MATH=1+QUANTILE_SELECT=1+MARKET_LOOP=1
KS="$B+CUDA_OUTLINE_DRAWS=0+CUDA_MIN_BLOCKS=10+DRAW_LOOP=1 $B+CUDA_OUTLINE_DRAWS=0+CUDA_MIN_BLOCKS=10
    $B+CUDA_OUTLINE_DRAWS=1+CUDA_MIN_BLOCKS=10+DRAW_LOOP=1 $B+CUDA_OUTLINE_DRAWS=0+CUDA_MIN_BLOCKS=8+DRAW_LOOP=1
    $B+CUDA_OUTLINE_DRAWS=0+CUDA_MIN_BLOCKS=12+DRAW_LOOP=1"
C=APPROX_MATH=1+KAHAN_LOCAL=0+PATHS_PER_LANE=1+MARKET_LOOP=1+QUANTILE_SELECT=1
CL="$C $C+DRAW_LOOP=1"
VK="MARKET_LOOP=1 MARKET_LOOP=1+DRAW_LOOP=1"
mkdir -p "$out/cuda" "$out/vulkan" "$out/opencl"
( timeout 200 "$bin/test_cuda_nvrtc" --gtest_brief=1 > "$out/test_cuda_nvrtc.txt" 2>&1; echo "exit $?" >> "$out/test_cuda_nvrtc.txt" ) &
( TAPELAB_PROPERTY_SECONDS=70 timeout 200 "$bin/tapelab_properties" --gtest_filter='*Exact*/cuda' --gtest_brief=1 \
    > "$out/properties-cuda.txt" 2>&1; echo "exit $?" >> "$out/properties-cuda.txt" ) &
( OUT=$out/opencl OCC_ENGINE=opencl OCC_SETS="$CL" OCC_JOBS=2 timeout 230 bash scripts/gpu-occupancy.sh compile ) &
( OUT=$out/vulkan OCC_ENGINE=vulkan OCC_SETS="$VK" OCC_JOBS=2 timeout 230 bash scripts/gpu-occupancy.sh compile ) &
OUT=$out/cuda OCC_SETS="$KS" OCC_JOBS=5 timeout 230 bash scripts/gpu-occupancy.sh compile
stamp "cuda compiled"
wait
stamp "tests and compiles"
OUT=$out/cuda OCC_SETS="$KS" OCC_PATHS='1000000 1000000 4000000 4000000' timeout 110 bash scripts/gpu-occupancy.sh time
stamp "cuda timed"
OUT=$out/opencl OCC_ENGINE=opencl OCC_SETS="$CL" OCC_PATHS='1000000 4000000' timeout 40 bash scripts/gpu-occupancy.sh time
OUT=$out/vulkan OCC_ENGINE=vulkan OCC_SETS="$VK" OCC_PATHS='1000000 4000000' timeout 40 bash scripts/gpu-occupancy.sh time
stamp "opencl and vulkan timed"
best=$(awk '$1 == 4000000 && $2 ~ /MIN_BLOCKS/ { s[$2] += $4; n[$2]++ } END { for (k in s) print s[k] / n[k], k }' \
    "$out/cuda/occupancy-summary.txt" | sort -g | tail -1 | awk '{print $2}')
[ -n "$best" ] || best="$B+CUDA_OUTLINE_DRAWS=0+CUDA_MIN_BLOCKS=10+DRAW_LOOP=1"
echo "best at 4M: $best" | tee -a "$out/timeline.txt"
mapfile -t K < <(tr '+' '\n' <<<"$best" | sed 's/^/TAPELAB_/')
P=(price --product asian --steps 252 --fp32 --engine cuda --kernel register --checkpoint 16
   --ladder spot=97,98,99,100,101,102,103 --markets 7 --paths 1000000)
sections=(--section SpeedOfLight --section InstructionStats --section Occupancy --section LaunchStats --section WarpStateStats
          --section MemoryWorkloadAnalysis --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio')
echo "=== ncu: register-x7 1M (${K[*]})" >> "$out/ncu.txt"
timeout 60 ncu --clock-control none --launch-count 1 "${sections[@]}" env "${K[@]}" "$bin/tapelab" "${P[@]}" >> "$out/ncu.txt" 2>&1
stamp "ncu"
common=(--machine h200 --sweep-bin "$bin/scratch_sweep" --tapelab-bin "$bin/tapelab" --commit "$commit" --paths 1000000,4000000)
env "${K[@]}" timeout 200 python3 experiments/drivers/peers.py "${common[@]}" --engines cuda --out "$out/peers-cuda-h200.csv" \
    2>> "$out/peers-progress.txt"
stamp "peers cuda (with JAX and the hand-written kernel)"
