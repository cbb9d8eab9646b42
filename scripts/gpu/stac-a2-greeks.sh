#!/usr/bin/env bash
# STAC-A2-shaped Greeks on the lent GPU (issue 48): the multi-asset Heston basket (tape/products/wide.cpp),
# all 43 Greeks of the 5-asset 252-step problem in one adjoint pass against JAX's value_and_grad and against
# tapelab's own tangent kernel at full --wrt, in the same call; then the 10-asset 1,260-step problem
# (440,323 nodes, 108 Greeks) end to end with checkpointed kernels, the scratch layouts and segment lengths.
# Targets (issue 48): 5 x 252 >= 10x JAX and >= 20x the tangent kernel; 10 x 1,260 runs with a checkpointed
# kernel whose plain kernel does not fit.
#   here:   ./scripts/gpu-fetch-runtime.sh (once); cmake --build --preset ci; ./scripts/gpu-pack.sh build/ci;
#           a dry run of the mechanics (lavapipe, PoCL, JAX on the CPU, tiny sizes; about 5 minutes here):
#               GPU_DRY=1 bash scripts/gpu/stac-a2-greeks.sh 0 small large
#   there:  status first; carry [.gpu-runtime, build/gpu.tar.xz]; one call per mode (each fits 570 s):
#               source scripts/gpu-env.sh; timeout 590 bash scripts/gpu/stac-a2-greeks.sh K small; tar czf $OUT/callK.tgz -C /tmp resK
#               source scripts/gpu-env.sh; timeout 590 bash scripts/gpu/stac-a2-greeks.sh K large; tar czf $OUT/callK.tgz -C /tmp resK
#           (K: the call's number; results in /tmp/resK: each step's output, timeline.txt, progress.txt, summary.txt)
# Modes (a step is skipped when less time is left than it needs; GPU_S, default 570 s, from the start):
#   small   5 assets x 252 steps, 1M paths, fp32, one market: JAX (experiments/peers/jax_wide.py, value_and_grad
#           over a lax.scan, draws in the jitted function); tapelab compare on cuda with the plain, register,
#           scratch and tangent (every input) kernels (compile phase first, then the timed ladders); the
#           crossover by --wrt subsets (experiments/tangent_crossover --products hestonbasket --wide-size full);
#           summary.txt: best adjoint Mpath/s and Greeks x Mpath/s against JAX's and the tangent kernel's
#   large   10 assets x 1,260 steps, 100K paths: experiments/scratch_sweep on cuda (plain, register 16 segments,
#           scratch AoS and SoA at segment lengths 200, 645 = sqrt(nodes), 2000, 6000; every kernel compiled
#           first, --jobs 8), then JAX at the same size (its memory may not suffice: the step says so)
set -uo pipefail
K=${1:?stac-a2-greeks.sh: give the call number}; shift
out=/tmp/res$K; rm -rf "$out"; mkdir -p "$out"
t0=$(date +%s)
stamp() { echo "$1 at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"; }
if [ "${GPU_DRY:-0}" = 1 ]; then  # here, without a GPU: the mechanics only
  bin=$PWD/build/ci/cli; xbin=$PWD/build/ci/experiments; commit=dry; deadline=${GPU_S:-900}
  engine=opencl; small=(--assets 2 --steps 6); large=(--assets 3 --steps 20); paths=4000; lpaths=2000
  jax=(--platform cpu --fp64 --repeats 2); wide=quick; jobs=1; seglens=24,60,200
  export PYTHONPATH=$PWD/build/ci/python${PYTHONPATH:+:$PYTHONPATH}
