#!/usr/bin/env bash
# STAC-A2-shaped Greeks on the lent GPU (issue 48): the multi-asset Heston basket (tape/products/wide.cpp),
# all 43 Greeks of the 5-asset 252-step problem in one adjoint pass against JAX's value_and_grad and against
# tapelab's own tangent kernel at full --wrt, in the same call; then the 10-asset 1,260-step problem
# (440,323 nodes, 108 Greeks) end to end with checkpointed kernels, the scratch layouts and segment lengths.
# Targets (issue 48): 5 x 252 >= 10x JAX and >= 20x the tangent kernel; 10 x 1,260 runs with a checkpointed
# kernel whose plain kernel does not fit.
#   here:   ./scripts/gpu-fetch-runtime.sh (once); cmake --build --preset ci; ./scripts/gpu-pack.sh build/ci;
#           the small mode's cuda kernels compiled here and packed (NVRTC takes minutes a 37,696-node kernel: a call
#           cannot afford them; hours on the loaded 2-core VM), then carried as build/cuda-cache.tar.xz:
#               bash scripts/gpu/stac-a2-greeks.sh 0 precompile
#           a dry run of the mechanics (PoCL, JAX on the CPU, tiny sizes; about 8 minutes here):
#               GPU_DRY=1 bash scripts/gpu/stac-a2-greeks.sh 0 small large
#   there:  status first; carry [.gpu-runtime, build/gpu.tar.xz, build/cuda-cache.tar.xz]; one call per mode:
#               source scripts/gpu-env.sh; timeout 590 bash scripts/gpu/stac-a2-greeks.sh K small; tar czf $OUT/callK.tgz -C /tmp resK
#               source scripts/gpu-env.sh; timeout 590 bash scripts/gpu/stac-a2-greeks.sh K large; tar czf $OUT/callK.tgz -C /tmp resK
#           (K: the call's number; results in /tmp/resK: each step's output, timeline.txt, progress.txt, summary.txt)
# Modes (a step is skipped when less time is left than it needs; GPU_S, default 570 s, from the start; SWEEP_SMALL=0
# leaves small's scratch_sweep out and CROSSOVER_SMALL=0 its tangent_crossover (their kernels not yet in the carried
# cache: JAX and the nothing-set rows alone); no kernel
# compiles past TAPELAB_COMPILE_TIMEOUT, default 400 s there):
#   small       5 assets x 252 steps, 1M paths, fp32, one market: JAX (experiments/peers/jax_wide.py, value_and_grad
#               over a lax.scan, draws in the jitted function); tangent_crossover on cuda (plain, register 16, and the
#               tangent kernel at --wrt 1, 8 and all 43 inputs) and scratch_sweep (plain, register, scratch AoS and
#               SoA at segment lengths 100, 194 = sqrt(nodes), 400); tapelab run with nothing set (--kernel auto: the
#               periodic plan's register kernel, rolled), 3 rounds; summary.txt: the best adjoint kernel's Mpath/s
#               against JAX's and the full-wrt tangent kernel's (the issue's 10x and 20x)
#   large       10 assets x 1,260 steps (440,323 nodes, 108 Greeks), 100K paths: the register kernel under periodic
#               plans of 63, 126 and 252 segments (rolled: one segment's code, the bookmarks in arrays) and the middle
#               one with the stored draws in aos, compiled side by side, then 3 interleaved rounds of tapelab run;
#               the kernels' values and Greeks bit for bit against each other (summary-large.txt); then JAX at that
#               size. Its plain kernel does not fit: NVRTC did not finish it in 3,000 s on the VM
#   segments    5 x 252, 1M paths: the register kernel under periodic plans of SMALL_SEGS (default 32 63 126)
#               segments, rolled, nothing set but each field of SMALL_CONFIGS (NAME=VALUE ...) and each kernel kind
#               of SMALL_KERNELS (tangent: all 43 inputs; its bits are not the adjoint's), against the
#               nothing-set run and JAX, every kernel compiled first side by side, 3 rounds (summary-segments.txt)
#   large-auto  10 x 1,260, 100K paths, nothing set: compiled once, 3 rounds (summary-large-auto.txt)
#   precompile  (here) the small mode's tapelab commands on the compile-only cuda engine, then
#               scripts/gpu-cache-pack.sh with what they compiled
set -uo pipefail
K=${1:?stac-a2-greeks.sh: give the call number}; shift
out=/tmp/res$K; rm -rf "$out"; mkdir -p "$out"
t0=$(date +%s)
stamp() { echo "$1 at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"; }
if [ "${1:-}" = precompile ] || [[ " $* " == *" precompile "* ]]; then  # here, cuda compile-only: the small mode's kernels
  bin=$PWD/build/ci/cli; xbin=$PWD/build/ci/experiments; commit=precompile; deadline=${GPU_S:-36000}
  engine=cuda; small=(--assets 5 --steps 252); large=(--assets 10 --steps 1260); paths=1000000; lpaths=100000
  jax=(); wide=full; jobs=2; lsegs="63 126 252"; sseglens=100,194,400; sbatch=0; lbatch=0
