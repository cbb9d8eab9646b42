#!/usr/bin/env bash
# Session 6, call 6: CUDA's pipelined read-back (up to 4 dispatches in flight, each's partials copied
# back asynchronously and added while the next run): the CUDA tests and the cuda exactness
# properties (chunking included) first, then the 7-market ladder at 1M and 4M (fastest knobs,
# price only too), then the peers with JAX in the same call.
set -uo pipefail
out=/tmp/res6; mkdir -p $out
bin=$PWD/build/gpu/bin
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$out/gpu.txt"
commit=$(cat build/gpu/COMMIT); echo "$commit" >> "$out/gpu.txt"
t0=$(date +%s)
stamp() { echo "$1 at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"; }
K=(TAPELAB_PATHS_PER_LANE=1 TAPELAB_KAHAN_LOCAL=0 TAPELAB_CUDA_MIN_BLOCKS=6 TAPELAB_APPROX_MATH=1
   TAPELAB_QUANTILE_SELECT=1 TAPELAB_CUDA_OUTLINE_DRAWS=1)
KS=PATHS_PER_LANE=1+KAHAN_LOCAL=0+CUDA_MIN_BLOCKS=6+APPROX_MATH=1+QUANTILE_SELECT=1+CUDA_OUTLINE_DRAWS=1
mkdir -p "$out/cuda"
( timeout 150 "$bin/test_cuda_nvrtc" --gtest_brief=1 > "$out/test_cuda_nvrtc.txt" 2>&1; echo "exit $?" >> "$out/test_cuda_nvrtc.txt" ) &
( TAPELAB_PROPERTY_SECONDS=70 timeout 150 "$bin/tapelab_properties" --gtest_filter='*Exact*/cuda' --gtest_brief=1 \
    > "$out/properties-cuda.txt" 2>&1; echo "exit $?" >> "$out/properties-cuda.txt" ) &
OUT=$out/cuda OCC_SETS=$KS OCC_NOGREEKS=1 OCC_JOBS=2 bash scripts/gpu-occupancy.sh compile
wait
stamp "tests and compiles"
OUT=$out/cuda OCC_SETS=$KS OCC_NOGREEKS=1 OCC_PATHS='1000000 1000000 1000000 4000000 4000000' timeout 90 bash scripts/gpu-occupancy.sh time
stamp "timed"
common=(--machine h200 --sweep-bin "$bin/scratch_sweep" --tapelab-bin "$bin/tapelab" --commit "$commit" --paths 1000000,4000000)
env "${K[@]}" timeout 150 python3 experiments/drivers/peers.py "${common[@]}" --engines cuda --out "$out/peers-cuda-h200.csv" \
    2>> "$out/peers-progress.txt"
stamp "peers cuda (with JAX and the hand-written kernel)"
