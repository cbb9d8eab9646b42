#!/usr/bin/env bash
# Session 5, call 5: quantile by selection and outlined draws, cuda (on the approx/1-path/min-blocks-6 base) and Vulkan.
set -uo pipefail
out=$OUT
export __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1 __GL_SHADER_DISK_CACHE_SIZE=4294967296
export __GL_SHADER_DISK_CACHE_PATH=/tmp/tapelab-nv-shader-cache
cat build/gpu/COMMIT > "$out/commit.txt" 2>/dev/null
t0=$(date +%s)
B=PATHS_PER_LANE=1+KAHAN_LOCAL=0+CUDA_MIN_BLOCKS=6+CUDA_APPROX_MATH=1
CSETS="$B $B+QUANTILE_SELECT=1 $B+CUDA_OUTLINE_DRAWS=1 $B+QUANTILE_SELECT=1+CUDA_OUTLINE_DRAWS=1"
VSETS='- QUANTILE_SELECT=1'
mkdir -p "$out/cuda" "$out/vulkan"
( OUT=$out/vulkan OCC_ENGINE=vulkan OCC_SETS=$VSETS OCC_NOGREEKS=1 OCC_JOBS=4 bash scripts/gpu-occupancy.sh compile ) &
vk=$!
OUT=$out/cuda OCC_SETS=$CSETS OCC_NOGREEKS=1 OCC_JOBS=10 bash scripts/gpu-occupancy.sh compile
echo "cuda compiled at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
wait $vk
echo "vulkan compiled at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
OUT=$out/cuda OCC_SETS=$CSETS OCC_NOGREEKS=1 OCC_PATHS='4000000 1000000' bash scripts/gpu-occupancy.sh time
OUT=$out/vulkan OCC_ENGINE=vulkan OCC_SETS=$VSETS OCC_NOGREEKS=1 OCC_PATHS='4000000 1000000' bash scripts/gpu-occupancy.sh time
echo "timed at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
