#!/usr/bin/env bash
set -uo pipefail
out=$OUT
export __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1 __GL_SHADER_DISK_CACHE_SIZE=4294967296
export __GL_SHADER_DISK_CACHE_PATH=/tmp/tapelab-nv-shader-cache
t0=$(date +%s)
mkdir -p "$out/vulkan" "$out/cuda"
CUDA_SETS='PATHS_PER_LANE=1+KAHAN_LOCAL=0+CUDA_MIN_BLOCKS=8+CUDA_APPROX_MATH=1 PATHS_PER_LANE=1+KAHAN_LOCAL=0+CUDA_MIN_BLOCKS=5+CUDA_APPROX_MATH=1 PATHS_PER_LANE=1+KAHAN_LOCAL=0+CUDA_MIN_BLOCKS=7+CUDA_APPROX_MATH=1 PATHS_PER_LANE=1+KAHAN_LOCAL=0+CUDA_APPROX_MATH=1 PATHS_PER_LANE=2+KAHAN_LOCAL=0+CUDA_MIN_BLOCKS=6+CUDA_APPROX_MATH=1 PATHS_PER_LANE=1+CUDA_MIN_BLOCKS=6+CUDA_APPROX_MATH=1'
( OUT=$out/cuda OCC_SETS=$CUDA_SETS OCC_NOGREEKS=1 OCC_JOBS=12 bash scripts/gpu-occupancy.sh compile ) &
cc=$!
OUT=$out/vulkan OCC_ENGINE=vulkan OCC_SETS='- PATHS_PER_LANE=1 PATHS_PER_LANE=2' OCC_NOGREEKS=1 OCC_PATHS='4000000 1000000' bash scripts/gpu-occupancy.sh time
echo "vulkan timed at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
wait $cc
echo "cuda compiled at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
OUT=$out/cuda OCC_SETS=$CUDA_SETS OCC_NOGREEKS=1 OCC_PATHS=4000000 bash scripts/gpu-occupancy.sh time
echo "cuda timed at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
