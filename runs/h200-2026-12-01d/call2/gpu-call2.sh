#!/usr/bin/env bash
# Session 6, call 2: Vulkan stored draws after the barrier fix (and 1 path per lane); OpenCL with one
# path per lane and sums in registers (+ stored draws, + quantile by selection); cuda stored draws at
# 12 and 16 segments, 4M and 1M; Nsight Compute on cuda's one-market register kernel with and without
# stored draws (1M paths).
set -uo pipefail
out=/tmp/res; mkdir -p $out
bin=$PWD/build/gpu/bin
export __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1 __GL_SHADER_DISK_CACHE_SIZE=4294967296
export __GL_SHADER_DISK_CACHE_PATH=/tmp/tapelab-nv-shader-cache
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$out/gpu.txt"
cat build/gpu/COMMIT >> "$out/gpu.txt" 2>/dev/null
F=PATHS_PER_LANE=1+KAHAN_LOCAL=0+APPROX_MATH=1+QUANTILE_SELECT=1+CUDA_OUTLINE_DRAWS=1
CUDA_SETS="$F+CUDA_MIN_BLOCKS=6 $F+STORE_DRAWS=1"
VK_SETS='- STORE_DRAWS=1 PATHS_PER_LANE=1+STORE_DRAWS=1'
C1=APPROX_MATH=1+PATHS_PER_LANE=1+KAHAN_LOCAL=0
CL_SETS="$C1 $C1+STORE_DRAWS=1 $C1+QUANTILE_SELECT=1"
t0=$(date +%s)
mkdir -p "$out/vulkan" "$out/cuda" "$out/cuda12" "$out/opencl"
( OUT=$out/vulkan OCC_ENGINE=vulkan OCC_SETS=$VK_SETS OCC_JOBS=3 bash scripts/gpu-occupancy.sh compile ) &
vk=$!
( OUT=$out/opencl OCC_ENGINE=opencl OCC_SETS=$CL_SETS OCC_NOGREEKS=1 OCC_JOBS=3 bash scripts/gpu-occupancy.sh compile ) &
cl=$!
OUT=$out/cuda OCC_SETS=$CUDA_SETS OCC_JOBS=4 bash scripts/gpu-occupancy.sh compile
OUT=$out/cuda12 OCC_SETS=$CUDA_SETS OCC_EXTRA='--checkpoint 12' OCC_JOBS=4 bash scripts/gpu-occupancy.sh compile
K=(TAPELAB_PATHS_PER_LANE=1 TAPELAB_KAHAN_LOCAL=0 TAPELAB_APPROX_MATH=1 TAPELAB_QUANTILE_SELECT=1 TAPELAB_CUDA_OUTLINE_DRAWS=1)
reg=(price --product asian --steps 252 --engine cuda --fp32 --kernel register --checkpoint 16)
env "${K[@]}" TAPELAB_CUDA_MIN_BLOCKS=6 "$bin/tapelab" "${reg[@]}" --paths 4096 > /dev/null 2>> "$out/progress.txt"
env "${K[@]}" TAPELAB_STORE_DRAWS=1 "$bin/tapelab" "${reg[@]}" --paths 4096 > /dev/null 2>> "$out/progress.txt"
echo "cuda compiled at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
wait $vk; echo "vulkan compiled at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
wait $cl; echo "opencl compiled at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
OUT=$out/cuda OCC_SETS=$CUDA_SETS bash scripts/gpu-occupancy.sh time
OUT=$out/cuda12 OCC_SETS=$CUDA_SETS OCC_EXTRA='--checkpoint 12' OCC_PATHS=4000000 bash scripts/gpu-occupancy.sh time
echo "cuda timed at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
OUT=$out/vulkan OCC_ENGINE=vulkan OCC_SETS=$VK_SETS OCC_PATHS=4000000 bash scripts/gpu-occupancy.sh time
echo "vulkan timed at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
OUT=$out/opencl OCC_ENGINE=opencl OCC_SETS=$CL_SETS OCC_NOGREEKS=1 OCC_PATHS=4000000 bash scripts/gpu-occupancy.sh time
echo "opencl timed at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
sections=(--section SpeedOfLight --section InstructionStats --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis)
for st in 0 1; do
  mb=(); [ $st = 0 ] && mb=(TAPELAB_CUDA_MIN_BLOCKS=6)
  echo "=== ncu: register 16, one market, 1M paths, fastest knobs, STORE_DRAWS=$st" >> "$out/ncu.txt"
  env "${K[@]}" "${mb[@]}" TAPELAB_STORE_DRAWS=$st timeout 60 ncu --clock-control none --launch-count 1 "${sections[@]}" \
      "$bin/tapelab" "${reg[@]}" --paths 1000000 >> "$out/ncu.txt" 2>&1
done
echo "ncu at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
