#!/usr/bin/env bash
# The engines on the lent GPU, tuned and compared: the tuned defaults, the ladder at the IEEE contract beside
# JAX, the strategies and the zoo on a GPU, Nsight Compute on the headline kernels, the properties.
# Was scripts/gpu-issue34.sh (issue 34, "On the H200") until issue 51; the records of 2026-12-02b to
# 2026-12-05 cite it by that name and point at it with the commit they ran at
# (git show COMMIT:scripts/gpu-issue34.sh). Needs scripts/gpu-env.sh sourced first.
#   here:   ./scripts/gpu-fetch-runtime.sh (once); cmake --build --preset ci; ./scripts/gpu-pack.sh build/ci;
#           a dry run of the mechanics (cuda compile-only, lavapipe, PoCL, tiny jobs):
#               GPU_DRY=1 bash scripts/gpu/tune-and-compare.sh 0 tune
#   there:  carry [.gpu-runtime, build/gpu.tar.xz]; chain the calls (the machine stays warm 30 s, and with
#           it /tmp: the kernel caches, NVIDIA's shader cache and the tuning cache of the call before):
#           source scripts/gpu-env.sh; timeout 580 bash scripts/gpu/tune-and-compare.sh K MODE...;
#           tar czf $OUT/callK.tgz -C /tmp resK
# Modes (each step is skipped when less time is left than it needs; GPU_S, default 570 s, from the start;
# the modes quantile=gather and draws=prefill's tail queue went with version 3 of the draws:
# git show 255fb75:scripts/gpu-issue34.sh and e0cafe7:scripts/gpu-issue34.sh keep them; "(runs/...)"
# names the record a mode was written for):
#   tune        compile phase (tune --compile-only of every shortlist, side by side), then the timed tunes
#               (cuda x7/x1 at ieee and approx, opencl x7/x1, vulkan x7/x1, 4M paths), then compare with no
#               variables and --untuned on cuda, vulkan and opencl at 7 markets (its one-market-per-call
#               rows are the x1 jobs), then experiments/drivers/peers.py (JAX, the hand-written kernel,
#               tapelab at both contracts) at 1M and 4M
#   strategies  experiments/drivers/strategies.py on vulkan then cuda, 1 and 7 markets, 8/12/16 segments
#   zoo         tapelab compare on every zoo tape (make_zoo: the zoo driver's table sizes and
#               tests/data/user-heston.tape), cuda and vulkan, one market, 1M paths (compiled side by side first)
#   ncu         Nsight Compute on the tuned 7-market kernel at ieee and approx and the one-market kernel
#   props       the property suite on cuda and vulkan (PROPS_SECONDS, default 100)
#   headline    (runs/h200-2026-12-03) the cuda 7-market shortlist compiled at ieee and approx, tuned, compare with
#               nothing set, --untuned and shared_inputs=off, the peers at 1M and 4M, Nsight Compute
#   tune7       (runs/h200-2026-12-03) Vulkan and OpenCL at 7 markets: compile phase, tunes, compare and --untuned
#   x1          (runs/h200-2026-12-03b) one market per dispatch: the OpenCL and Vulkan shortlists with outline_draws
#               (experiments/tune/{opencl,vulkan}-x1.txt) compiled side by side, compare --untuned on the three
#               engines, the timed tunes, compare reading their winners
#   last        (runs/h200-2026-12-03b) what one short call allows after x1: the Vulkan pipeline-cache and outline tests
#               on the device, OpenCL's new one-market defaults (compare --untuned), the strategies driver's
#               Vulkan 7-market panel (its compile phase now fills the merged pipeline cache the timing reads)
#   boxmuller   (no record yet) version 4 of the draws against version 3 in one call: the version-3 tapelab packed
#               beside this one (OLD_TAPELAB=... scripts/gpu-pack.sh), compare --untuned alternating the two at
#               one market (cuda, Vulkan, OpenCL) and 7 (cuda, Vulkan), 4M paths; Nsight Compute on cuda's kernels
#   boxtests    (no record yet) the draws' tests on the device (CudaRun.*, Vulkan, OpenCL), then the peers (JAX)
#   strategies-cuda  (runs/h200-2026-12-03c) the cuda half of strategies (1 and 7 markets)
#   defaults    (runs/h200-2026-12-03) cuda 7 markets: compare --untuned at 4M, 1M and approx, the tune of the traded
#               fields (experiments/tune/cuda-defaults.txt), compare reading its winner
set -uo pipefail
K=${1:?tune-and-compare.sh: give the call number}; shift
out=/tmp/res$K; rm -rf "$out"; mkdir -p "$out"
t0=$(date +%s)
stamp() { echo "$1 at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"; }
if [ "${GPU_DRY:-0}" = 1 ]; then  # here, without a GPU: the mechanics only
  bin=$PWD/build/ci/cli; sweep=$PWD/build/ci/experiments; props_bin=$PWD/build/ci/properties/tapelab_properties; commit=dry
  job=(--product asian --steps 8); paths=4000; paths1m=4000; deadline=${GPU_S:-900}; zoo_paths=2000
  engines=cpu-jit,vulkan,opencl; jobs=1
