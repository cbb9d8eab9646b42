#!/usr/bin/env bash
# Session 5, call 1: paths per lane, approximate math and launch bounds on cuda (compile all, time at 4M);
# Vulkan's pipelines for call 2 built meanwhile (NVIDIA's shader cache on).
set -uo pipefail
out=$OUT
export __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1 __GL_SHADER_DISK_CACHE_SIZE=4294967296
export __GL_SHADER_DISK_CACHE_PATH=/tmp/tapelab-nv-shader-cache
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$out/gpu.txt"
cat build/gpu/COMMIT >> "$out/gpu.txt" 2>/dev/null
CUDA_SETS='- CUDA_MIN_BLOCKS=6 PATHS_PER_LANE=1+KAHAN_LOCAL=0 PATHS_PER_LANE=1+KAHAN_LOCAL=0+CUDA_MIN_BLOCKS=6 CUDA_APPROX_MATH=1 PATHS_PER_LANE=1+KAHAN_LOCAL=0+CUDA_MIN_BLOCKS=6+CUDA_APPROX_MATH=1'
VK_SETS='- PATHS_PER_LANE=1 PATHS_PER_LANE=2'
t0=$(date +%s)
mkdir -p "$out/vulkan" "$out/cuda"
( OUT=$out/vulkan OCC_ENGINE=vulkan OCC_SETS=$VK_SETS OCC_NOGREEKS=1 OCC_JOBS=6 bash scripts/gpu-occupancy.sh compile ) &
vk=$!
OUT=$out/cuda OCC_SETS=$CUDA_SETS OCC_NOGREEKS=1 OCC_JOBS=10 bash scripts/gpu-occupancy.sh compile
echo "cuda compiled at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
OUT=$out/cuda OCC_SETS=$CUDA_SETS OCC_NOGREEKS=1 OCC_PATHS=4000000 bash scripts/gpu-occupancy.sh time
echo "cuda timed at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
wait $vk
echo "vulkan compiled at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
