#!/usr/bin/env bash
# Session 6, call 3: draws version 3 (fused Horner steps in the quantile) timed: cuda fastest knobs
# (x7, x1, price) and stored draws (x1); Vulkan defaults, quantile by selection (price), 1 path per
# lane + stored draws; OpenCL approximate math with selection (price) and 1 path per lane. Then
# whether each GPU driver fuses fma: draws-252.tape, 1000 paths, fp32, on every engine.
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
VK_SETS='- QUANTILE_SELECT=1 PATHS_PER_LANE=1+STORE_DRAWS=1'
CL_SETS="APPROX_MATH=1+QUANTILE_SELECT=1 APPROX_MATH=1+PATHS_PER_LANE=1+KAHAN_LOCAL=0"
t0=$(date +%s)
mkdir -p "$out/vulkan" "$out/cuda" "$out/opencl"
( OUT=$out/vulkan OCC_ENGINE=vulkan OCC_SETS=$VK_SETS OCC_NOGREEKS=1 OCC_JOBS=4 bash scripts/gpu-occupancy.sh compile ) &
vk=$!
( OUT=$out/opencl OCC_ENGINE=opencl OCC_SETS=$CL_SETS OCC_NOGREEKS=1 OCC_JOBS=3 bash scripts/gpu-occupancy.sh compile ) &
cl=$!
OUT=$out/cuda OCC_SETS=$CUDA_SETS OCC_NOGREEKS=1 OCC_JOBS=4 bash scripts/gpu-occupancy.sh compile
echo "cuda compiled at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
wait $cl; echo "opencl compiled at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
wait $vk; echo "vulkan compiled at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
OUT=$out/cuda OCC_SETS=$CUDA_SETS OCC_NOGREEKS=1 OCC_PATHS=4000000 bash scripts/gpu-occupancy.sh time
echo "cuda timed at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
OUT=$out/opencl OCC_ENGINE=opencl OCC_SETS=$CL_SETS OCC_NOGREEKS=1 OCC_PATHS=4000000 bash scripts/gpu-occupancy.sh time
echo "opencl timed at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
OUT=$out/vulkan OCC_ENGINE=vulkan OCC_SETS=$VK_SETS OCC_NOGREEKS=1 OCC_PATHS=4000000 bash scripts/gpu-occupancy.sh time
echo "vulkan timed at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
for e in reference-f32 cuda opencl vulkan; do
  echo "=== fma probe: $e" >> "$out/fma-probe.txt"
  timeout 60 "$bin/tapelab" run experiments/tapes/draws-252.tape --engine $e --fp32 --kernel plain --checkpoint off \
      --paths 1000 --no-greeks >> "$out/fma-probe.txt" 2>&1
done
echo "probed at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"
