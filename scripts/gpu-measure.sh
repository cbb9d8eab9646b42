#!/usr/bin/env bash
# Batched measurements on the lent H200 (device tool). Carry .gpu-runtime and
# build/gpu (scripts/gpu-pack.sh); results land in $OUT (./gpu-out elsewhere).
#   source scripts/gpu-env.sh; bash scripts/gpu-measure.sh MODE...
#   smoke     engines, the GPU unit tests one after another, a quick compare (minutes)
#   tests     engines, then the GPU unit tests side by side, one log (tests.txt; ~3 min cold;
#             TESTS_TIMEOUT limits each, default 420 s)
#   compare1  tapelab compare, value + 5 Greeks, 1M paths, 1 and 4 markets, cold compiles
#   compare2  the same at 4M (cached compiles), the ladder in one 8-market dispatch at 4M,
#             price only at 1M and 4M, and the JAX baseline when python3 has jax
#   main      compare1 then compare2
#   aim       4M, 4 markets: register at 8/24/32 segments, scratch at seglen 200 (vulkan, cuda)
#   markets   4M, register, markets per dispatch (and segments) from MARKETS, entries M or M:SEGS
#             (default "2 3:24 7": the kernels that do not spill on sm_90 and the whole ladder in
#             one dispatch; 4 pads the ladder's second dispatch) on MARKETS_ENGINES (default vulkan,cuda)
#   sweeps    Vulkan kernel grid (experiments/gpu_vulkan.sh) and the scratch sweep on cuda, opencl
#   props     the long property run, one process per property, engine and seed
#             (properties/parallel_run.sh; PROPS_SECONDS, PROPS_JOBS, PROPS_NODES tune it,
#             PROPS_FILTER picks properties by regex, e.g. 'Exact\.')
#   ladder    the main job's compare (value + 5 Greeks, register kernels) at 1M and 4M paths, 4 and
#             7 markets per dispatch, in ladder.txt (pair it with peers in one call)
#   peers     JAX (one market, the ladder by vmap with shared draws, the ladder as 7 calls) at 1M
#             and 4M, and the hand-written forward-pathwise CUDA kernel (experiments/peers/), in
#             peers.csv; run it beside tapelab's numbers in one call
#   candidates  the 7-point ladder at 4M in one 7-market register dispatch, one compare per plan
#             file in PLANS (required; e.g. runs/h200-2026-11-30/plans/*.json) on
#             CAND_ENGINES (default cuda,vulkan), kernels compiled side by side first (CAND_COMPILE_ONLY=1:
#             only that); candidates.txt
#   roofline  Nsight Compute counters (speed of light, instruction mix, occupancy, warp stalls)
#             of the cuda register kernel: 1 market and 7 markets, window 16, 1M paths; roofline.txt
#   mseq      market order (issue 14 item 4): the 7-point ladder in one 7-market dispatch, register
#             joint (today) against register and scratch sequential (window 16), at 1M and 4M paths on
#             MSEQ_ENGINES (default cuda,vulkan), kernels compiled side by side first; then Nsight
#             Compute counters (registers, spills, occupancy) of the cuda kernels x7 (register joint,
#             register and scratch sequential), 1M paths; mseq.txt, mseq_ncu.txt (~4 min; cold 7-market compiles
#             take a minute or two each, side by side)
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
bin=$PWD/build/gpu/bin
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
export TAPELAB_CACHE_DIR=${TAPELAB_CACHE_DIR:-/tmp/tapelab-cache}
export __GL_SHADER_DISK_CACHE=0   # only our caches count in compile times
engines=${ENGINES:-cuda,vulkan,opencl}   # ENGINES overrides, e.g. cuda,vulkan (OpenCL's cold compiles take minutes)
say() { echo "=== $*"; }

cmp() {  # cmp FILE ARGS...: one compare, its table in $out/FILE, progress in progress.txt
  local f=$1; shift
  say "compare $* -> $f"
  local t0=$(date +%s)
  "$bin/tapelab" compare --engines $engines "$@" 2>>"$out/progress.txt" | tee "$out/$f"
  echo "($(( $(date +%s) - t0 )) s)" | tee -a "$out/$f"
}

cmp_append() {  # cmp_append FILE LABEL ARGS...: like cmp, appending to $out/FILE under LABEL
  local f=$1 label=$2; shift 2
  say "compare $label: $*" | tee -a "$out/$f"
  local t0=$(date +%s)
  "$bin/tapelab" compare --engines $engines "$@" 2>>"$out/progress.txt" | tee -a "$out/$f"
  echo "($(( $(date +%s) - t0 )) s)" | tee -a "$out/$f"
}

