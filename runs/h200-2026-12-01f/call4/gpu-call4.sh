#!/usr/bin/env bash
# Session 8, call 4: the reduction now runs behind each kernel on its stream, its chain unrolled (call 3: beside the next
# kernel on the copy stream it slowed that kernel by 0.85-1 ms at 4M; device sums 1,533-1,806 at 1M
# against the host 1,482-1,672, at 4M no better). Last call: tests, cuda properties, timelines,
# the market loop with and without stored draws, device and host sums; the reduction under Nsight;
# the peers with the best.
set -uo pipefail
out=/tmp/res4; mkdir -p $out
bin=$PWD/build/gpu/bin
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
export TAPELAB_CACHE_DIR=/tmp/tapelab-cache
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version,power.limit --format=csv > "$out/gpu.txt"
commit=$(cat build/gpu/COMMIT); echo "$commit" >> "$out/gpu.txt"
t0=$(date +%s)
stamp() { echo "$1 at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"; }
B=PATHS_PER_LANE=1+KAHAN_LOCAL=0+APPROX_MATH=1+QUANTILE_SELECT=1+MARKET_LOOP=1+CUDA_OUTLINE_DRAWS=0+CUDA_MIN_BLOCKS=10
S1=$B; S2=$B+STORE_DRAWS=1
KS="$S1 $S2 $S1+DEVICE_SUMS=0 $S2+DEVICE_SUMS=0"
mkdir -p "$out/cuda"
( timeout 200 "$bin/test_cuda_nvrtc" --gtest_brief=1 > "$out/test_cuda_nvrtc.txt" 2>&1; echo "exit $?" >> "$out/test_cuda_nvrtc.txt"
  timeout 60 "$bin/test_api_split" --gtest_filter='*cuda*' > "$out/test_api_split.txt" 2>&1; echo "exit $?" >> "$out/test_api_split.txt"
  TAPELAB_PROPERTY_SECONDS=40 timeout 120 "$bin/tapelab_properties" --gtest_filter='*Exact*/cuda' --gtest_brief=1 \
    > "$out/properties-cuda.txt" 2>&1; echo "exit $?" >> "$out/properties-cuda.txt" ) &
tests=$!
OUT=$out/cuda OCC_SETS="$S1 $S2" OCC_JOBS=2 timeout 150 bash scripts/gpu-occupancy.sh compile
stamp "compiled"
P=(price --product asian --steps 252 --fp32 --engine cuda --kernel register --checkpoint 16
   --ladder spot=97,98,99,100,101,102,103 --markets 7)
for s in $S2 $S2+DEVICE_SUMS=0 $S1; do
  mapfile -t K < <(tr '+' '\n' <<<"$s" | sed 's/^/TAPELAB_/')
  for n in 1000000 4000000; do
    echo "=== timeline $n paths (${K[*]})" >> "$out/timeline-runs.txt"
    env "${K[@]}" TAPELAB_TIMELINE=1 timeout 30 "$bin/tapelab" "${P[@]}" --paths $n >> "$out/timeline-runs.txt" 2>&1
  done
done
stamp "timelines"
wait $tests
stamp "tests"
for round in 1 2; do
  OUT=$out/cuda OCC_SETS="$KS" OCC_PATHS='1000000 4000000' timeout 90 bash scripts/gpu-occupancy.sh time
done
stamp "timed"
mapfile -t K < <(tr '+' '\n' <<<"$S2" | sed 's/^/TAPELAB_/')
echo "=== ncu: tapelab_reduce of a 4M ladder (${K[*]})" >> "$out/ncu.txt"
timeout 40 ncu --clock-control none -k tapelab_reduce --launch-count 2 --section SpeedOfLight --section LaunchStats env "${K[@]}" "$bin/tapelab" "${P[@]}" --paths 4000000 >> "$out/ncu.txt" 2>&1
stamp "ncu"
best=$(awk '$1 == 4000000 && $2 ~ /MIN_BLOCKS/ { s[$2] += $4; n[$2]++ } END { for (k in s) print s[k] / n[k], k }' \
    "$out/cuda/occupancy-summary.txt" | sort -g | tail -1 | awk '{print $2}')
[ -n "$best" ] || best=$S2
echo "best at 4M: $best" | tee -a "$out/timeline.txt"
mapfile -t K < <(tr '+' '\n' <<<"$best" | sed 's/^/TAPELAB_/')
common=(--machine h200 --sweep-bin "$bin/scratch_sweep" --tapelab-bin "$bin/tapelab" --commit "$commit" --paths 1000000,4000000)
env "${K[@]}" timeout 150 python3 experiments/drivers/peers.py "${common[@]}" --engines cuda --out "$out/peers-cuda-h200.csv" \
    2>> "$out/peers-progress.txt"
stamp "peers"