elif [ "${GPU_DRY:-0}" = 1 ]; then  # here, without a GPU: the mechanics only
  bin=$PWD/build/ci/cli; xbin=$PWD/build/ci/experiments; commit=dry; deadline=${GPU_S:-900}
  engine=opencl; small=(--assets 3 --steps 4); large=(--assets 3 --steps 20); paths=4000; lpaths=2000  # small: --wide-size quick's
  jax=(--platform cpu --fp64 --repeats 2); wide=quick; jobs=1; lsegs="2 4 5"; sseglens=24,60; sbatch=1000; lbatch=1000
  export PYTHONPATH=$PWD/build/ci/python${PYTHONPATH:+:$PYTHONPATH}
else
  bin=$PWD/build/gpu/bin; xbin=$bin; commit=$(cat build/gpu/COMMIT); deadline=${GPU_S:-570}
  engine=cuda; small=(--assets 5 --steps 252); large=(--assets 10 --steps 1260); paths=1000000; lpaths=100000
  jax=(--repeats 5); wide=full; jobs=8; lsegs="63 126 252"; sseglens=100,194,400
  # JAX's residuals at once: 63.5 GiB for 1M paths of 5 x 252, 63.4 GiB for 100K of 10 x 1,260 (both out of memory
  # on the H100, 2026-12-06b): chunks of 125,000 and 10,000 paths (~8 and ~6 GiB)
  sbatch=125000; lbatch=10000
  export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
  nvidia-smi --query-gpu=name,clocks.max.sm,driver_version,power.limit,memory.total --format=csv > "$out/gpu.txt"
  echo "$commit" >> "$out/gpu.txt"
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,utilization.gpu,memory.used \
      --format=csv -lms 200 > "$out/smi.csv" 2>&1 &
  smi=$!
  trap 'kill $smi 2>/dev/null' EXIT
