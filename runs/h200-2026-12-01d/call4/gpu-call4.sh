#!/usr/bin/env bash
# Session 6, call 4 (draws version 3): the peers in one call (JAX ladder, the hand-written kernel,
# tapelab cuda with its fastest knobs, Vulkan with its defaults); then cuda price only at 4 paths
# per lane with approximate math and selection, cuda stored draws (one market), OpenCL one market
# at 12 segments and with stored draws; Nsight Compute on cuda's price-only and stored-draws kernels.
set -uo pipefail
out=/tmp/res; mkdir -p $out
bin=$PWD/build/gpu/bin
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
export __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1 __GL_SHADER_DISK_CACHE_SIZE=4294967296
export __GL_SHADER_DISK_CACHE_PATH=/tmp/tapelab-nv-shader-cache
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$out/gpu.txt"
commit=$(cat build/gpu/COMMIT); echo "$commit" >> "$out/gpu.txt"
t0=$(date +%s)
stamp() { echo "$1 at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"; }
K=(TAPELAB_PATHS_PER_LANE=1 TAPELAB_KAHAN_LOCAL=0 TAPELAB_CUDA_MIN_BLOCKS=6 TAPELAB_APPROX_MATH=1
   TAPELAB_QUANTILE_SELECT=1 TAPELAB_CUDA_OUTLINE_DRAWS=1)
KS=PATHS_PER_LANE=1+KAHAN_LOCAL=0+CUDA_MIN_BLOCKS=6+APPROX_MATH=1+QUANTILE_SELECT=1+CUDA_OUTLINE_DRAWS=1
F=PATHS_PER_LANE=1+KAHAN_LOCAL=0+APPROX_MATH=1+QUANTILE_SELECT=1+CUDA_OUTLINE_DRAWS=1
EXTRA_CUDA="APPROX_MATH=1+QUANTILE_SELECT=1 $F+STORE_DRAWS=1"
C1=APPROX_MATH=1+PATHS_PER_LANE=1+KAHAN_LOCAL=0
mkdir -p "$out/compile" "$out/extra" "$out/opencl12" "$out/opencl"
( OUT=$out/compile OCC_ENGINE=vulkan OCC_SETS=- OCC_NOGREEKS=1 OCC_JOBS=4 bash scripts/gpu-occupancy.sh compile ) &
vk=$!
( OUT=$out/opencl12 OCC_ENGINE=opencl OCC_SETS=$C1 OCC_EXTRA='--checkpoint 12' OCC_JOBS=1 bash scripts/gpu-occupancy.sh compile;
  OUT=$out/opencl OCC_ENGINE=opencl OCC_SETS=$C1+STORE_DRAWS=1 OCC_JOBS=1 bash scripts/gpu-occupancy.sh compile ) &
cl=$!
OUT=$out/compile OCC_SETS=$KS OCC_NOGREEKS=1 OCC_JOBS=4 bash scripts/gpu-occupancy.sh compile
OUT=$out/extra OCC_SETS="$EXTRA_CUDA" OCC_NOGREEKS=1 OCC_JOBS=4 bash scripts/gpu-occupancy.sh compile
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
OUT=$out/extra OCC_SETS="$EXTRA_CUDA" OCC_NOGREEKS=1 OCC_PATHS=4000000 timeout 60 bash scripts/gpu-occupancy.sh time
OUT=$out/opencl12 OCC_ENGINE=opencl OCC_SETS=$C1 OCC_EXTRA='--checkpoint 12' OCC_PATHS=4000000 timeout 60 bash scripts/gpu-occupancy.sh time
OUT=$out/opencl OCC_ENGINE=opencl OCC_SETS=$C1+STORE_DRAWS=1 OCC_PATHS=4000000 timeout 60 bash scripts/gpu-occupancy.sh time
stamp "extra rows"
sections=(--section SpeedOfLight --section InstructionStats --section Occupancy --section LaunchStats)
KF=(TAPELAB_PATHS_PER_LANE=1 TAPELAB_KAHAN_LOCAL=0 TAPELAB_APPROX_MATH=1 TAPELAB_QUANTILE_SELECT=1 TAPELAB_CUDA_OUTLINE_DRAWS=1)
pc=(--product asian --steps 252 --engine cuda --fp32 --paths 1000000)
ncu1() { local label=$1; shift
  echo "=== ncu: $label" >> "$out/ncu.txt"
  env "$@" timeout 45 ncu --clock-control none --launch-count 1 "${sections[@]}" "$bin/tapelab" price "${pc[@]}" $NCU_FLAGS >> "$out/ncu.txt" 2>&1; }
NCU_FLAGS="--kernel plain --checkpoint off --no-greeks" ncu1 "plain, price only, 1 market (fastest knobs)" "${K[@]}"
NCU_FLAGS="--kernel register --checkpoint 16" ncu1 "register 16, 1 market, stored draws (fastest knobs, no min blocks)" "${KF[@]}" TAPELAB_STORE_DRAWS=1
NCU_FLAGS="--kernel register --checkpoint 16" ncu1 "register 16, 1 market (fastest knobs)" "${K[@]}"
stamp "ncu"
