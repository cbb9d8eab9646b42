#!/usr/bin/env bash
# Session 8, call 1: where the 9-10% between the 7-market kernel (Nsight: 1.44 ms per 4 waves) and
# the ladder's time goes. 879c3be adds TAPELAB_TIMELINE (device events around each dispatch's kernel;
# price prints kernels, gaps, when partials reach the host, the host sums) and copies the partials
# back on a second stream (before: on the kernels' stream, between one kernel and the next). Here:
# the CUDA tests and cuda exactness properties on the shared adjoint arrays (never run on the H200);
# SM clock and power sampled by nvidia-smi through the whole call; the timeline at 1M and 4M; the
# ladder by compare with call 6's binary (tapelab-c5c9f562499e, copy on the kernels' stream) and
# with this one; stored draws on the market loop (bounds 10 and 8); ncu per dispatch; the peers.
set -uo pipefail
out=/tmp/res1; mkdir -p $out
bin=$PWD/build/gpu/bin
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
export TAPELAB_CACHE_DIR=/tmp/tapelab-cache
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version,power.limit --format=csv > "$out/gpu.txt"
commit=$(cat build/gpu/COMMIT); echo "$commit" >> "$out/gpu.txt"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active \
    --format=csv -lms 100 > "$out/smi.csv" 2>&1 &
smi=$!
t0=$(date +%s)
stamp() { echo "$1 at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"; }
B=PATHS_PER_LANE=1+KAHAN_LOCAL=0+APPROX_MATH=1+QUANTILE_SELECT=1+MARKET_LOOP=1+CUDA_OUTLINE_DRAWS=0
KS="$B+CUDA_MIN_BLOCKS=10 $B+CUDA_MIN_BLOCKS=10+STORE_DRAWS=1 $B+CUDA_MIN_BLOCKS=8+STORE_DRAWS=1"
mkdir -p "$out/cuda" "$out/old"
( timeout 200 "$bin/test_cuda_nvrtc" --gtest_brief=1 > "$out/test_cuda_nvrtc.txt" 2>&1; echo "exit $?" >> "$out/test_cuda_nvrtc.txt" ) &
( TAPELAB_PROPERTY_SECONDS=70 timeout 200 "$bin/tapelab_properties" --gtest_filter='*Exact*/cuda' --gtest_brief=1 \
    > "$out/properties-cuda.txt" 2>&1; echo "exit $?" >> "$out/properties-cuda.txt" ) &
OUT=$out/cuda OCC_SETS="$KS" OCC_JOBS=3 timeout 150 bash scripts/gpu-occupancy.sh compile
stamp "compiled"
wait $(jobs -p | grep -v "^$smi$") 2>/dev/null
stamp "tests"
mapfile -t K < <(tr '+' '\n' <<<"$B+CUDA_MIN_BLOCKS=10" | sed 's/^/TAPELAB_/')
P=(price --product asian --steps 252 --fp32 --engine cuda --kernel register --checkpoint 16
   --ladder spot=97,98,99,100,101,102,103 --markets 7)
for n in 1000000 4000000; do
  for rep in 1 2 3; do
    echo "=== timeline $n paths, run $rep (${K[*]})" >> "$out/timeline-runs.txt"
    env "${K[@]}" TAPELAB_TIMELINE=1 timeout 30 "$bin/tapelab" "${P[@]}" --paths $n >> "$out/timeline-runs.txt" 2>&1
    env "${K[@]}" TAPELAB_TIMELINE=1 timeout 30 "$bin/tapelab" "${P[@]}" --paths $n --json > "$out/timeline-$n-$rep.json" 2>&1
  done
done
stamp "timelines"
mkdir -p /tmp/oldbin && ln -sf "$bin/tapelab-c5c9f562499e" /tmp/oldbin/tapelab
for round in 1 2; do
  OUT=$out/old OCC_BIN=/tmp/oldbin OCC_SETS="$B+CUDA_MIN_BLOCKS=10" OCC_PATHS='1000000 4000000' timeout 60 bash scripts/gpu-occupancy.sh time
  OUT=$out/cuda OCC_SETS="$KS" OCC_PATHS='1000000 4000000' timeout 90 bash scripts/gpu-occupancy.sh time
done
stamp "timed"
echo "=== ncu per dispatch: register-x7 1M (${K[*]})" >> "$out/ncu.txt"
timeout 40 ncu --clock-control none --launch-count 3 --section SpeedOfLight --section LaunchStats env "${K[@]}" "$bin/tapelab" "${P[@]}" --paths 1000000 >> "$out/ncu.txt" 2>&1
stamp "ncu"
common=(--machine h200 --sweep-bin "$bin/scratch_sweep" --tapelab-bin "$bin/tapelab" --commit "$commit" --paths 1000000,4000000)
env "${K[@]}" timeout 150 python3 experiments/drivers/peers.py "${common[@]}" --engines cuda --out "$out/peers-cuda-h200.csv" \
    2>> "$out/peers-progress.txt"
stamp "peers"
kill $smi
