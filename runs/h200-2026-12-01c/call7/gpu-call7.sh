#!/usr/bin/env bash
# Session 5, call 7: after pinned read-back and threaded sums: peers again (JAX same call), then window 12/24.
set -uo pipefail
out=$OUT
bin=$PWD/build/gpu/bin
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
export __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1 __GL_SHADER_DISK_CACHE_SIZE=4294967296
export __GL_SHADER_DISK_CACHE_PATH=/tmp/tapelab-nv-shader-cache
commit=$(cat build/gpu/COMMIT)
t0=$(date +%s)
stamp() { echo "$1 at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"; }
K=(TAPELAB_PATHS_PER_LANE=1 TAPELAB_KAHAN_LOCAL=0 TAPELAB_CUDA_MIN_BLOCKS=6 TAPELAB_CUDA_APPROX_MATH=1
   TAPELAB_QUANTILE_SELECT=1 TAPELAB_CUDA_OUTLINE_DRAWS=1)
KS=$(IFS=+; echo "${K[*]#TAPELAB_}" | sed 's/ TAPELAB_/+/g; s/ /+/g')
mkdir -p "$out/compile" "$out/seg12" "$out/seg24"
( OUT=$out/compile OCC_ENGINE=vulkan OCC_SETS=- OCC_NOGREEKS=1 OCC_JOBS=4 bash scripts/gpu-occupancy.sh compile ) &
vk=$!
( OUT=$out/seg12 OCC_SETS=$KS OCC_EXTRA='--checkpoint 12' OCC_JOBS=2 bash scripts/gpu-occupancy.sh compile ) &
( OUT=$out/seg24 OCC_SETS=$KS OCC_EXTRA='--checkpoint 24' OCC_JOBS=2 bash scripts/gpu-occupancy.sh compile ) &
OUT=$out/compile OCC_SETS=$KS OCC_NOGREEKS=1 OCC_JOBS=4 bash scripts/gpu-occupancy.sh compile
stamp "cuda compiled"
wait
stamp "all compiled"
common=(--machine h200 --sweep-bin "$bin/scratch_sweep" --tapelab-bin "$bin/tapelab" --commit "$commit" --paths 1000000,4000000)
env "${K[@]}" timeout 200 python3 experiments/drivers/peers.py "${common[@]}" --engines cuda --out "$out/peers-cuda-h200.csv" \
    2>> "$out/peers-progress.txt"
stamp "peers cuda (with JAX and the hand-written kernel)"
timeout 120 python3 experiments/drivers/peers.py "${common[@]}" --engines vulkan --no-jax --no-handwritten \
    --out "$out/peers-vulkan-h200.csv" 2>> "$out/peers-progress.txt"
stamp "peers vulkan"
for s in 12 24; do
  OUT=$out/seg$s OCC_SETS=$KS OCC_EXTRA="--checkpoint $s" OCC_PATHS='4000000 1000000' timeout 60 bash scripts/gpu-occupancy.sh time
done
stamp "segments"