fi
T=$bin/tapelab
py=${PYTHON:-python3}; [ "${GPU_DRY:-0}" = 1 ] && py=${PYTHON:-/usr/bin/python3}  # with numpy and jax
export TAPELAB_CACHE_DIR=${TAPELAB_CACHE_DIR:-/tmp/tapelab-cache}
# No kernel compiles past what a call can afford (precompile: NVRTC took 7-15 min a 5 x 252 kernel on the loaded
# 2-core VM; the H200 host's cores are faster and idle).
[[ " $* " == *" precompile "* ]] || export TAPELAB_COMPILE_TIMEOUT=${TAPELAB_COMPILE_TIMEOUT:-400}
export PYTHONUNBUFFERED=1
source scripts/gpu/steps.sh  # left, step NEED NAME CMD...
# variants_timed PREFIX SETTER PATHS VARIANT...: each variant's tapelab run (`SETTER VARIANT N` sets the array
# `run` to it at N paths) compiled side by side at 64 paths (PREFIX-compile-VARIANT.txt), then 3 interleaved
# rounds at PATHS into PREFIX-VARIANT-rROUND.json (scripts/gpu/variant-runs.py DIR PREFIX sums them up)
run=()
variants_timed() {
  local prefix=$1 setter=$2 n=$3 v i=0 round; shift 3
  local pids=()
  stamp "$prefix compile"
  for v in "$@"; do
    "$setter" "$v" 64
    timeout $(( $(left) > 60 ? $(left) - 60 : 1 )) "${run[@]}" > /dev/null 2> "$out/$prefix-compile-${v//[:=]/-}.txt" &
    pids+=($!)
  done
  for v in "$@"; do wait "${pids[$i]}"; echo "$prefix compile $v exit $?" >> "$out/timeline.txt"; i=$((i + 1)); done
  for round in 1 2 3; do
    for v in "$@"; do "$setter" "$v" "$n"; step 30 "$prefix-${v//[:=]/-}-r$round.json" "${run[@]}"; done
  done
}
peers=experiments/peers; [ -d gpu-snap/experiments/peers ] && peers=gpu-snap/experiments/peers
"$T" tape --product hestonbasket "${small[@]}" --summary > "$out/small-tape.txt" 2>&1
"$T" tape --product hestonbasket "${large[@]}" --summary > "$out/large-tape.txt" 2>&1
for mode in "$@"; do
  stamp "mode $mode"
  case "$mode" in
  small | precompile)
    # The same two tapelab commands in both modes, so that the kernels compiled here (precompile: cuda is
    # compile-only without a driver) are the cache's hits there: tangent_crossover (plain, register 16 and the
    # tangent kernel at --wrt subsets and all 43 inputs) and scratch_sweep (plain, register, scratch AoS/SoA).
    "$T" tape --product hestonbasket "${small[@]}" --out "$out/small.tape" 2>> "$out/progress.txt"
    [ "$mode" = small ] && step 60 jax-small.csv "$py" "$peers/jax_wide.py" --products hestonbasket "${small[@]}" \
        --paths "$paths" --batch "$sbatch" "${jax[@]}"
    [ "${CROSSOVER_SMALL:-1}" = 1 ] && step 120 crossover-small.csv "$xbin/tangent_crossover" --engines "$engine" --products hestonbasket --wide-size "$wide" \
        --kinds plain,tangent,register --wrt-counts 1,8 --paths "$paths" --reps 5 --commit "$commit"
    [ "${SWEEP_SMALL:-1}" = 1 ] && step 120 sweep-small.csv "$xbin/scratch_sweep" --engines "$engine" --tape "$out/small.tape" --seglens "$sseglens" \
        --paths "$paths" --reps 5 --jobs "$jobs"
    if [ "$mode" = small ]; then  # nothing set: --kernel auto's kind and plan (43 inputs: the adjoint, periodic, rolled)
      for round in 1 2 3; do step 40 "auto-small-r$round.json" "$T" run "$out/small.tape" --engine "$engine" --paths "$paths" --json; done
    fi
    rm -f "$out/small.tape"
    [ "$mode" = precompile ] && { stamp "packing the cuda cache"; ./scripts/gpu-cache-pack.sh "$(date -d @"$t0" '+%Y-%m-%d %H:%M:%S')"; }
    "$py" - "$out" > "$out/summary.txt" 2>&1 <<'PY'
import csv, os, sys
out = sys.argv[1]
def rows(name):
    p = os.path.join(out, name)
    return list(csv.DictReader([l for l in open(p) if l.strip() and not l.startswith("#")])) if os.path.exists(p) else []
jax, cross, sweep = rows("jax-small.csv"), rows("crossover-small.csv"), rows("sweep-small.csv")
import glob, json, statistics
auto = []
for p in sorted(glob.glob(os.path.join(out, "auto-small-r*.json"))):
    try:
        auto.append(json.load(open(p)))
    except ValueError:
        pass