run_mode() {
  case "$1" in
  smoke)
    say "engines"; "$bin/tapelab" engines
    for t in "$bin"/test_vulkan_* "$bin"/test_opencl_* "$bin"/test_cuda_* "$bin"/test_codegen_* "$bin"/test_api_*; do
      [ -x "$t" ] || continue
      say "$(basename "$t")"; timeout 300 "$t" --gtest_brief=1 2>&1 | tail -25
    done
    say "quick compare"
    timeout 300 "$bin/tapelab" compare --engines $engines --kernels register,scratch --paths 100000 --ladders 1
    ;;
  tests)
    local tmp; tmp=$(mktemp -d)
    { say "engines"; "$bin/tapelab" engines; } | tee "$out/tests.txt"
    for t in "$bin"/test_vulkan_* "$bin"/test_opencl_* "$bin"/test_cuda_* "$bin"/test_codegen_* "$bin"/test_api_*; do
      [ -x "$t" ] || continue
      ( t0=$(date +%s); timeout "${TESTS_TIMEOUT:-420}" "$t" --gtest_brief=1 >"$tmp/$(basename "$t").log" 2>&1
        echo "exit $? after $(( $(date +%s) - t0 )) s" >>"$tmp/$(basename "$t").log" ) &
    done
    wait
    for f in "$tmp"/*.log; do say "$(basename "$f" .log)"; tail -40 "$f"; done | tee -a "$out/tests.txt"
    rm -rf "$tmp"
    ;;
  compare1)
    rm -rf "$TAPELAB_CACHE_DIR"
    cmp compare_greeks_1M.txt --kernels register,scratch --paths 1000000 --markets 4
    ;;
  compare2)
    cmp compare_greeks_4M.txt --kernels register,scratch --paths 4000000 --markets 4
    cmp compare_greeks_4M_m8.txt --kernels register --paths 4000000 --markets 8
    cmp compare_price.txt --kernels register --paths 1000000 --markets 4 --no-greeks
    cmp compare_price_4M.txt --kernels register --paths 4000000 --markets 4 --no-greeks
    if python3 -c 'import jax' 2>/dev/null; then
      say "JAX baseline"
      timeout 300 python3 experiments/peers/jax_peers.py --paths 1000000 4000000 2>>"$out/progress.txt" | tee "$out/jax.csv"
    else
      say "JAX baseline skipped: python3 has no jax here"
    fi
    ;;
  main) run_mode compare1; run_mode compare2 ;;
  aim)
    # Toward the 5x-JAX aim (value + 5 Greeks, 4M paths, 4 markets): register segment counts
    # and scratch at the article's best segment length, Vulkan and CUDA (fast compiles).
    for segs in 8 24 32; do
      engines=vulkan,cuda cmp "aim_register_$segs.txt" --kernels register --checkpoint "$segs" --paths 4000000 --markets 4
    done
    engines=vulkan,cuda cmp aim_scratch_200.txt --kernels scratch --seglen 200 --paths 4000000 --markets 4
    ;;
  markets)
    for x in ${MARKETS:-2 3:24 7}; do
      local m=${x%%:*} segs=16
      [[ $x == *:* ]] && segs=${x#*:}
      engines=${MARKETS_ENGINES:-vulkan,cuda} cmp "markets_${m}_seg$segs.txt" --kernels register --checkpoint "$segs" \
          --paths 4000000 --markets "$m"
    done
    ;;
  sweeps)
    TAPELAB_BIN=$bin OUT=$out bash experiments/gpu_vulkan.sh vulkan
    say "scratch sweep"
    "$bin/scratch_sweep" --engines cuda,opencl --paths 1000000 --jobs 16 --out "$out/scratch_sweep.csv" 2>&1 | tail -45
    ;;
  props)
    OUT=$out bash properties/parallel_run.sh -b "$bin/tapelab_properties" -e $engines \
        -s "${PROPS_SECONDS:-420}" -j "${PROPS_JOBS:-2}" -n "${PROPS_NODES:-200}" ${PROPS_FILTER:+-p "$PROPS_FILTER"}
    ;;
  ladder)
    for paths in 1000000 4000000; do
      for m in 4 7; do
        cmp_append ladder.txt "${paths} paths, $m markets" --kernels register --paths $paths --markets $m
      done
    done
    ;;
  peers)
    if python3 -c 'import jax' 2>/dev/null; then
      say "JAX peers"
      timeout 420 python3 experiments/peers/jax_peers.py --paths 1000000 4000000 --out "$out/peers.csv" \
          2>>"$out/progress.txt"
    else
      say "JAX peers skipped: python3 has no jax here" | tee -a "$out/peers.csv"
    fi
    say "hand-written forward-pathwise kernel"
    if nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/handwritten_asian experiments/peers/handwritten_asian.cu \
        2>>"$out/progress.txt"; then
      /tmp/handwritten_asian --paths 1000000,4000000 | tee -a "$out/peers.csv"
    fi
    ;;
  candidates)
    CAND_ENGINES=${CAND_ENGINES:-cuda,vulkan}
    local plans=(${PLANS:?gpu-measure.sh: give PLANS=FILE... (the plans of 2026-11-30: runs/h200-2026-11-30/plans/*.json)})
    local ladder=spot=97,98,99,100,101,102,103   # compare's 7 points: spot * (1 + 0.01 (i - 3))
    say "compiling ${#plans[@]} candidates side by side"
    for p in "${plans[@]}"; do
      for e in ${CAND_ENGINES//,/ }; do
        "$bin/tapelab" price --product asian --steps 252 --fp32 --engine "$e" --plan "$p" --kernel register \
            --paths 4096 --ladder $ladder --markets 7 >/dev/null 2>>"$out/progress.txt" &
        "$bin/tapelab" price --product asian --steps 252 --fp32 --engine "$e" --plan "$p" --kernel register \
            --paths 4096 >/dev/null 2>>"$out/progress.txt" &
      done
    done
    wait
    [ -n "${CAND_COMPILE_ONLY:-}" ] && return 0   # fill the caches now, time later (another GPU busy meanwhile)
    for p in "${plans[@]}"; do
      engines=${CAND_ENGINES} cmp_append candidates.txt "$p" --kernels register --plan "$p" --markets 7 --paths 4000000
    done
    ;;
  roofline)
    local sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats
                    --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis)
    for m in 1 7; do
      local extra=(); [ "$m" = 7 ] && extra=(--ladder spot=97,98,99,100,101,102,103 --markets 7)
      say "ncu: cuda register, $m market(s), window 16, 1M paths" | tee -a "$out/roofline.txt"
      timeout 240 ncu --clock-control none --launch-count 1 "${sections[@]}" "$bin/tapelab" price --product asian \
          --steps 252 --fp32 --engine cuda --kernel register --checkpoint 16 --paths 1000000 "${extra[@]}" \
          >>"$out/roofline.txt" 2>&1
    done
    ;;
  mseq)
    local ladder=spot=97,98,99,100,101,102,103 mengines=${MSEQ_ENGINES:-cuda,vulkan}
    local common=(--product asian --steps 252 --fp32 --paths 4096)
    say "compiling the ladder's kernels side by side"
    local t0=$(date +%s)
    for e in ${mengines//,/ }; do
      for spec in "plain 1 joint" "plain 7 joint" "register 1 joint" "register 7 joint" "register 7 sequential" \
                  "scratch 1 joint" "scratch 7 sequential"; do
        local kind m order; read -r kind m order <<<"$spec"
        local ck=(--checkpoint 16); [ "$kind" = plain ] && ck=(--checkpoint off)
        local lad=(); [ "$m" = 7 ] && lad=(--ladder $ladder --markets 7)
        "$bin/tapelab" price "${common[@]}" --engine "$e" --kernel "$kind" "${ck[@]}" "${lad[@]}" --config market_order="$order" \
            >/dev/null 2>>"$out/progress.txt" &
      done
    done
    wait
    echo "compiled in $(( $(date +%s) - t0 )) s" | tee -a "$out/mseq.txt"
    for paths in 1000000 4000000; do
      engines=$mengines cmp_append mseq.txt "$paths paths, 7 markets, joint" --kernels register --checkpoint 16 \
          --paths $paths --markets 7 --config market_order=joint
      engines=$mengines cmp_append mseq.txt "$paths paths, 7 markets, sequential" --kernels register,scratch \
          --checkpoint 16 --paths $paths --markets 7 --config market_order=sequential
    done
    if [[ ,$mengines, == *,cuda,* ]]; then
      for spec in "register joint" "register sequential" "scratch sequential"; do
        local kind order; read -r kind order <<<"$spec"
        say "ncu: cuda $kind, 7 markets, window 16, 1M paths, market order $order" | tee -a "$out/mseq_ncu.txt"
        timeout 240 ncu --clock-control none --launch-count 1 --section LaunchStats --section Occupancy \
            --section SpeedOfLight --section InstructionStats --section MemoryWorkloadAnalysis "$bin/tapelab" price \
            --product asian --steps 252 --fp32 --engine cuda --kernel "$kind" --checkpoint 16 --paths 1000000 \
            --ladder $ladder --markets 7 --config market_order="$order" >>"$out/mseq_ncu.txt" 2>&1
      done
    fi
    ;;
  *) echo "gpu-measure.sh: unknown mode '$1' (smoke, tests, compare1, compare2, main, aim, markets, sweeps, props, ladder, peers, candidates, roofline, mseq)" >&2; return 2 ;;
  esac
}

[ $# -gt 0 ] || set -- smoke
status=0
for m in "$@"; do run_mode "$m" || status=$?; done
exit $status
