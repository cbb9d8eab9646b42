#!/usr/bin/env bash
# Session 9, call 4: the reduction as four warps (one per scheduler) against call 3's one warp
# (6c69f43's binary), beside the next kernel, and behind each kernel; gpu_kernels --reps 9 in
# separate processes, four rounds (call 3: beside with one warp ran 1,786-1,904 at 4M by process,
# behind 1,846-1,861); the CUDA tests on the new reduction; the peers with the faster placement.
set -uo pipefail
source scripts/gpu-call-lib.sh 4
sample_clocks
S2=PATHS_PER_LANE=1+KAHAN_LOCAL=0+APPROX_MATH=1+QUANTILE_SELECT=1+MARKET_LOOP=1+CUDA_OUTLINE_DRAWS=0+CUDA_MIN_BLOCKS=10+STORE_DRAWS=1
old=$PWD/build/gpu/old
mkdir -p "$out/cuda" "$out/old"
( timeout 180 "$bin/test_cuda_nvrtc" --gtest_filter='CudaRun.*' --gtest_brief=1 > "$out/test_cuda_nvrtc.txt" 2>&1; echo "exit $?" >> "$out/test_cuda_nvrtc.txt"
  timeout 60 "$bin/test_api_split" --gtest_filter='*cuda*' > "$out/test_api_split.txt" 2>&1; echo "exit $?" >> "$out/test_api_split.txt"
  TAPELAB_PROPERTY_SECONDS=30 timeout 100 "$bin/tapelab_properties" --gtest_filter='*Exact*/cuda' --gtest_brief=1 \
    > "$out/properties-cuda.txt" 2>&1; echo "exit $?" >> "$out/properties-cuda.txt" ) &
tests=$!
OUT=$out/cuda OCC_SETS="$S2" OCC_JOBS=1 timeout 170 bash scripts/gpu-occupancy.sh compile &
c1=$!
OCC_BIN=$old OUT=$out/old OCC_SETS="$S2" OCC_JOBS=1 timeout 170 bash scripts/gpu-occupancy.sh compile &
c2=$!
wait $c1 $c2
stamp "compiled"
wait $tests
stamp "tests"
mapfile -t K < <(knobs "$S2")
G=(--engine cuda --markets 7 --kinds register --segments 16 --paths 1000000,4000000 --greeks on --reps 9)
for round in 1 2 3 4; do
  echo "=== round $round: four warps beside" >> "$out/ab.txt"
  env "${K[@]}" timeout 40 "$bin/gpu_kernels" "${G[@]}" >> "$out/ab.txt" 2>&1
  echo "=== round $round: four warps behind" >> "$out/ab.txt"
  env "${K[@]}" TAPELAB_CUDA_SUMS_BESIDE=0 timeout 40 "$bin/gpu_kernels" "${G[@]}" >> "$out/ab.txt" 2>&1
  echo "=== round $round: one warp beside" >> "$out/ab.txt"
  env "${K[@]}" timeout 40 "$old/gpu_kernels" "${G[@]}" >> "$out/ab.txt" 2>&1
done
stamp "a/b"
awk '/^=== round/ { set = $4 "-" $6 } $1 == "register" && $4 == 7 && $5 == "on" { print set, $3, $11 }' "$out/ab.txt" | sort > "$out/ab-summary.txt"
best=$(awk '/^=== round/ { set = $4 "-" $6 } $1 == "register" && $4 == 7 && $5 == "on" && set ~ /^four/ { s[set] += $11; n[set]++ }
  END { for (k in s) print s[k] / n[k], k }' "$out/ab.txt" | sort -g | tail -1 | awk '{print $2}')
echo "faster with four warps: ${best:-unknown}" | tee -a "$out/timeline.txt"
extra=(); [ "$best" = four-behind ] && extra=(TAPELAB_CUDA_SUMS_BESIDE=0)
common=(--machine h200 --sweep-bin "$bin/scratch_sweep" --tapelab-bin "$bin/tapelab" --commit "$commit" --paths 1000000,4000000)
env "${K[@]}" "${extra[@]}" timeout 170 python3 experiments/drivers/peers.py "${common[@]}" --engines cuda --out "$out/peers-cuda-h200.csv" \
    2>> "$out/peers-progress.txt"
stamp "peers"
