# What every call script on the lent H200 starts with (DEVELOPERS.md, "one script per call"); source it
# after scripts/gpu-env.sh:  source scripts/gpu-call-lib.sh K   (K: the call's number).
# Sets out=/tmp/resK (a fresh folder: a warm machine keeps /tmp), bin (the packed binaries), commit
# (build/gpu/COMMIT), writes $out/gpu.txt (GPU, clocks, driver, power limit, commit), and defines
#   stamp WHAT        "WHAT at N s" into $out/timeline.txt (seconds since sourcing)
#   knobs SET         a '+'-joined knob set without the TAPELAB_ prefix (gpu-occupancy.sh's form) as
#                     lines TAPELAB_X=V:  mapfile -t K < <(knobs "$SET"); env "${K[@]}" ...
#   sample_clocks     nvidia-smi's SM clock, power and clock-event reasons every 100 ms into
#                     $out/smi.csv, in the background (killed when the script exits)
#   cuda_tests [FILTER]  in the background: test_cuda_nvrtc (gtest FILTER, default all), test_api_split
#                     on cuda and the cuda exactness properties (40 s), each into $out/NAME.txt ending
#                     "exit N"; `wait $cuda_tests_pid` before timing anything
out=/tmp/res${1:?gpu-call-lib.sh: give the call number}
mkdir -p "$out"
bin=$PWD/build/gpu/bin
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
export TAPELAB_CACHE_DIR=${TAPELAB_CACHE_DIR:-/tmp/tapelab-cache}
commit=$(cat build/gpu/COMMIT)
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version,power.limit --format=csv > "$out/gpu.txt"
echo "$commit" >> "$out/gpu.txt"
t0=$(date +%s)
stamp() { echo "$1 at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"; }
knobs() { tr '+' '\n' <<<"$1" | sed 's/^/TAPELAB_/'; }
sample_clocks() {
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active \
      --format=csv -lms 100 > "$out/smi.csv" 2>&1 &
  trap "kill $! 2>/dev/null" EXIT
}
cuda_tests() {
  ( timeout 280 "$bin/test_cuda_nvrtc" --gtest_filter="${1:-*}" --gtest_brief=1 > "$out/test_cuda_nvrtc.txt" 2>&1
    echo "exit $?" >> "$out/test_cuda_nvrtc.txt"
    timeout 60 "$bin/test_api_split" --gtest_filter='*cuda*' > "$out/test_api_split.txt" 2>&1
    echo "exit $?" >> "$out/test_api_split.txt"
    TAPELAB_PROPERTY_SECONDS=40 timeout 120 "$bin/tapelab_properties" --gtest_filter='*Exact*/cuda' --gtest_brief=1 \
      > "$out/properties-cuda.txt" 2>&1
    echo "exit $?" >> "$out/properties-cuda.txt" ) &
  cuda_tests_pid=$!
}