else
  bin=$PWD/build/gpu/bin; sweep=$bin; props_bin=$bin/tapelab_properties; commit=$(cat build/gpu/COMMIT)
  job=(--product asian --steps 252); paths=4000000; paths1m=1000000; deadline=${GPU_S:-570}; zoo_paths=1000000
  engines=cuda,vulkan,opencl; jobs=16
  export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
  nvidia-smi --query-gpu=name,clocks.max.sm,driver_version,power.limit --format=csv > "$out/gpu.txt"
  echo "$commit" >> "$out/gpu.txt"
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active \
      --format=csv -lms 200 > "$out/smi.csv" 2>&1 &
  smi=$!
  trap 'kill $smi 2>/dev/null' EXIT
fi
T=$bin/tapelab
export TAPELAB_CACHE_DIR=${TAPELAB_CACHE_DIR:-/tmp/tapelab-cache}
export __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1 __GL_SHADER_DISK_CACHE_SIZE=4294967296
export __GL_SHADER_DISK_CACHE_PATH=/tmp/tapelab-nv-shader-cache
export PYTHONUNBUFFERED=1
source scripts/gpu/steps.sh  # left, step NEED NAME CMD...
# bg CAP NAME CMD...: CMD in the background (stdout into NAME, stderr into compile.txt), cut at CAP seconds.
pids=()
bg() {
  local cap=$1 name=$2; shift 2
  ( timeout "$cap" "$@" > "$out/$name" 2>> "$out/compile.txt"; echo "$name exit $? at $(( $(date +%s) - t0 )) s" >> "$out/timeline.txt" ) &
  pids+=($!)
}
wait_bg() { for p in "${pids[@]}"; do wait "$p"; done; pids=(); stamp "compile phase done"; }

