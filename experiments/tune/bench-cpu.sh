#!/usr/bin/env bash
# The tuner on the CPU-served engines (issue "Fast by default"): for each engine, `tapelab tune` on the
# 252-step Asian within a budget, then the tuned kernel against the engine's defaults, `tapelab price`
# alternating tuned / --untuned three times each (one market, value + 5 Greeks, each engine's
# precision), medians and spreads. CPU timings: they check the mechanism, not a GPU.
#   experiments/tune/bench-cpu.sh [OUT_DIR]   (env: BENCH_ENGINES, BENCH_BUDGET_S, BENCH_PATHS, TAPELAB_BIN)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-/tmp/tapelab-tune-bench}
mkdir -p "$out"
T=${TAPELAB_BIN:-build/ci/cli/tapelab}
budget=${BENCH_BUDGET_S:-300}
paths=${BENCH_PATHS:-100000}
export TAPELAB_CACHE_DIR=${TAPELAB_CACHE_DIR:-$out/cache}
job=(--product asian --steps 252)
printf '%-8s %10s %10s %8s %10s %8s %s\n' engine tuned_Mp/s spread defaults spread ratio winner | tee "$out/summary.txt"
for e in ${BENCH_ENGINES:-cpu-jit vulkan opencl}; do
  "$T" tune "${job[@]}" --engine "$e" --paths "$paths" --budget-seconds "$budget" > "$out/tune-$e.txt" 2> "$out/tune-$e.err"
  "$T" price "${job[@]}" --engine "$e" --paths "$paths" --json > /dev/null 2>&1  # warm both kernels' caches
  "$T" price "${job[@]}" --engine "$e" --paths "$paths" --untuned --json > /dev/null 2>&1
  for i in 1 2 3; do
    "$T" price "${job[@]}" --engine "$e" --paths "$paths" --json > "$out/price-$e-tuned-$i.json"
    "$T" price "${job[@]}" --engine "$e" --paths "$paths" --untuned --json > "$out/price-$e-untuned-$i.json"
  done
  python3 - "$out" "$e" <<'EOF' | tee -a "$out/summary.txt"
import json, statistics, sys
out, e = sys.argv[1:]
def runs(kind):
    return [json.load(open(f"{out}/price-{e}-{kind}-{i}.json")) for i in (1, 2, 3)]
t, u = runs("tuned"), runs("untuned")
def stat(rs):
    v = [r["paths_per_second"] / 1e6 for r in rs]
    m = statistics.median(v)
    return m, (max(v) - min(v)) / m
(tm, ts), (um, us) = stat(t), stat(u)
winner = t[0]["tuned"] and (t[0]["strategy"] + " " + str(t[0]["segments"]) + " | " + t[0]["config"]) or "(no winner stored)"
print(f"{e:8s} {tm:10.4g} {100*ts:7.1f}% {um:8.4g} {100*us:7.1f}% {tm/um:7.3f}x {winner}")
EOF
done