else
  bin=$PWD/build/gpu/bin; xbin=$bin; commit=$(cat build/gpu/COMMIT); deadline=${GPU_S:-570}
  engine=cuda; small=(--assets 5 --steps 252); large=(--assets 10 --steps 1260); paths=1000000; lpaths=100000
  jax=(--repeats 5); wide=full; jobs=8; seglens=200,645,2000,6000
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
export TAPELAB_COMPILE_TIMEOUT=${TAPELAB_COMPILE_TIMEOUT:-400}  # no kernel compiles past what a call can afford
export PYTHONUNBUFFERED=1
left() { echo $(( deadline - ($(date +%s) - t0) )); }
# step NEED NAME CMD...: CMD (stdout into NAME, stderr into progress.txt) when NEED seconds are left, cut at
# what is left; its exit status goes to timeline.txt.
step() {
  local need=$1 name=$2; shift 2
  local l; l=$(left)
  if (( l < need )); then echo "skipped $name: $l s left, needs $need" | tee -a "$out/timeline.txt"; return; fi
  stamp "$name"
  echo "=== $name: $*" >> "$out/progress.txt"
  timeout "$l" "$@" > "$out/$name" 2>> "$out/progress.txt"
  echo "$name exit $?" >> "$out/timeline.txt"
}
peers=experiments/peers; [ -d gpu-snap/experiments/peers ] && peers=gpu-snap/experiments/peers
"$T" tape --product hestonbasket "${small[@]}" --summary > "$out/small-tape.txt" 2>&1
"$T" tape --product hestonbasket "${large[@]}" --summary > "$out/large-tape.txt" 2>&1
for mode in "$@"; do
  stamp "mode $mode"
  case "$mode" in
  small)
    P=(--product hestonbasket "${small[@]}")
    step 60 jax-small.csv "$py" "$peers/jax_wide.py" --products hestonbasket "${small[@]}" --paths "$paths" "${jax[@]}"
    # compare compiles its kernels first (all of them, before any timing), then times the ladders: one point, one market.
    step 200 compare-small.json "$T" compare "${P[@]}" --engines "$engine" --kernels register,scratch,tangent \
        --markets 1 --points 1 --ladders 5 --paths "$paths" --fp32 --json
    step 120 crossover-small.csv "$xbin/tangent_crossover" --engines "$engine" --products hestonbasket --wide-size "$wide" \
        --kinds plain,tangent,register --paths "$paths" --reps 3 --commit "$commit"
    python3 - "$out" > "$out/summary.txt" 2>&1 <<'PY'
import csv, json, os, sys
out = sys.argv[1]
def rows_of(name):
    p = os.path.join(out, name)
    return [l for l in open(p) if l.strip() and not l.startswith("#")] if os.path.exists(p) else []
jax = list(csv.DictReader(rows_of("jax-small.csv")))
try:
    cmp = json.load(open(os.path.join(out, "compare-small.json")))
except (OSError, ValueError) as e:
    sys.exit(f"no compare-small.json: {e}")
rows = [r for r in cmp["rows"] if "mpaths_per_second" in r]
for r in rows:
    print(f"tapelab {r['engine']} {r['kernel']:12s} {r['result']['kernel_kind']:8s} {r['mpaths_per_second']:10.2f} Mpath/s "
          f"{r['mgreek_paths_per_second']:10.1f} MGreek-path/s  same bits: {r['identical_to_plain']}")
for j in jax:
    print(f"jax     {j['product']} {j['params']}: {float(j['mpaths_per_s']):10.2f} Mpath/s {float(j['mgreek_paths_per_s']):10.1f} "
          f"MGreek-path/s")
adj = [r for r in rows if r["result"]["kernel_kind"] != "tangent"]
tan = [r for r in rows if r["result"]["kernel_kind"] == "tangent"]
if adj:
    best = max(adj, key=lambda r: r["mpaths_per_second"])
    print(f"best adjoint: {best['result']['kernel_kind']} {best['mpaths_per_second']:.2f} Mpath/s, all {best['greeks_per_path']} Greeks")
    if jax:
        print(f"  vs JAX value_and_grad: {best['mpaths_per_second'] / float(jax[0]['mpaths_per_s']):.2f}x (target >= 10x)")
    if tan:
        print(f"  vs tapelab's tangent kernel at full --wrt: {best['mpaths_per_second'] / tan[0]['mpaths_per_second']:.2f}x (target >= 20x)")
PY
    ;;
  large)
    "$T" tape --product hestonbasket "${large[@]}" --out "$out/large.tape" 2>> "$out/progress.txt"
    step 300 sweep-large.csv "$xbin/scratch_sweep" --engines "$engine" --tape "$out/large.tape" --seglens "$seglens" \
        --paths "$lpaths" --reps 3 --jobs "$jobs"
    step 60 jax-large.csv "$py" "$peers/jax_wide.py" --products hestonbasket "${large[@]}" --paths "$lpaths" "${jax[@]}"
    rm -f "$out/large.tape"   # 6 MB: the summary has its sizes (large-tape.txt)
    ;;
  *) echo "stac-a2-greeks.sh: unknown mode '$mode' (small, large)" | tee -a "$out/timeline.txt" ;;
  esac
done
stamp done
