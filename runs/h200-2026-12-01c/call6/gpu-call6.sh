#!/usr/bin/env bash
# Session 5, call 6 (the last): JAX, the hand-written kernel and tapelab in one call. cuda with its fastest
# knobs (all same-bits except paths per lane and approximate math), Vulkan with the defaults; then ncu.
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
mkdir -p "$out/compile"
( OUT=$out/compile OCC_ENGINE=vulkan OCC_SETS=- OCC_NOGREEKS=1 OCC_JOBS=4 bash scripts/gpu-occupancy.sh compile ) &
vk=$!
OUT=$out/compile OCC_SETS=$KS OCC_NOGREEKS=1 OCC_JOBS=6 bash scripts/gpu-occupancy.sh compile
stamp "cuda compiled"
wait $vk
stamp "vulkan compiled"
common=(--machine h200 --sweep-bin "$bin/scratch_sweep" --tapelab-bin "$bin/tapelab" --commit "$commit" --paths 1000000,4000000)
env "${K[@]}" timeout 240 python3 experiments/drivers/peers.py "${common[@]}" --engines cuda --out "$out/peers-cuda-h200.csv" \
    2>> "$out/peers-progress.txt"
stamp "peers cuda (with JAX and the hand-written kernel)"
timeout 150 python3 experiments/drivers/peers.py "${common[@]}" --engines vulkan --no-jax --no-handwritten \
    --out "$out/peers-vulkan-h200.csv" 2>> "$out/peers-progress.txt"
stamp "peers vulkan"
sections=(--section SpeedOfLight --section InstructionStats --section Occupancy --section LaunchStats --section WarpStateStats)
pc=(--product asian --steps 252 --fp32 --engine cuda --paths 1000000)
for spec in "plain-price --kernel plain --checkpoint off --no-greeks" "register-x1 --kernel register --checkpoint 16" \
            "register-x7 --kernel register --checkpoint 16 --ladder spot=97,98,99,100,101,102,103 --markets 7"; do
  read -r label flags <<<"$spec"
  [ $(( $(date +%s) - t0 )) -lt 500 ] || break
  echo "=== ncu: $label (${K[*]})" >> "$out/ncu.txt"
  env "${K[@]}" timeout 45 ncu --clock-control none --launch-count 1 "${sections[@]}" "$bin/tapelab" price "${pc[@]}" $flags \
      >> "$out/ncu.txt" 2>&1
done
stamp "ncu"
