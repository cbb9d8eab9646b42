#!/usr/bin/env bash
# tapelab's kernels beside their peers on a lent GPU, in one call (issue 46): the 252-step Asian, fp32,
# value + 5 Greeks (and price only), every row bit-checked against its own plain kernel.
#   source scripts/gpu-env.sh; timeout 560 bash scripts/gpu/kernels-vs-peers.sh K MODE...; tar czf $OUT/callK.tgz -C /tmp resK
# Modes (each writes into /tmp/resK; run in the order given):
#   tests   the rolled loops', the tangent kernel's, the per-value plans' and the regression tapes' exactness tests
#           (the bit-keeping rewrites' among them) on the device's cuda, Vulkan and OpenCL (pack them: BINS="tapelab
#           test_api_loops test_api_tangent test_api_pervalue test_api_regressions"; TESTS: which of them)
#   peers   experiments/drivers/peers.py on cuda at 4M paths: JAX (one market and its vmap ladder), the
#           hand-written kernels (one market, the 7-point ladder) and tapelab compare (plain, register and
#           tangent rows, one market and 7 per dispatch, --kernel auto's choice named), nothing set
#   loops   the same tangent rows with config loops=unrolled (every step written out), for the rolled loop's effect
#   ncu     Nsight Compute on the one-market tangent and register kernels and the 7-market tangent kernel
#           (instructions, issue efficiency, occupancy, stalls), the first dispatch of a 1M run (NCU_CONFIG: a
#           --config for all four)
#   vkcl    compare on Vulkan and OpenCL (their defaults), 4M paths, one and 7 markets
#   blocks  the 7-market tangent kernel at min_blocks 8, 10 and 12 (127, 96 and 80 registers on sm_90)
#   paradigms  the two paradigms of checkpointing timed (issue 47): per zoo tape in experiments/plans/paradigms/
#           (experiments/paradigms_sm90.py --plans-dir wrote them: segment plans budget and optimal, per-value
#           plans exact and mincut-weighted, at one budget), gpu_kernels' plain and register kernels at 1 and 7
#           markets, 1M paths, median of 5 ladders, each ==plain (pack gpu_kernels: BINS="... gpu_kernels")
#   dispatch  where the one-market and 7-market tangent kernels' time goes beyond the kernel (cuda, 4M paths,
#           TAPELAB_TIMELINE=1: each dispatch's kernel time in the JSON): the defaults against cuda.dispatches=1
#           (one dispatch, one tail), cuda.reduce=beside (the ordered sums' chain beside the next kernel), wider
#           workgroups and more lanes (fewer blocks: a shorter chain, other sums' rounding), loop_trip=step (one
#           step a trip: a smaller loop, no spills at 7 markets) and min_blocks=10 (96 registers), two rounds
#   register  the register kernels (checkpointed adjoint) under the fields the dispatch mode moved for the tangent
#           kernels: cuda.reduce=device against beside at 1 and 7 markets, min_blocks=10 at 7, two rounds
#           (whether a default can follow the tangent kernel's measurement without costing the adjoint)
#   kinds   the defaults per kernel kind (issue 46): the tangent and register kernels at 7 markets under
#           min_blocks 12 and 10 times cuda.reduce device and beside, every pair named (whatever each kind's
#           defaults), and the register kernel at one market under cuda.reduce device and beside, two rounds
#           (whether a kind-qualified default helps one kind without costing the other)
#   opencl  the tangent kernel on OpenCL, one and 7 markets, under its defaults (workgroup 256, from 2026-12-06c)
#           against workgroup 64 (the defaults of before) and 128, more lanes and both, two rounds
#   rolled  the register kernel at 7 markets: its periodic segments rolled around the market loop (the default),
#           written out (loops=unrolled), under min_blocks 10 and 8, at 8 and 32 segments, and the window plan of
#           before, two rounds (ROLLED_CONFIGS: other --config rows, `defaults` the defaults; ROLLED_PLANS set: no
#           plan rows; compare at --markets 7 times one market a dispatch too)
#   wide    issue 46's wide tapes at one market, 1M paths, the adjoint against the tangent kernel at every input:
#           the 20-asset basket (compare's register and tangent rows, and what --kernel auto picks); with
#           WIDE="lmm40 basket20" also lmm with 40 forwards (81 inputs; gpu_kernels' plain, register and tangent
#           kernels of the tape tapelab tape writes, under --config tangent_chunk=C for each C of LMM_CHUNKS, default
#           8: the tangent kernel as 11 kernels of 8 inputs, 1.4-3.8 MB of CUDA each; the register kernel at the
#           first C only; then what nothing set runs, --kernel auto's choice); WIDE="neural" the neural SDE (341
#           inputs) likewise at tangent_chunk=$NEURAL_CHUNK (default 4: 86 kernels of 1.7 MB, compiled there, 16 at
#           a time); whole, its 22.6 MB ran NVRTC 55 minutes
#           to 24 GB on the build VM before the OOM killer ended it, 2026-12-06d). Compile them beforehand with the
#           same command (compile-only here, about 6 minutes and 7 GB a chunk) and carry the NVRTC cache
#           (scripts/gpu-cache-pack.sh); WIDE defaults to basket20
#   markets  the register kernel's several-market defaults (market_unroll=whole, min_blocks=8, cuda.reduce=device
#           since 2026-12-06h, timed then at 7 markets only) at each of MARKET_COUNTS (default 2 3 4 5 6; --points
#           M: whole dispatches) against the several-market defaults before (MARKETS_OLD), two rounds (files
#           markets-xM-TAG-rN.json)
#   zoo-markets  the zoo's register kernels at ZM_MARKETS (default 4, compare's) a dispatch, 1M paths: tapelab tune
#           --no-store over experiments/tune/cuda-several-markets-defaults.txt (the same two), each ==plain, the
#           winner timed again against the defaults 7 times interleaved (files zoo-markets-PRODUCT.json;
#           ZM_PRODUCTS: which; heat not by default, its compile too long)
#   ab      OLD_TAPELAB (another build's tapelab, e.g. the last call's) against this build's register kernels at
#           7 markets (and one), interleaved, two rounds: a change to the kernels timed in one call
#   ncu-configs  Nsight Compute on the 7-market register kernel under each of NCU_CONFIGS (`defaults` for nothing
#           set; e.g. "defaults market_unroll=7"): issue rate, stalls, memory and its local loads' L1 hits, the grid
#   ncu-source  Nsight Compute's warp-state samples of the 7-market register kernel by SASS instruction (the
#           SourceCounters section, the report's source page as CSV) and its dumped source, under NCU_CONFIG
#           (scripts/gpu/stall-sites.py reads the CSV: the samples by reason, the top sites, the loads waited on)
#   segments  the register kernel's segment count (periodic, rolled) at one and 7 markets: SEGS, default
#           12 16 20 24 32 48 64, two rounds
#   minblocks  one-market register kernels (the Asian at 4M, the zoo's heston and heat at 1M): nothing set
#           against min_blocks=10, two rounds (files minblocks-PRODUCT-x1-CONFIG-rN.json; MB_PRODUCTS and
#           MB_CONFIGS choose others, MB_KERNELS other kinds than register: register,tangent)
#   zoo     every zoo product on cuda, 1M paths, one market: compare's register and tangent rows (each
#           ==plain), and what --kernel auto picks (planner/kind_model.h's prediction beside the measurement);
#           every kernel compiled first, side by side (a kernel that takes over ZOO_COMPILE_S, default 150 s, is
#           left out, said)
#   zoo-compile  the zoo's compile phase started in the background, for the modes after it to overlap (a later
#           zoo or minblocks mode waits for it instead of compiling); ZOO_PRODUCTS: other products than the zoo's 11
# GPU_DRY=1 runs every mode against what this machine has (lavapipe, PoCL) with tiny jobs.
set -uo pipefail
K=${1:?call number}; shift
source scripts/gpu-call-lib.sh "$K"
deadline=${DEADLINE:-540}
T=$bin/tapelab
drv=$PWD/experiments/drivers
export PYTHONUNBUFFERED=1
export __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_PATH=/tmp/tapelab-nv-shader-cache
dry=${GPU_DRY:-0}
cuda=cuda; paths=4000000; zpaths=1000000; steps=(); [ "$dry" = 1 ] && { cuda=vulkan; paths=20000; zpaths=2000; steps=(--steps 16); }
source scripts/gpu/steps.sh  # left, step NEED NAME CMD...
sample_clocks
# Nsight Compute on the first tapelab kernel a command launches, the clocks as they are (the ncu modes)
NCU_RUN=(ncu --clock-control none --launch-count 1 --kernel-name regex:tapelab_kernel)
CMP=("$T" compare --product asian "${steps[@]}" --paths "$paths" --markets 7 --ladders 5 --fp32 --json)
# timed_row MODE KERNEL ROUND MARKETS [CONFIG]: compare's KERNEL rows at MARKETS a dispatch over CONFIG, each
# dispatch's kernel time in the JSON (TAPELAB_TIMELINE=1), into MODE-xMARKETS-CONFIG-rROUND.json, or
# MODE-KERNEL-xMARKETS-... where a mode times several kinds (KINDS=1; the kinds mode: without it the register
# rows of 2026-12-06b overwrote the tangent rows' files) (on engine ${eng:-cuda})
timed_row() {
  local tag=${5:-defaults}; tag=${tag//,/+}; tag=${tag//=/-}
  local mode=$1; [ "${KINDS:-0}" = 1 ] && mode="$1-$2"
  timed_compare "$mode-x$4-$tag-r$3.json" asian "$paths" "$4" "$2" ${5:+--config "$5"}
}
# timed_compare NAME PRODUCT PATHS MARKETS KERNELS [FLAG...]: compare's KERNELS rows of PRODUCT (the Asian at
# the call's steps) at MARKETS a dispatch, 5 ladders, fp32, each dispatch's kernel time in the JSON
# (TAPELAB_TIMELINE=1), into NAME (on engine ${eng:-cuda})
timed_compare() {
  local name=$1 product=$2 n=$3 markets=$4 kernels=$5; shift 5
  local st=(); [ "$product" = asian ] && st=("${steps[@]}")
  TAPELAB_TIMELINE=1 step 30 "$name" "$T" compare --product "$product" "${st[@]}" --paths "$n" --markets "$markets" \
    --ladders 5 --fp32 --json --engines "${eng:-$cuda}" --kernels "$kernels" "$@"
}
zoo=(${ZOO_PRODUCTS:-european asian basket heston cev barrier lookback lmm worstof neural heat})
Z=(compare --engines "$cuda" --kernels register,tangent --markets 1 --points 1 --fp32 --json)
zpids=()
# every zoo tape's register and tangent kernels compiled side by side, into the cache the zoo mode's rows hit
# (a kernel past ZOO_COMPILE_S, default 150 s, is left out and said: lmm-40's 22.6 MB tangent kernel took longer)
zoo_compile() {
  stamp "zoo compile"
  for p in "${zoo[@]}"; do
    timeout "${ZOO_COMPILE_S:-150}" "$T" "${Z[@]}" --product "$p" --paths 64 --ladders 1 > /dev/null 2> "$out/zoo-compile-$p.txt" &
    zpids+=($!)
  done
}
# wait for zoo_compile's compiles (a mode after zoo-compile that times the zoo's kernels)
zoo_wait() {
  for i in "${!zpids[@]}"; do wait "${zpids[$i]}"; echo "zoo compile ${zoo[$i]} exit $?" >> "$out/timeline.txt"; done
  zpids=()
}
for mode in "$@"; do
  case "$mode" in
    tests)
      for t in ${TESTS:-test_api_loops test_api_tangent test_api_pervalue test_api_regressions}; do
        [ -x "$bin/$t" ] && step 30 "$t.txt" "$bin/$t" --gtest_filter='*cuda*:*vulkan*:*opencl*:*FrontDoor*' --gtest_brief=1
      done ;;
    peers)
      P=(python3 "$drv/peers.py" --machine gpu --commit "$commit" --tapelab-bin "$T" --paths "$paths" --engines "$cuda")
      [ "$dry" = 1 ] && P+=(--steps 16 --no-jax --no-handwritten --passes value+5greeks)
      step 150 peers.log "${P[@]}" --out "$out/peers.csv" ;;
    loops)
      step 60 compare-tangent-unrolled.json "${CMP[@]}" --engines "$cuda" --kernels tangent --config loops=unrolled
      step 60 compare-price-unrolled.json "${CMP[@]}" --engines "$cuda" --kernels tangent --no-greeks --config loops=unrolled ;;
    ncu)
      if [ "$dry" = 1 ]; then echo "ncu: not in the dry run" >> "$out/timeline.txt"; continue; fi
      NCU=("${NCU_RUN[@]}"
           --section SpeedOfLight --section InstructionStats --section Occupancy --section LaunchStats
           --section WarpStateStats --section SchedulerStats --metrics smsp__inst_executed.sum,sm__cycles_elapsed.avg,gpu__time_duration.sum)
      PR=("$T" price --product asian --engine cuda --paths 1000000 ${NCU_CONFIG:+--config "$NCU_CONFIG"})
      step 30 ncu-x1-tangent.txt "${NCU[@]}" "${PR[@]}" --kernel tangent
      step 30 ncu-x1-register.txt "${NCU[@]}" "${PR[@]}" --kernel register
      step 30 ncu-x7-tangent.txt "${NCU[@]}" "${PR[@]}" --kernel tangent --ladder spot=97,98,99,100,101,102,103 --markets 7
      step 30 ncu-x7-register.txt "${NCU[@]}" "${PR[@]}" --kernel register --ladder spot=97,98,99,100,101,102,103 --markets 7 ;;
    ncu-source)  # where the 7-market register kernel's warps wait, by SASS instruction (NCU_CONFIG as ncu)
      if [ "$dry" = 1 ]; then echo "ncu-source: not in the dry run" >> "$out/timeline.txt"; continue; fi
      step 60 ncu-source-x7-register.txt "${NCU_RUN[@]}" \
        --section SourceCounters --section WarpStateStats --section SpeedOfLight --section SchedulerStats \
        --metrics smsp__inst_executed.sum,sm__cycles_elapsed.avg,gpu__time_duration.sum -f -o "$out/ncu-x7-register" \
        "$T" price --product asian --engine cuda --paths 1000000 ${NCU_CONFIG:+--config "$NCU_CONFIG"} --kernel register \
        --ladder spot=97,98,99,100,101,102,103 --markets 7 --dump "$out/dump-x7-register"
      step 30 ncu-source-x7-register.csv ncu -i "$out/ncu-x7-register.ncu-rep" --page source --csv --print-source sass ;;
    ncu-configs)  # the 7-market register kernel under each of NCU_CONFIGS (`defaults`: nothing set): issue rate,
                  # occupancy, stalls, memory, its local loads' L1 hits, the dispatch's grid (files ncu-x7-register-TAG.txt)
      if [ "$dry" = 1 ]; then echo "ncu-configs: not in the dry run" >> "$out/timeline.txt"; continue; fi
      for c in ${NCU_CONFIGS:-defaults}; do
        [ "$c" = defaults ] && c=""
        tag=${c:-defaults}; tag=${tag//,/+}; tag=${tag//=/-}
        step 30 "ncu-x7-register-$tag.txt" "${NCU_RUN[@]}" \
          --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
          --section SchedulerStats --section MemoryWorkloadAnalysis \
          --metrics smsp__inst_executed.sum,gpu__time_duration.sum,launch__grid_size,l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_hit.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_miss.sum \
          "$T" price --product asian --engine cuda --paths 1000000 --kernel register \
          --ladder spot=97,98,99,100,101,102,103 --markets 7 ${c:+--config "$c"}
      done ;;
    markets)  # the several-market defaults at other market counts than 7, against those before (see the header)
      if [ "$dry" = 1 ]; then echo "markets: not in the dry run (cuda's fields)" >> "$out/timeline.txt"; continue; fi
      old=${MARKETS_OLD:-market_unroll=1,min_blocks=12,cuda.reduce=beside}
      for round in 1 2; do
        for m in ${MARKET_COUNTS:-2 3 4 5 6}; do
          for c in "" "$old"; do
            tag=${c:-defaults}; tag=${tag//,/+}; tag=${tag//=/-}
            timed_compare "markets-x$m-$tag-r$round.json" asian "$paths" "$m" register --points "$m" ${c:+--config "$c"}
          done
        done
      done ;;
    zoo-markets)  # the zoo's register kernels at several markets, today's defaults against those before
      if [ "$dry" = 1 ]; then echo "zoo-markets: not in the dry run (cuda's fields)" >> "$out/timeline.txt"; continue; fi
      # heat is left out: its two 4-market register kernels had not compiled after 2.7 minutes (2026-12-07)
      for p in ${ZM_PRODUCTS:-heston cev barrier lookback european basket worstof}; do
        step 40 "zoo-markets-$p.json" "$T" tune --product "$p" --engine "$cuda" --markets "${ZM_MARKETS:-4}" \
          --paths "$zpaths" --shortlist experiments/tune/cuda-several-markets-defaults.txt --no-store --json
      done ;;
    ab)  # OLD_TAPELAB's register kernels (another build's tapelab) against this build's, interleaved: compare at
         # 7 markets a dispatch (and one), two rounds (files ab-register-x7-SIDE-rN.json)
      [ -x "${OLD_TAPELAB:-}" ] || { echo "ab: OLD_TAPELAB is not an executable" >> "$out/timeline.txt"; continue; }
      new_t=$T
      for round in 1 2; do
        for side in old new; do
          T=$new_t; [ "$side" = old ] && T=$OLD_TAPELAB
          timed_compare "ab-register-x7-$side-r$round.json" asian "$paths" 7 register
        done
      done
      T=$new_t ;;
    vkcl)
      ve=vulkan,opencl
      step 90 compare-vkcl.json "${CMP[@]}" --engines "$ve" ;;
    blocks)
      for b in 8 10 12; do
        step 40 "compare-tangent-x7-minblocks$b.json" "${CMP[@]}" --engines "$cuda" --kernels tangent --config "min_blocks=$b"
      done ;;
    paradigms)
      for tape in experiments/plans/paradigms/*.tape; do
        name=$(basename "$tape" .tape)
        for plan in experiments/plans/paradigms/"$name"-*.json; do
          step 40 "paradigms-$(basename "$plan" .json).txt" "$bin/gpu_kernels" --engine "$cuda" --tape "$tape" --plan "$plan" \
            --markets 1,7 --greeks on --kinds plain,register --paths "$zpaths" --reps 5 \
            --out "$out/paradigms-$(basename "$plan" .json).csv"
        done
      done ;;
    dispatch)
      x1=("" cuda.dispatches=1 cuda.reduce=beside workgroup=256 lanes=4 lanes=4,cuda.dispatches=1 loop_trip=step)
      x7=("" cuda.dispatches=1 cuda.reduce=beside workgroup=128 loop_trip=step min_blocks=10 loop_trip=step,min_blocks=10)
      for round in 1 2; do
        for c in "${x1[@]}"; do timed_row dispatch tangent "$round" 1 "$c"; done
        for c in "${x7[@]}"; do timed_row dispatch tangent "$round" 7 "$c"; done
      done ;;
    register)
      for round in 1 2; do
        for c in cuda.reduce=device cuda.reduce=beside; do timed_row register register "$round" 1 "$c"; done
        for c in cuda.reduce=device cuda.reduce=beside min_blocks=10,cuda.reduce=device; do
          timed_row register register "$round" 7 "$c"
        done
      done ;;
    kinds)
      for round in 1 2; do
        for k in tangent register; do
          for c in min_blocks=12,cuda.reduce=device min_blocks=10,cuda.reduce=device min_blocks=12,cuda.reduce=beside \
                   min_blocks=10,cuda.reduce=beside; do
            KINDS=1 timed_row kinds "$k" "$round" 7 "$c"
          done
        done
        for c in cuda.reduce=device cuda.reduce=beside; do KINDS=1 timed_row kinds register "$round" 1 "$c"; done
      done ;;
    opencl)
      ocl=opencl; [ "$dry" = 1 ] && ocl=vulkan
      for round in 1 2; do
        for c in "" workgroup=64 workgroup=128 lanes=2 workgroup=128,lanes=2; do
          eng=$ocl timed_row opencl tangent "$round" 1 "$c"
        done
        for c in "" workgroup=64 workgroup=128 lanes=2 workgroup=64,lanes=2; do
          eng=$ocl timed_row opencl tangent "$round" 7 "$c"
        done
      done ;;
    rolled)
      # the register kernel at 7 markets: its segments rolled with the market loop inside each trip (the
      # default: periodic), written out (loops=unrolled), the window plan of before, under min_blocks
      for round in 1 2; do
        for c in ${ROLLED_CONFIGS:-defaults loops=unrolled min_blocks=10 min_blocks=8}; do
          [ "$c" = defaults ] && c=""
          timed_row rolled register "$round" 7 "$c"
        done
        plans=("--strategy window" "--checkpoint 8" "--checkpoint 32"); [ -n "${ROLLED_PLANS+set}" ] && plans=()
        for plan in "${plans[@]}"; do
          tag=${plan#--}; tag=${tag// /-}
          timed_compare "rolled-x7-$tag-r$round.json" asian "$paths" 7 register $plan
        done
      done ;;
    segments)
      # the register kernel's segment count (rolled, periodic), one market and 7 a dispatch (compare at
      # --markets 7 times both), SEGS (default 12 16 20 24 32 48 64), two rounds
      for round in 1 2; do
        for n in ${SEGS:-12 16 20 24 32 48 64}; do
          timed_compare "segments-x7-checkpoint-$n-r$round.json" asian "$paths" 7 register --checkpoint "$n"
        done
      done ;;
    minblocks)
      # one-market register kernels (nothing set: their kind's min_blocks) against min_blocks=10, the Asian at
      # 4M paths and the zoo's heston and heat at 1M (compare --markets 1: the one-market job's plan), two rounds
      # (MB_PRODUCTS: other zoo products; MB_CONFIGS: other --config rows, `defaults` the defaults)
      zoo_wait
      for round in 1 2; do
        for p in ${MB_PRODUCTS:-asian heston heat}; do
          n=$paths; [ "$p" = asian ] || n=$zpaths
          for c in ${MB_CONFIGS:-defaults min_blocks=10}; do
            [ "$c" = defaults ] && c=""
            tag=${c:-defaults}; tag=${tag//=/-}
            timed_compare "minblocks-$p-x1-$tag-r$round.json" "$p" "$n" 1 "${MB_KERNELS:-register}" --points 1 ${c:+--config "$c"}
          done
        done
      done ;;
    wide)
      if [[ " ${WIDE:-basket20} " == *" lmm40 "* ]]; then
        "$T" tape --product lmm --param forwards=40 --out /tmp/lmm40.tape > /dev/null
        kinds=plain,register,tangent
        for c in ${LMM_CHUNKS:-8}; do  # the first chunk size with the register kernel, the others without
          step 240 "wide-lmm40-c$c.txt" "$bin/gpu_kernels" --engine "$cuda" --tape /tmp/lmm40.tape --markets 1 \
            --greeks on --kinds "$kinds" --paths "$zpaths" --reps 3 --compile-timeout 200 \
            --config "tangent_chunk=$c" --out "$out/wide-lmm40-c$c.csv"
          kinds=plain,tangent
        done
        step 90 wide-lmm40-auto.json "$T" run /tmp/lmm40.tape --engine "$cuda" --paths "$zpaths" --json
      fi
      if [[ " ${WIDE:-basket20} " == *" neural "* ]]; then  # 341 inputs: 86 tangent kernels of 4, 1.7 MB each
        "$T" tape --product neural --out /tmp/neural.tape > /dev/null
        step 400 "wide-neural-c${NEURAL_CHUNK:-4}.txt" "$bin/gpu_kernels" --engine "$cuda" --tape /tmp/neural.tape \
          --markets 1 --greeks on --kinds plain,register,tangent --paths "$zpaths" --reps 3 --compile-timeout 300 \
          --config "tangent_chunk=${NEURAL_CHUNK:-4}" --out "$out/wide-neural-c${NEURAL_CHUNK:-4}.csv"
        step 90 wide-neural-auto.json "$T" run /tmp/neural.tape --engine "$cuda" --paths "$zpaths" --json
      fi
      [[ " ${WIDE:-basket20} " == *" basket20 "* ]] &&
        timed_compare wide-basket20.json basket "$zpaths" 1 register,tangent --assets 20 --points 1 ;;
    zoo-compile)  # the zoo's kernels compiled in the background while the modes after it time (ZOO_COMPILE_S each)
      zoo_compile ;;
    zoo)
      [ ${#zpids[@]} -gt 0 ] || zoo_compile
      zoo_wait
      for p in "${zoo[@]}"; do step 15 "zoo-$p.json" timeout 60 "$T" "${Z[@]}" --product "$p" --paths "$zpaths" --ladders 3; done ;;
    *) echo "kernels-vs-peers.sh: unknown mode '$mode'" >&2; exit 2 ;;
  esac
done
stamp done