if auto:
    a = auto[0]
    print(f"tapelab {a['engine']} nothing set ({a['kernel_kind']}, {a['strategy']} {a['segments']} segments): "
          f"{statistics.median(r['paths_per_second'] for r in auto) / 1e6:10.2f} Mpath/s (median of {len(auto)}); "
          f"{a['kernel_choice']}; rounds agree: {all(r['greeks'] == a['greeks'] and r['value'] == a['value'] for r in auto)}")
full = max((int(r["inputs"]) for r in cross), default=len(auto[0]["greeks"]) if auto else 0)
timed = lambda r: r.get("mpaths_per_s") not in (None, "")  # noqa: E731
for r in cross:
    if timed(r):
        print(f"tapelab {r['engine']} {r['kind']:8s} --wrt {r['inputs']:>3}: {float(r['mpaths_per_s']):10.2f} Mpath/s "
              f"{float(r['mgreek_paths_per_s']):10.1f} MGreek-path/s  same value bits as plain: {r['value_bits_equal_plain']}")
for r in sweep:
    if r.get("mpath_s"):
        print(f"tapelab {r['engine']} {r['kernel']:8s} {r['layout'] or '-':3s} seglen {r['seglen']:>5}: {float(r['mpath_s']):10.2f} "
              f"Mpath/s  bits as plain: {r['bit_exact_vs_plain']}")
for j in jax:
    print(f"jax     {j['params']}: {float(j['mpaths_per_s']):10.2f} Mpath/s {float(j['mgreek_paths_per_s']):10.1f} MGreek-path/s")
adj = [float(r["mpaths_per_s"]) for r in cross if timed(r) and r["kind"] != "tangent"]
adj += [float(r["mpath_s"]) for r in sweep if r.get("mpath_s")]
if auto and auto[0]["kernel_kind"] != "tangent":
    adj.append(statistics.median(r["paths_per_second"] for r in auto) / 1e6)
tan = [float(r["mpaths_per_s"]) for r in cross if timed(r) and r["kind"] == "tangent" and int(r["inputs"]) == full]
if adj:
    best = max(adj)
    print(f"best adjoint kernel: {best:.2f} Mpath/s, all {full} Greeks in one reverse sweep")
    if jax:
        print(f"  vs JAX value_and_grad: {best / float(jax[0]['mpaths_per_s']):.2f}x (target >= 10x)")
    if tan:
        print(f"  vs tapelab's tangent kernel at full --wrt: {best / tan[0]:.2f}x (target >= 20x)")
