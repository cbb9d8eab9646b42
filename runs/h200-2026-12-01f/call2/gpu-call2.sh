#!/usr/bin/env bash
# Session 8, call 2: 556f37a adds each dispatch's partials on the device (tapelab_reduce, on the copy
# stream behind each kernel; call 1's timeline: the host's sum of the last dispatch, 0.2 ms at 1M and
# 1.0 ms at 4M, came after the last kernel). The CUDA tests (device sums against the host's), the
# split test on cuda, the cuda exactness properties; timelines; call 6's binary against this one on
# the market loop with and without stored draws (call 1: stored draws 1,659-1,698 against 1,478-1,487);
# stored draws at bounds 10, 11, 12; Nsight on the stored-draws kernel; the peers with the best.
set -uo pipefail
out=/tmp/res2; mkdir -p $out
bin=$PWD/build/gpu/bin
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
export TAPELAB_CACHE_DIR=/tmp/tapelab-cache
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version,power.limit --format=csv > "$out/gpu.txt"
commit=$(cat build/gpu/COMMIT); echo "$commit" >> "$out/gpu.txt"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active \
    --format=csv -lms 200 > "$out/smi.csv" 2>&1 &
smi=$!
t0=$(date +%s)
stamp() { echo "$1 at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"; }
B=PATHS_PER_LANE=1+KAHAN_LOCAL=0+APPROX_MATH=1+QUANTILE_SELECT=1+MARKET_LOOP=1+CUDA_OUTLINE_DRAWS=0
S1=$B+CUDA_MIN_BLOCKS=10; S2=$B+CUDA_MIN_BLOCKS=10+STORE_DRAWS=1
KS="$S1 $S2 $B+CUDA_MIN_BLOCKS=11+STORE_DRAWS=1 $B+CUDA_MIN_BLOCKS=12+STORE_DRAWS=1"
mkdir -p "$out/cuda" "$out/old"
( timeout 200 "$bin/test_cuda_nvrtc" --gtest_brief=1 > "$out/test_cuda_nvrtc.txt" 2>&1; echo "exit $?" >> "$out/test_cuda_nvrtc.txt"
  timeout 60 "$bin/test_api_split" --gtest_filter='*cuda*' > "$out/test_api_split.txt" 2>&1; echo "exit $?" >> "$out/test_api_split.txt" ) &
( TAPELAB_PROPERTY_SECONDS=70 timeout 200 "$bin/tapelab_properties" --gtest_filter='*Exact*/cuda' --gtest_brief=1 \
    > "$out/properties-cuda.txt" 2>&1; echo "exit $?" >> "$out/properties-cuda.txt" ) &
OUT=$out/cuda OCC_SETS="$KS" OCC_JOBS=4 timeout 150 bash scripts/gpu-occupancy.sh compile
mkdir -p /tmp/oldbin && ln -sf "$bin/tapelab-c5c9f562499e" /tmp/oldbin/tapelab
OUT=$out/old OCC_BIN=/tmp/oldbin OCC_SETS="$S2" OCC_JOBS=2 timeout 60 bash scripts/gpu-occupancy.sh compile
stamp "compiled"
wait $(jobs -p | grep -v "^$smi$") 2>/dev/null
stamp "tests"
P=(price --product asian --steps 252 --fp32 --engine cuda --kernel register --checkpoint 16
   --ladder spot=97,98,99,100,101,102,103 --markets 7)
for s in $S1 $S2; do
  mapfile -t K < <(tr '+' '\n' <<<"$s" | sed 's/^/TAPELAB_/')
  for n in 1000000 4000000; do
    echo "=== timeline $n paths (${K[*]})" >> "$out/timeline-runs.txt"
    env "${K[@]}" TAPELAB_TIMELINE=1 timeout 30 "$bin/tapelab" "${P[@]}" --paths $n >> "$out/timeline-runs.txt" 2>&1
  done
done
stamp "timelines"
for round in 1 2; do
  OUT=$out/old OCC_BIN=/tmp/oldbin OCC_SETS="$S1 $S2" OCC_PATHS='1000000 4000000' timeout 60 bash scripts/gpu-occupancy.sh time
  OUT=$out/cuda OCC_SETS="$KS" OCC_PATHS='1000000 4000000' timeout 90 bash scripts/gpu-occupancy.sh time
done
stamp "timed"
best=$(awk '$1 == 4000000 && $2 ~ /MIN_BLOCKS/ { s[$2] += $4; n[$2]++ } END { for (k in s) print s[k] / n[k], k }' \
    "$out/cuda/occupancy-summary.txt" | sort -g | tail -1 | awk '{print $2}')
[ -n "$best" ] || best=$S2
echo "best at 4M: $best" | tee -a "$out/timeline.txt"
mapfile -t K < <(tr '+' '\n' <<<"$best" | sed 's/^/TAPELAB_/')
sections=(--section SpeedOfLight --section InstructionStats --section Occupancy --section LaunchStats --section WarpStateStats
          --section MemoryWorkloadAnalysis --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio')
echo "=== ncu: register-x7 1M (${K[*]})" >> "$out/ncu.txt"
timeout 40 ncu --clock-control none --launch-count 1 -k tapelab_kernel "${sections[@]}" env "${K[@]}" "$bin/tapelab" "${P[@]}" --paths 1000000 >> "$out/ncu.txt" 2>&1
stamp "ncu"
common=(--machine h200 --sweep-bin "$bin/scratch_sweep" --tapelab-bin "$bin/tapelab" --commit "$commit" --paths 1000000,4000000)
env "${K[@]}" timeout 150 python3 experiments/drivers/peers.py "${common[@]}" --engines cuda --out "$out/peers-cuda-h200.csv" \
    2>> "$out/peers-progress.txt"
stamp "peers"
kill $smi