S=experiments/tune
# The zoo's tapes at the zoo driver's table sizes (experiments/zoo.py ZOO), written by the packed tapelab, and
# the user tape of the tests: into $zoo (a fresh folder per call).
zoo=/tmp/zoo$K
make_zoo() {
  rm -rf "$zoo"; mkdir -p "$zoo"
  local spec
  for spec in "asian --steps 252" "heston --steps 100" "cev --steps 100" "barrier --steps 50" \
              "barrier-smooth:barrier --steps 50 --param smoothing=0.002" "lookback --steps 50" \
              "lmm --param forwards=20" "worstof --param assets=20 --steps 6" "neural --param hidden=8 --steps 16" \
              "heat --param points=21 --steps 24"; do
    local name=${spec%% *} product args=${spec#* }
    product=${name#*:}; name=${name%%:*}
    # shellcheck disable=SC2086
    "$T" tape --product "$product" $args --out "$zoo/$name.tape" 2>> "$out/progress.txt"
  done
  cp tests/data/user-heston.tape "$zoo/"
}
# The drivers as packed (gpu-snap/: experiments/drivers, experiments/peers, papers/*.py copied beside the
# binaries, so edits made here after packing do not reach the call), else the checkout's.
drv=experiments/drivers; [ -d gpu-snap/experiments/drivers ] && drv=gpu-snap/experiments/drivers
for mode in "$@"; do
  stamp "mode $mode"
  case "$mode" in
  tune)
    # 1. Compile phase: the IEEE shortlists' kernels and their plain kernels, side by side (compile-only ranks
    #    by the compiler's statistics and stores nothing; it fills the kernel caches the timed tunes read).
    C=("$T" tune "${job[@]}" --paths "$paths" --compile-only --json)
    cap=$(( $(left) * 45 / 100 ))
    sl() { if [ "$2" = 1 ] && [ -f "$S/$1-x1.txt" ]; then echo "$S/$1-x1.txt"; else echo "$S/$1.txt"; fi; }
    for e in ${engines//,/ }; do
      [ -f "$S/$e.txt" ] || continue   # cpu-jit in the dry run
      bg "$cap" "ctune-$e-x7.json" "${C[@]}" --engine "$e" --markets 7 --shortlist "$(sl $e 7)" --jobs 4
      bg "$cap" "ctune-$e-x1.json" "${C[@]}" --engine "$e" --markets 1 --shortlist "$(sl $e 1)" --jobs 2
    done
    wait_bg
    # 2. The timed tunes, one at a time (nothing compiles beside a timing now), and what they feed, most
    #    important first: x7 tunes, compare tuned and untuned at 4M, the peers, then the rest.
    TUNE=("$T" tune "${job[@]}" --paths "$paths" --budget-seconds 120 --json)
    tune() { [[ ,$engines, == *,$1,* ]] && [ -f "$S/$1.txt" ] && step "$3" "tune-$1-x$2${4:-}.json" "${TUNE[@]}" --engine "$1" --markets "$2" \
               --shortlist "$(sl $1 $2)" ${4:+--config "math=${4#-}"}; }
    tune cuda 7 30; tune cuda 1 30
    tune opencl 7 40; tune vulkan 7 40
    CMP=("$T" compare "${job[@]}" --engines "$engines" --markets 7 --ladders 5 --json)
    step 40 compare-4M.json "${CMP[@]}" --paths "$paths"
    step 40 compare-4M-untuned.json "${CMP[@]}" --paths "$paths" --untuned
    # 3. The approximate-math tunes (their kernels compile inside the tune, on every core), then the peers: JAX's ladder and single market, the hand-written kernel, tapelab at the IEEE contract (the
    #    tuned defaults) and with math=approx (a looser contract, named in its rows).
    P=(python3 "$drv/peers.py" --machine h200 --commit "$commit" --tapelab-bin "$T" --paths "$paths1m,$paths")
    [ "${GPU_DRY:-0}" = 1 ] && P+=(--steps 8 --no-jax --no-handwritten)
    pe=cuda; [ "${GPU_DRY:-0}" = 1 ] && pe=opencl
    tune cuda 7 60 -approx; tune cuda 1 40 -approx   # compiled here, on every core, before the peers use them
    step 90 peers.log "${P[@]}" --engines "$pe" --config '' --config math=approx --out "$out/peers-h200.csv"
    tune opencl 1 30; tune vulkan 1 30
    step 40 peers_gpus.log "${P[@]}" --engines vulkan,opencl --no-jax --no-handwritten --out "$out/peers_gpus-h200.csv"
    cp -r "$TAPELAB_CACHE_DIR/tune" "$out/tuning-cache" 2>/dev/null || true
    ;;
  headline)
    # 2026-12-02c (config shared_inputs): the cuda 7-market ladder at both contracts. Compile phase (the
    # cuda shortlist at ieee and approx, side by side), the timed tunes, compare with nothing set and
    # --untuned, the peers (JAX, the hand-written kernel, tapelab at both contracts) at 1M and 4M, then
    # Nsight Compute on the kernels compare ran (the tuning cache's winners).
    C=("$T" tune "${job[@]}" --paths "$paths" --compile-only --json --markets 7)
    cap=$(( $(left) * 35 / 100 ))
    ce=cuda; [ "${GPU_DRY:-0}" = 1 ] && ce=opencl
    bg "$cap" ctune-cuda-x7.json "${C[@]}" --engine "$ce" --shortlist "$S/$ce.txt" --jobs 8
    bg "$cap" ctune-cuda-x7-approx.json "${C[@]}" --engine "$ce" --shortlist "$S/$ce.txt" --jobs 6 --config math=approx
    wait_bg
    TUNE=("$T" tune "${job[@]}" --paths "$paths" --budget-seconds 100 --json --markets 7 --engine "$ce" --shortlist "$S/$ce.txt")
    step 30 tune-cuda-x7.json "${TUNE[@]}"
    step 30 tune-cuda-x7-approx.json "${TUNE[@]}" --config math=approx
    CMP=("$T" compare "${job[@]}" --engines "$ce" --markets 7 --ladders 5 --json --paths "$paths")
    step 30 compare-cuda-4M.json "${CMP[@]}"
    step 30 compare-cuda-4M-untuned.json "${CMP[@]}" --untuned
    step 30 compare-cuda-4M-noshare.json "${CMP[@]}" --config shared_inputs=off
    P=(python3 "$drv/peers.py" --machine h200 --commit "$commit" --tapelab-bin "$T" --paths "$paths1m,$paths")
    [ "${GPU_DRY:-0}" = 1 ] && P+=(--steps 8 --no-jax --no-handwritten)
    step 120 peers.log "${P[@]}" --engines "$ce" --config '' --config math=approx --out "$out/peers-h200.csv"
    if [ "${GPU_DRY:-0}" != 1 ]; then
      NCU=(ncu --clock-control none --launch-count 1 --kernel-name regex:tapelab_kernel
           --section SpeedOfLight --section InstructionStats --section Occupancy --section LaunchStats
           --section WarpStateStats --metrics smsp__inst_executed.sum,sm__cycles_elapsed.avg,gpu__time_duration.sum)
      PR=("$T" price "${job[@]}" --engine cuda --paths 1000000 --ladder spot=97,98,99,100,101,102,103 --markets 7)
      step 30 ncu-x7-ieee.txt "${NCU[@]}" "${PR[@]}"
      step 30 ncu-x7-approx.txt "${NCU[@]}" "${PR[@]}" --config math=approx
    fi
    cp -r "$TAPELAB_CACHE_DIR/tune" "$out/tuning-cache" 2>/dev/null || true
    ;;
  defaults)
    # 2026-12-03 (cuda min_blocks=12 at several markets): compare with nothing set on a fresh tuning cache
    # (--untuned) at 4M and 1M, at both contracts; the tune of the fields it traded (experiments/tune/
    # cuda-defaults.txt); compare again, now reading the tune's winner.
    ce=cuda; [ "${GPU_DRY:-0}" = 1 ] && ce=opencl
    CMP=("$T" compare "${job[@]}" --engines "$ce" --markets 7 --ladders 5 --json)
    step 60 compare-cuda-4M-untuned.json "${CMP[@]}" --paths "$paths" --untuned
    step 30 compare-cuda-1M-untuned.json "${CMP[@]}" --paths "$paths1m" --untuned
    step 60 compare-cuda-4M-untuned-approx.json "${CMP[@]}" --paths "$paths" --untuned --config math=approx
    step 30 tune-cuda-x7-defaults.json "$T" tune "${job[@]}" --paths "$paths" --budget-seconds 60 --json --markets 7 \
        --engine "$ce" --shortlist "$S/cuda-defaults.txt"
    step 30 compare-cuda-4M.json "${CMP[@]}" --paths "$paths"
    cp -r "$TAPELAB_CACHE_DIR/tune" "$out/tuning-cache" 2>/dev/null || true
    ;;
  last)
    tb=$bin; [ "${GPU_DRY:-0}" = 1 ] && tb=$PWD/build/ci/tests
    step 20 vk-pipeline-tests.txt "$tb/test_vulkan_pipeline_cache"
    step 30 outline-tests.txt sh -c "'$tb/test_opencl_kernels' --gtest_filter='*Outline*' && '$tb/test_vulkan_engine' --gtest_filter='*Outline*'"
    x1e=opencl
    step 60 compare-x1-opencl-4M-untuned.json "$T" compare "${job[@]}" --engines "$x1e" --markets 1 --ladders 5 --json \
        --paths "$paths" --untuned
    D=(python3 "$drv/strategies.py" --machine h200 --commit "$commit" --sweep-bin "$sweep/scratch_sweep"
       --tapelab-bin "$T" --skip revolve@7 --point-timeout 200 --reps 5 --markets 7)
    [ "${GPU_DRY:-0}" = 1 ] && D+=(--steps 16 --paths 2048 --strategies window,two-level --segments 4 --compile-jobs 1) \
                            || D+=(--compile-jobs 15)
    se=vulkan
    step 150 strategies_vulkan7.log "${D[@]}" --engines "$se" --out "$out/strategies_vulkan7-h200.csv"
    ;;
  boxmuller)
    # 2026-12-05: version 4 of the draws (Box-Muller pairs; no quantile, no tails) against version 3 in one
    # call: the version-3 tapelab packed beside this one (gpu-pack.sh with OLD_TAPELAB, build/gpu/old/), each
    # with nothing set (--untuned: the defaults, no tuning cache), one market on cuda, Vulkan and OpenCL, then
    # 7 markets on cuda and Vulkan, 4M paths, each compare twice in alternation (new, old, new, old); then
    # Nsight Compute on cuda's one- and 7-market kernels of both. Compile phase first: every kernel of both
    # binaries side by side (the cuda ones are in the carried NVRTC cache; Vulkan and OpenCL build here).
    old=$bin/old/tapelab; [ "${GPU_DRY:-0}" = 1 ] && old=${OLD_TAPELAB:-$T}
    [ -x "$old" ] || { echo "boxmuller: no version-3 binary at $old (gpu-pack.sh OLD_TAPELAB=...)" | tee -a "$out/timeline.txt"; continue; }
    cat "$bin/old/COMMIT" >> "$out/gpu.txt" 2>/dev/null
    bx1=cuda,vulkan,opencl; bx7=cuda,vulkan; [ "${GPU_DRY:-0}" = 1 ] && { bx1=vulkan,opencl; bx7=vulkan; }
    cap=$(( $(left) * 30 / 100 ))
    for b in new old; do
      B=$T; [ $b = old ] && B=$old
      bg "$cap" "warm-$b-x1.txt" "$B" compare "${job[@]}" --engines "$bx1" --markets 1 --points 1 --ladders 1 --paths 1024 --warmup-ms 0 --untuned
      bg "$cap" "warm-$b-x7.txt" "$B" compare "${job[@]}" --engines "$bx7" --markets 7 --points 7 --ladders 1 --paths 1024 --warmup-ms 0 --untuned
    done
    wait_bg
    for m in 1 7; do
      es=$bx1; [ $m = 7 ] && es=$bx7
      for rep in 1 2; do
        for b in new old; do
          B=$T; [ $b = old ] && B=$old
          step 40 "compare-$b-x$m-$rep.json" "$B" compare "${job[@]}" --engines "$es" --markets $m --ladders 5 --json \
              --paths "$paths" --untuned
        done
      done
    done
    if [ "${GPU_DRY:-0}" != 1 ]; then
      NCU=(ncu --clock-control none --launch-count 1 --kernel-name regex:tapelab_kernel
           --section SpeedOfLight --section InstructionStats --section Occupancy --section LaunchStats
           --section WarpStateStats --section SchedulerStats
           --metrics 'smsp__inst_executed.sum,sm__cycles_elapsed.avg,gpu__time_duration.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio')
      L=(--ladder spot=97,98,99,100,101,102,103 --markets 7)
      for b in new old; do
        B=$T; [ $b = old ] && B=$old
        step 30 "ncu-$b-x1.txt" "${NCU[@]}" "$B" price "${job[@]}" --engine cuda --paths 1000000 --untuned
        step 30 "ncu-$b-x7.txt" "${NCU[@]}" "$B" price "${job[@]}" --engine cuda --paths 1000000 --untuned "${L[@]}"
      done
    fi
    ;;
  boxtests)
    # 2026-12-05, after boxmuller: the tests of the draws on the device (CUDA runs, Vulkan's and OpenCL's draws
    # and exactness), then the peers with the new binary (JAX's ladder in the same call) at 1M and 4M.
    tb=$bin; [ "${GPU_DRY:-0}" = 1 ] && tb=$PWD/build/ci/tests
    step 150 cuda-tests.txt "$tb/test_cuda_nvrtc" --gtest_filter='CudaRun.*'
    step 60 vulkan-tests.txt "$tb/test_vulkan_engine" --gtest_filter='VulkanDraws.*:VulkanPaths.*:VulkanExact.*:*VulkanAsian120*'
    step 60 opencl-tests.txt "$tb/test_opencl_kernels"
    P=(python3 "$drv/peers.py" --machine h200 --commit "$commit" --tapelab-bin "$T" --paths "$paths1m,$paths")
    [ "${GPU_DRY:-0}" = 1 ] && P+=(--steps 8 --no-jax --no-handwritten)
    pe=cuda; [ "${GPU_DRY:-0}" = 1 ] && pe=opencl
    step 90 peers.log "${P[@]}" --engines "$pe" --config '' --config math=approx --out "$out/peers-h200.csv"
    ;;
  strategies-cuda)
    # The cuda half of `strategies` (2026-12-03c; the Vulkan half ran in 2026-12-03b), 1 and 7 markets.
    D=(python3 "$drv/strategies.py" --machine h200 --commit "$commit" --sweep-bin "$sweep/scratch_sweep"
       --tapelab-bin "$T" --skip revolve@7 --point-timeout 200 --reps 5)
    [ "${GPU_DRY:-0}" = 1 ] && D+=(--steps 16 --paths 2048 --strategies window,two-level --segments 4 --markets 1,2 --compile-jobs 1) \
                            || D+=(--compile-jobs 14)
    se=cuda; [ "${GPU_DRY:-0}" = 1 ] && se=cpu-jit
    [ -n "${STRAT_MARKETS:-}" ] && D+=(--markets "$STRAT_MARKETS")  # e.g. 7: one panel only
    step 120 "strategies_$se.log" "${D[@]}" --engines "$se" --out "$out/strategies_$se-h200.csv"
    ;;
  x1)
    # 2026-12-03b (outline_draws on OpenCL and Vulkan): one market per dispatch, 4M paths. The two
    # shortlists compiled side by side (OpenCL builds on the device: minutes), the defaults on every engine
    # (--untuned, a fresh tuning cache), the timed tunes, compare again reading their winners.
    C=("$T" tune "${job[@]}" --paths "$paths" --compile-only --json --markets 1)
    cap=$(( $(left) * 40 / 100 ))
    for e in opencl vulkan; do
      bg "$cap" "ctune-$e-x1.json" "${C[@]}" --engine "$e" --shortlist "$S/$e-x1.txt" --jobs 5
    done
    wait_bg
    CMP=("$T" compare "${job[@]}" --markets 1 --ladders 5 --json --paths "$paths")
    x1e=cuda,vulkan,opencl; [ "${GPU_DRY:-0}" = 1 ] && x1e=vulkan,opencl
    step 40 compare-x1-4M-untuned.json "${CMP[@]}" --engines "$x1e" --untuned
    TUNE=("$T" tune "${job[@]}" --paths "$paths" --budget-seconds 60 --json --markets 1)
    for e in opencl vulkan; do step 30 "tune-$e-x1.json" "${TUNE[@]}" --engine "$e" --shortlist "$S/$e-x1.txt"; done
    step 40 compare-x1-4M.json "${CMP[@]}" --engines "$x1e"
    cp -r "$TAPELAB_CACHE_DIR/tune" "$out/tuning-cache-x1" 2>/dev/null || true
    ;;
  tune7)
    # Vulkan and OpenCL at 7 markets (NVIDIA's compilers: minutes for a shortlist, so their own call):
    # compile phase side by side, the timed tunes, compare with nothing set and --untuned.
    C=("$T" tune "${job[@]}" --paths "$paths" --compile-only --json --markets 7)
    cap=$(( $(left) * 55 / 100 ))
    for e in vulkan opencl; do bg "$cap" "ctune-$e-x7.json" "${C[@]}" --engine "$e" --shortlist "$S/$e.txt" --jobs 8; done
    wait_bg
    TUNE=("$T" tune "${job[@]}" --paths "$paths" --budget-seconds 100 --json --markets 7)
    for e in vulkan opencl; do step 30 "tune-$e-x7.json" "${TUNE[@]}" --engine "$e" --shortlist "$S/$e.txt"; done
    CMP=("$T" compare "${job[@]}" --engines vulkan,opencl --markets 7 --ladders 5 --json --paths "$paths")
    step 40 compare-gpus-4M.json "${CMP[@]}"
    step 40 compare-gpus-4M-untuned.json "${CMP[@]}" --untuned
    cp -r "$TAPELAB_CACHE_DIR/tune" "$out/tuning-cache" 2>/dev/null || true
    ;;
  strategies)
    D=(python3 "$drv/strategies.py" --machine h200 --commit "$commit" --sweep-bin "$sweep/scratch_sweep"
       --tapelab-bin "$T" --skip revolve@7 --point-timeout 240 --reps 5)
    [ "${GPU_DRY:-0}" = 1 ] && D+=(--steps 16 --paths 2048 --strategies window,two-level --segments 4 --markets 1,2 --compile-jobs 1) \
                            || D+=(--compile-jobs 14)
    first=vulkan; [ "${GPU_DRY:-0}" = 1 ] && first=opencl
    step 200 "strategies_$first.log" "${D[@]}" --engines "$first" --out "$out/strategies_$first-h200.csv"
    second=cuda; [ "${GPU_DRY:-0}" = 1 ] && second=cpu-jit
    step 120 "strategies_$second.log" "${D[@]}" --engines "$second" --out "$out/strategies_$second-h200.csv"
    ;;
  zoo)
    make_zoo
    # Compile phase: every tape's plain and register kernels on both engines, side by side (gpu_kernels
    # compiles and reports; its timings are not used), then compare one tape at a time.
    ze=cuda,vulkan; [ "${GPU_DRY:-0}" = 1 ] && ze=vulkan
    cap=$(( $(left) * 45 / 100 ))
    for f in "$zoo"/*.tape; do
      n=$(basename "$f" .tape)
      bg "$cap" "zoo-compile-$n.txt" "$T" compare "$f" --engines "$ze" --markets 1 --points 1 --ladders 1 \
          --paths 1024 --warmup-ms 0
    done
    wait_bg
    for f in "$zoo"/*.tape; do
      n=$(basename "$f" .tape)
      step 15 "zoo-$n.json" "$T" compare "$f" --engines "$ze" --markets 1 --points 7 --ladders 5 --paths "$zoo_paths" --json
    done
    ;;
  ncu)
    # Instruction counts and stalls of the tuned kernels (the call before stored the winners): the 7-market
    # ladder at ieee and approx, one market at ieee; the first dispatch of a 1M run.
    if [ "${GPU_DRY:-0}" = 1 ]; then echo "ncu: not in the dry run" >> "$out/timeline.txt"; continue; fi
    NCU=(ncu --clock-control none --launch-count 1 --kernel-name regex:tapelab_kernel
         --section SpeedOfLight --section InstructionStats --section Occupancy --section LaunchStats
         --section WarpStateStats --metrics smsp__inst_executed.sum,sm__cycles_elapsed.avg,gpu__time_duration.sum)
    PR=("$T" price "${job[@]}" --engine cuda --paths 1000000)
    L=(--ladder spot=97,98,99,100,101,102,103 --markets 7)
    step 40 ncu-x7-ieee.txt "${NCU[@]}" "${PR[@]}" "${L[@]}"
    step 40 ncu-x7-approx.txt "${NCU[@]}" "${PR[@]}" "${L[@]}" --config math=approx
    step 40 ncu-x1-ieee.txt "${NCU[@]}" "${PR[@]}" --markets 1
    ;;
  props)
    pe=cuda,vulkan; [ "${GPU_DRY:-0}" = 1 ] && pe=vulkan
    step 60 props.txt env OUT="$out" bash properties/parallel_run.sh -b "$props_bin" \
        -e "$pe" -s "${PROPS_SECONDS:-100}" -j "${PROPS_JOBS:-8}" -n "${PROPS_NODES:-200}"
    ;;
  final)
    # One call for what a budget left after calls 1-2 allows (2026-12-02b): kernels compiled side by side
    # first (the Nsight kernels, the one-market Vulkan and OpenCL shortlists, every zoo tape on cuda and
    # vulkan), then Nsight Compute, the one-market tunes and compare, the zoo's compares, the properties.
    PR=("$T" price "${job[@]}" --engine cuda)
    L=(--ladder spot=97,98,99,100,101,102,103 --markets 7)
    X7=philox=rolled,cuda.reduce=beside   # call 1's IEEE winner at 7 markets
    make_zoo
    cap=$(( $(left) * 40 / 100 ))
    if [ "${GPU_DRY:-0}" != 1 ]; then
      bg "$cap" warm-x7-ieee.txt "${PR[@]}" "${L[@]}" --paths 4096 --config "$X7"
      bg "$cap" warm-x7-approx.txt "${PR[@]}" "${L[@]}" --paths 4096 --config math=approx
      bg "$cap" warm-x1-ieee.txt "${PR[@]}" --paths 4096
    fi
    C=("$T" tune "${job[@]}" --paths "$paths" --compile-only --json --markets 1)
    for e in vulkan opencl; do bg "$cap" "ctune-$e-x1.json" "${C[@]}" --engine "$e" --shortlist "$S/$e.txt" --jobs 2; done
    ze=cuda,vulkan; [ "${GPU_DRY:-0}" = 1 ] && ze=vulkan
    for f in "$zoo"/*.tape; do
      bg "$cap" "zoo-compile-$(basename "$f" .tape).txt" "$T" compare "$f" --engines "$ze" --markets 1 --points 1 \
          --ladders 1 --paths 1024 --warmup-ms 0
    done
    wait_bg
    if [ "${GPU_DRY:-0}" != 1 ]; then
      NCU=(ncu --clock-control none --launch-count 1 --kernel-name regex:tapelab_kernel
           --section SpeedOfLight --section InstructionStats --section Occupancy --section LaunchStats
           --section WarpStateStats --metrics smsp__inst_executed.sum,sm__cycles_elapsed.avg,gpu__time_duration.sum)
      step 30 ncu-x7-ieee.txt "${NCU[@]}" "${PR[@]}" "${L[@]}" --paths 1000000 --config "$X7"
      step 30 ncu-x7-approx.txt "${NCU[@]}" "${PR[@]}" "${L[@]}" --paths 1000000 --config math=approx
      step 30 ncu-x1-ieee.txt "${NCU[@]}" "${PR[@]}" --paths 1000000
    fi
    TUNE=("$T" tune "${job[@]}" --paths "$paths" --budget-seconds 300 --json --markets 1)
    for e in vulkan opencl; do step 30 "tune-$e-x1.json" "${TUNE[@]}" --engine "$e" --shortlist "$S/$e.txt"; done
    step 30 compare-x1-4M.json "$T" compare "${job[@]}" --engines "$engines" --markets 1 --ladders 5 --json --paths "$paths"
    for f in "$zoo"/*.tape; do
      step 15 "zoo-$(basename "$f" .tape).json" "$T" compare "$f" --engines "$ze" --markets 1 --points 7 --ladders 3 \
          --paths "$zoo_paths" --json
    done
    pe=cuda,vulkan; [ "${GPU_DRY:-0}" = 1 ] && pe=vulkan
    step 40 props.txt env OUT="$out" bash properties/parallel_run.sh -b "$props_bin" -e "$pe" -s "$(( $(left) - 50 ))" \
        -j "${PROPS_JOBS:-2}" -n "${PROPS_NODES:-200}"
    cp -r "$TAPELAB_CACHE_DIR/tune" "$out/tuning-cache" 2>/dev/null || true
    ;;
  *) echo "tune-and-compare.sh: unknown mode '$mode' (tune, headline, tune7, strategies, strategies-cuda, boxmuller, boxtests, zoo, ncu, props, final, x1, last, defaults)" >&2; exit 2 ;;
  esac
done
stamp done