PY
    ;;
  segments)
    # The 5 x 252 basket's register kernel under periodic plans of more segments than the default 16 (rolled:
    # one segment's code; on the Asian, 32 segments ran the one-market register kernel 1,014 against 901 at
    # 16, runs/h100-2026-12-06c/call2), compiled side by side, then 3 interleaved rounds of tapelab run beside
    # the nothing-set run (16 segments); JAX in the same call; bits across the kernels (summary-segments.txt)
    "$T" tape --product hestonbasket "${small[@]}" --out "$out/small.tape" 2>> "$out/progress.txt"
    step 60 jax-small.csv "$py" "$peers/jax_wide.py" --products hestonbasket "${small[@]}" --paths "$paths" --batch "$sbatch" "${jax[@]}"
    # variants: speriodicN (the periodic plan of N segments) for N in SMALL_SEGS, and cfg-NAME-VALUE (nothing set
    # but the field NAME=VALUE) for each of SMALL_CONFIGS (default none)
    svariants=()
    for n in ${SMALL_SEGS:-32 63 126}; do
      "$T" plan "$out/small.tape" --strategy periodic --checkpoint "$n" --out "$out/speriodic$n.json" > /dev/null 2>> "$out/progress.txt"
      svariants+=("speriodic$n")
    done
    for c in ${SMALL_CONFIGS:-}; do svariants+=("cfg-${c//[=,]/-}"); done
    for k in ${SMALL_KERNELS:-}; do svariants+=("kernel-$k"); done
    set_srun() {  # the tapelab run of the small tape under variant $1 at $2 paths
      run=("$T" run "$out/small.tape" --engine "$engine" --paths "$2" --json)
      case "$1" in
        auto) ;;
        speriodic*) run+=(--plan "$out/$1.json") ;;
        cfg-*) for c in ${SMALL_CONFIGS:-}; do [ "cfg-${c//[=,]/-}" = "$1" ] && run+=(--config "$c"); done ;;
        kernel-*) run+=(--kernel "${1#kernel-}") ;;
      esac
    }
    variants_timed segments set_srun "$paths" auto "${svariants[@]}"
    rm -f "$out/small.tape"
    "$py" scripts/gpu/variant-runs.py "$out" segments --jax "$out/jax-small.csv" > "$out/summary-segments.txt" 2>&1
    ;;
  large-auto)
    # The 10 x 1,260 basket with nothing set (auto's kind, plan and segment count), compiled once, then 3 rounds
    # of tapelab run, 100K paths (summary-large-auto.txt)
    "$T" tape --product hestonbasket "${large[@]}" --out "$out/large.tape" 2>> "$out/progress.txt"
    set_large_auto() { run=("$T" run "$out/large.tape" --engine "$engine" --paths "$2" --json); }
    variants_timed largeauto set_large_auto "$lpaths" nothing-set
    rm -f "$out/large.tape"
    "$py" scripts/gpu/variant-runs.py "$out" largeauto > "$out/summary-large-auto.txt" 2>&1
    ;;
  large)
    # The plain kernel of this tape does not fit: a straight-line reverse sweep of 440,323 values, which NVRTC did
    # not finish in 3,000 s on the VM. The register kernel under the periodic plan runs its alike segments as one
    # rolled loop (the bookmarks in arrays, local memory): NVRTC 22 s on the VM at 126 segments (1.8 MB of
    # source, 96 registers, a 15 KB stack frame). The segment length is the plan's segment count (lsegs: 20, 10
    # and 5 time steps a segment); the layout is the stored draws' (soa against aos at the middle count). Every
    # kernel is compiled first, side by side, then timed in 3 interleaved rounds of tapelab run (one dispatch
    # set a run, --json); the summary checks each kernel's value and every Greek bit for bit against the
    # others' (each is the plain kernel's by the engine's promise; plain == checkpointed is CTest's, on the
    # small sizes, on every engine).
    "$T" tape --product hestonbasket "${large[@]}" --out "$out/large.tape" 2>> "$out/progress.txt"
    variants=()
    for n in $lsegs; do
      "$T" plan "$out/large.tape" --strategy periodic --checkpoint "$n" --out "$out/periodic$n.json" > /dev/null 2>> "$out/progress.txt"
      variants+=("periodic$n")
    done
    mid=$(echo $lsegs | cut -d' ' -f2); variants+=("periodic$mid:layout=aos")
    set_large_run() {  # the tapelab run of the large tape under variant $1 (PLAN[:CONFIG]) at $2 paths
      local plan=${1%%:*} cfg=""; [[ $1 == *:* ]] && cfg=${1#*:}
      run=("$T" run "$out/large.tape" --engine "$engine" --plan "$out/$plan.json" --paths "$2" --json ${cfg:+--config "$cfg"})
    }
    variants_timed large set_large_run "$lpaths" "${variants[@]}"
    step 60 jax-large.csv "$py" "$peers/jax_wide.py" --products hestonbasket "${large[@]}" --paths "$lpaths" --batch "$lbatch" "${jax[@]}"
    "$py" scripts/gpu/variant-runs.py "$out" large --jax "$out/jax-large.csv" > "$out/summary-large.txt" 2>&1
    rm -f "$out/large.tape"   # 6 MB: the summary has its sizes (large-tape.txt)
    ;;
  *) echo "stac-a2-greeks.sh: unknown mode '$mode' (small, segments, large-auto, large, precompile)" | tee -a "$out/timeline.txt" ;;
  esac
done
stamp done
