#!/usr/bin/env bash
# Session 7, call 5: the best 7-market set (market loop, inlined draws, selection, launch bound 10;
# calls 3-4: 1,278-1,320) over the plan's segment count (compare's default window 16) and launch
# bounds 9 and 11: `tapelab price` alone (register kernel only, 4M paths, three runs each, paths/s
# from its header), then `compare` (same bits, medians) for the best at 1M and 4M.
set -uo pipefail
out=/tmp/res5; mkdir -p $out
bin=$PWD/build/gpu/bin
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
export TAPELAB_CACHE_DIR=/tmp/tapelab-cache
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$out/gpu.txt"
commit=$(cat build/gpu/COMMIT); echo "$commit" >> "$out/gpu.txt"
t0=$(date +%s)
stamp() { echo "$1 at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"; }
B=(TAPELAB_PATHS_PER_LANE=1 TAPELAB_KAHAN_LOCAL=0 TAPELAB_APPROX_MATH=1 TAPELAB_QUANTILE_SELECT=1 TAPELAB_MARKET_LOOP=1
   TAPELAB_CUDA_OUTLINE_DRAWS=0)
sweep() {  # sweep SEGMENTS MINBLOCKS: three runs at 4M (after one that compiles), market-paths/s from the header's paths/s
  local s=$1 mb=$2 r t
  for r in 1 2 3 4; do
    t=$(env "${B[@]}" TAPELAB_CUDA_MIN_BLOCKS=$mb timeout 60 "$bin/tapelab" price --product asian --steps 252 --fp32 --engine cuda \
        --kernel register --checkpoint $s --ladder spot=97,98,99,100,101,102,103 --markets 7 --paths 4000000 2>>"$out/progress.txt" |
        awk -F'|' 'NR == 1 { split($5, a, " "); print a[3] }')
    [ $r = 1 ] && continue  # the first run compiles
    echo "$s $mb $t $(awk -v t="$t" 'BEGIN { printf "%.1f", 7 * t / 1e6 }')" >> "$out/sweep.txt"
  done
}
for s in 8 12 16 20 24 32; do sweep $s 10; done
for mb in 9 11; do sweep 16 $mb; done
stamp "swept"
# best: highest median Mpath/s per (segments, bound)
best=$(python3 -c '
import sys, statistics, collections
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 4: v[(f[0], f[1])].append(float(f[3]))
m = max(v, key=lambda k: statistics.median(v[k]))
print(statistics.median(v[m]), m[0], m[1])' "$out/sweep.txt")
echo "best: $best (Mpath/s segments bound)" | tee -a "$out/timeline.txt"
read -r _ seg mb <<<"$best"
S=PATHS_PER_LANE=1+KAHAN_LOCAL=0+APPROX_MATH=1+QUANTILE_SELECT=1+MARKET_LOOP=1+CUDA_OUTLINE_DRAWS=0+CUDA_MIN_BLOCKS=$mb
mkdir -p "$out/cuda"
OUT=$out/cuda OCC_SETS="$S" OCC_EXTRA="--checkpoint $seg" OCC_JOBS=1 timeout 200 bash scripts/gpu-occupancy.sh compile
OUT=$out/cuda OCC_SETS="$S" OCC_EXTRA="--checkpoint $seg" OCC_PATHS='1000000 4000000 4000000' timeout 60 bash scripts/gpu-occupancy.sh time
stamp "compare"
