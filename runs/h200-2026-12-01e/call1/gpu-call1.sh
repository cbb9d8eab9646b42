#!/usr/bin/env bash
# Session 7, call 1: TAPELAB_MARKET_LOOP timed (register kernels with 7 markets run each segment's
# markets as a rolled loop). cuda: fastest knobs with and without the loop, launch bound 6 / 8 /
# none; Vulkan defaults with and without; OpenCL compiles its `#pragma unroll 1` on NVIDIA's
# compiler. The CUDA tests and cuda exactness properties (markets-together draws include the loop)
# beside the compiles; Nsight on the loop kernels (memory workload for local-memory traffic).
set -uo pipefail
out=/tmp/res1; mkdir -p $out
bin=$PWD/build/gpu/bin
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$out/gpu.txt"
commit=$(cat build/gpu/COMMIT); echo "$commit" >> "$out/gpu.txt"
t0=$(date +%s)
stamp() { echo "$1 at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"; }
F=PATHS_PER_LANE=1+KAHAN_LOCAL=0+APPROX_MATH=1+QUANTILE_SELECT=1+CUDA_OUTLINE_DRAWS=1
KS="$F+CUDA_MIN_BLOCKS=6 $F+CUDA_MIN_BLOCKS=6+MARKET_LOOP=1 $F+MARKET_LOOP=1 $F+CUDA_MIN_BLOCKS=8+MARKET_LOOP=1"
mkdir -p "$out/cuda" "$out/vulkan" "$out/opencl"
( timeout 170 "$bin/test_cuda_nvrtc" --gtest_brief=1 > "$out/test_cuda_nvrtc.txt" 2>&1; echo "exit $?" >> "$out/test_cuda_nvrtc.txt" ) &
( TAPELAB_PROPERTY_SECONDS=70 timeout 170 "$bin/tapelab_properties" --gtest_filter='*Exact*/cuda' --gtest_brief=1 \
    > "$out/properties-cuda.txt" 2>&1; echo "exit $?" >> "$out/properties-cuda.txt" ) &
( OUT=$out/vulkan OCC_ENGINE=vulkan OCC_SETS='- MARKET_LOOP=1' OCC_JOBS=2 timeout 170 bash scripts/gpu-occupancy.sh compile ) &
( OUT=$out/opencl OCC_ENGINE=opencl OCC_SETS="APPROX_MATH=1+PATHS_PER_LANE=1+KAHAN_LOCAL=0+MARKET_LOOP=1" OCC_JOBS=1 \
    timeout 170 bash scripts/gpu-occupancy.sh compile ) &
OUT=$out/cuda OCC_SETS="$KS" OCC_JOBS=4 timeout 170 bash scripts/gpu-occupancy.sh compile
wait
stamp "tests and compiles"
OUT=$out/cuda OCC_SETS="$KS" OCC_PATHS='1000000 1000000 4000000 4000000' timeout 100 bash scripts/gpu-occupancy.sh time
stamp "cuda timed"
OUT=$out/vulkan OCC_ENGINE=vulkan OCC_SETS='- MARKET_LOOP=1' OCC_PATHS='1000000 4000000' timeout 60 bash scripts/gpu-occupancy.sh time
stamp "vulkan timed"
OUT=$out/opencl OCC_ENGINE=opencl OCC_SETS="APPROX_MATH=1+PATHS_PER_LANE=1+KAHAN_LOCAL=0+MARKET_LOOP=1" OCC_PATHS='1000000 4000000' \
    timeout 40 bash scripts/gpu-occupancy.sh time
stamp "opencl timed"
sections=(--section SpeedOfLight --section InstructionStats --section Occupancy --section LaunchStats --section WarpStateStats
          --section MemoryWorkloadAnalysis)
for mb in 6 unset; do
  K=(TAPELAB_PATHS_PER_LANE=1 TAPELAB_KAHAN_LOCAL=0 TAPELAB_APPROX_MATH=1 TAPELAB_QUANTILE_SELECT=1 TAPELAB_CUDA_OUTLINE_DRAWS=1
     TAPELAB_MARKET_LOOP=1)
  [ $mb = unset ] || K+=(TAPELAB_CUDA_MIN_BLOCKS=$mb)
  echo "=== ncu: register-x7 (${K[*]})" >> "$out/ncu.txt"
  env "${K[@]}" TAPELAB_CACHE_DIR=/tmp/tapelab-cache timeout 45 ncu --clock-control none --launch-count 1 "${sections[@]}" \
      "$bin/tapelab" price --product asian --steps 252 --fp32 --engine cuda --paths 1000000 --kernel register --checkpoint 16 \
      --ladder spot=97,98,99,100,101,102,103 --markets 7 >> "$out/ncu.txt" 2>&1
done
stamp "ncu"
