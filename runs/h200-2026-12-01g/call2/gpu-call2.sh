#!/usr/bin/env bash
# Session 9, call 2: the final binary (shared constants and reductions beside at the greatest
# priority by default) against last session's (15de332) and against each default turned off, in
# one call; the tests; the peers with JAX in the same call.
set -uo pipefail
source scripts/gpu-call-lib.sh 2
sample_clocks
S2=PATHS_PER_LANE=1+KAHAN_LOCAL=0+APPROX_MATH=1+QUANTILE_SELECT=1+MARKET_LOOP=1+CUDA_OUTLINE_DRAWS=0+CUDA_MIN_BLOCKS=10+STORE_DRAWS=1
mkdir -p "$out/cuda" "$out/old"
( timeout 220 "$bin/test_cuda_nvrtc" --gtest_brief=1 > "$out/test_cuda_nvrtc.txt" 2>&1; echo "exit $?" >> "$out/test_cuda_nvrtc.txt"
  timeout 60 "$bin/test_api_split" --gtest_filter='*cuda*' > "$out/test_api_split.txt" 2>&1; echo "exit $?" >> "$out/test_api_split.txt"
  TAPELAB_PROPERTY_SECONDS=40 timeout 120 "$bin/tapelab_properties" --gtest_filter='*Exact*/cuda' --gtest_brief=1 \
    > "$out/properties-cuda.txt" 2>&1; echo "exit $?" >> "$out/properties-cuda.txt" ) &
tests=$!
OUT=$out/cuda OCC_SETS="$S2 $S2+SHARED_CONSTANTS=0" OCC_JOBS=2 timeout 170 bash scripts/gpu-occupancy.sh compile &
c1=$!
OCC_BIN=$PWD/build/gpu/old OUT=$out/old OCC_SETS="$S2" OCC_JOBS=1 timeout 170 bash scripts/gpu-occupancy.sh compile &
c2=$!
wait $c1 $c2
stamp "compiled"
wait $tests
stamp "tests"
P=(price --product asian --steps 252 --fp32 --engine cuda --kernel register --checkpoint 16
   --ladder spot=97,98,99,100,101,102,103 --markets 7)
for s in $S2 $S2+CUDA_SUMS_BESIDE=0; do
  mapfile -t K < <(knobs "$s")
  for n in 1000000 4000000; do
    echo "=== timeline $n paths (${K[*]})" >> "$out/timeline-runs.txt"
    env "${K[@]}" TAPELAB_TIMELINE=1 timeout 30 "$bin/tapelab" "${P[@]}" --paths $n >> "$out/timeline-runs.txt" 2>&1
  done
done
stamp "timelines"
for round in 1 2; do
  OCC_BIN=$PWD/build/gpu/old OUT=$out/old OCC_SETS="$S2" OCC_PATHS='1000000 4000000' timeout 40 bash scripts/gpu-occupancy.sh time
  OUT=$out/cuda OCC_SETS="$S2 $S2+CUDA_SUMS_BESIDE=0 $S2+SHARED_CONSTANTS=0" OCC_PATHS='1000000 4000000' timeout 100 bash scripts/gpu-occupancy.sh time
done
stamp "timed"
mapfile -t K < <(knobs "$S2")
common=(--machine h200 --sweep-bin "$bin/scratch_sweep" --tapelab-bin "$bin/tapelab" --commit "$commit" --paths 1000000,4000000)
env "${K[@]}" timeout 170 python3 experiments/drivers/peers.py "${common[@]}" --engines cuda --out "$out/peers-cuda-h200.csv" \
    2>> "$out/peers-progress.txt"
stamp "peers"
