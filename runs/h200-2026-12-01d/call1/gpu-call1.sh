#!/usr/bin/env bash
# Session 6, call 1: stored draws timed (cuda fastest knobs +/- TAPELAB_STORE_DRAWS, min blocks 4/6/8;
# Vulkan defaults +/- stored draws); OpenCL on the H200 (defaults, approximate math, + quantile by
# selection, + stored draws; price only too). All compiled side by side first, then timed one by one at 4M.
set -uo pipefail
out=/tmp/res; mkdir -p $out
export __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1 __GL_SHADER_DISK_CACHE_SIZE=4294967296
export __GL_SHADER_DISK_CACHE_PATH=/tmp/tapelab-nv-shader-cache
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$out/gpu.txt"
cat build/gpu/COMMIT >> "$out/gpu.txt" 2>/dev/null
F=PATHS_PER_LANE=1+KAHAN_LOCAL=0+APPROX_MATH=1+QUANTILE_SELECT=1+CUDA_OUTLINE_DRAWS=1
CUDA_SETS="$F+CUDA_MIN_BLOCKS=6 $F+CUDA_MIN_BLOCKS=6+STORE_DRAWS=1 $F+CUDA_MIN_BLOCKS=4+STORE_DRAWS=1 $F+CUDA_MIN_BLOCKS=8+STORE_DRAWS=1 $F+STORE_DRAWS=1"
VK_SETS='- STORE_DRAWS=1'
CL_SETS='- APPROX_MATH=1 APPROX_MATH=1+QUANTILE_SELECT=1 APPROX_MATH=1+STORE_DRAWS=1'
t0=$(date +%s)
mkdir -p "$out/vulkan" "$out/cuda" "$out/opencl"
( OUT=$out/vulkan OCC_ENGINE=vulkan OCC_SETS=$VK_SETS OCC_JOBS=2 bash scripts/gpu-occupancy.sh compile ) &
vk=$!
( OUT=$out/opencl OCC_ENGINE=opencl OCC_SETS=$CL_SETS OCC_NOGREEKS=1 OCC_JOBS=4 bash scripts/gpu-occupancy.sh compile ) &
cl=$!
OUT=$out/cuda OCC_SETS=$CUDA_SETS OCC_JOBS=8 bash scripts/gpu-occupancy.sh compile
echo "cuda compiled at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
wait $vk; echo "vulkan compiled at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
wait $cl; echo "opencl compiled at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
OUT=$out/cuda OCC_SETS=$CUDA_SETS OCC_PATHS=4000000 bash scripts/gpu-occupancy.sh time
echo "cuda timed at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
OUT=$out/vulkan OCC_ENGINE=vulkan OCC_SETS=$VK_SETS OCC_PATHS=4000000 bash scripts/gpu-occupancy.sh time
echo "vulkan timed at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
OUT=$out/opencl OCC_ENGINE=opencl OCC_SETS=$CL_SETS OCC_NOGREEKS=1 OCC_PATHS=4000000 bash scripts/gpu-occupancy.sh time
echo "opencl timed at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
