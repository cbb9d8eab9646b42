#!/usr/bin/env bash
# Occupancy fields on the lent H200 (issue 14, "many markets without spills"): the 7-point ladder in
# one 7-market register dispatch (252-step Asian, fp32, value + 5 Greeks, compare's defaults: window
# 16 segments, sequential market order) on cuda, for every launch bound (`--config min_blocks=N`) in
# OCC_BLOCKS x where the Kahan sums live (`--config sums=...`) in OCC_PLACES, at each path count in
# OCC_PATHS. Each combination is a kernel configuration over the engine's defaults (docs/config.md,
# `tapelab config --list`; math=ieee unless a set says math=approx). Carry .gpu-runtime and
# build/gpu (scripts/gpu-pack.sh); results land in $OUT (./gpu-out elsewhere).
#   source scripts/gpu-env.sh; bash scripts/gpu-occupancy.sh [compile] [time]   (default: both)
#   compile  every combination's kernels (compare's four: plain and register, x1 and x7) built side
#            by side, OCC_JOBS compares at once (default 6, four NVRTC builds each), into
#            TAPELAB_CACHE_DIR (cold: several minutes; a call cut short can be repeated, cached
#            kernels are not built again). Run it in its own call, then `time` in the next.
#   time     one `tapelab compare --engines cuda --kernels register --paths P --markets 7 --points 7
#            --fp32 --config TEXT` per combination and path count, one after another (~200 s warm); full
#            tables in occupancy.txt, one line per combination in occupancy-summary.txt: register x7 and
#            x1 Mpath/s, the x7 kernel's registers and spill bytes, 'same bits' against this
#            combination's plain kernel, and whether price/delta/vega equal the first combination's
#            bit for bit.
# Field values: OCC_BLOCKS "default 4 5 6 8 10" (default: the engine's min_blocks, cuda's 10; 0: no second
# launch bound), OCC_PLACES "local registers" (the sums=... values), OCC_PATHS "4000000 1000000". A smoke
# test anywhere: OCC_BIN=build/ci/cli OCC_ENGINE=vulkan OCC_BLOCKS=default OCC_EXTRA='--steps 24'
# OCC_PATHS=20000 (min_blocks is a cuda and hip field: other engines refuse it).
# OCC_SETS instead of OCC_BLOCKS x OCC_PLACES: configurations, space-separated, each a '+'- or
# ','-joined list of the configuration's NAME=VALUE fields, or '-' for the defaults, e.g.
#   OCC_SETS='- lanes=1+sums=registers lanes=1+sums=registers+math=approx'
# (the summary's blocks column then shows the set, its kahan column the word 'set'). Fields that change
# the bits (lanes, workgroup, math) make 'as first' no; 'same bits' (against the set's own plain kernel)
# must stay yes. (Before 2026-12-02 these were TAPELAB_CUDA_MIN_BLOCKS, TAPELAB_KAHAN_LOCAL and other
# variables, now retired: api/knobs.cpp refuses them.)
# OCC_KERNELS (default register) is compare's --kernels: e.g. register,scratch puts the scratch rows in
# occupancy.txt (the summary stays the register kernel's).
# OCC_NOGREEKS=1 (1 only) adds a price-only compare per set and path count (occupancy.txt; the summary's
# 'price x7' and 'price x1': the plain kernel fused and one market per call, Mpath/s).
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
bin=${OCC_BIN:-$PWD/build/gpu/bin}
engine=${OCC_ENGINE:-cuda}
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
export TAPELAB_CACHE_DIR=${TAPELAB_CACHE_DIR:-/tmp/tapelab-cache}
blocks=(${OCC_BLOCKS:-default 4 5 6 8 10})
places=(${OCC_PLACES:-local registers})
paths=(${OCC_PATHS:-4000000 1000000})
say() { echo "=== $*"; }

# knobs BLOCKS PLACE: the --config text of one combination ("" for the engine's defaults).
knobs() {
  if [ "$2" = set ]; then  # knobs SET set: OCC_SETS's form
    [ "$1" = - ] || tr '+' ',' <<<"$1"
    return
  fi
  local k="sums=$2"
  [ "$1" = default ] || k+=",min_blocks=$1"
  echo "$k"
}

compare() {  # compare BLOCKS PLACE PATHS [extra compare flags]
  local b=$1 p=$2 n=$3; shift 3
  local cfg; cfg=$(knobs "$b" "$p")
  "$bin/tapelab" compare --engines "$engine" --kernels "${OCC_KERNELS:-register}" --paths "$n" --markets 7 \
      --points 7 --fp32 ${cfg:+--config "$cfg"} ${OCC_EXTRA:-} "$@"
}

# The combinations as BLOCKS PLACE pairs: OCC_SETS's sets (PLACE 'set'), else OCC_BLOCKS x OCC_PLACES.
combos=()
if [ -n "${OCC_SETS:-}" ]; then
  for s in $OCC_SETS; do combos+=("$s set"); done
else
  for b in "${blocks[@]}"; do for p in "${places[@]}"; do combos+=("$b $p"); done; done
fi

compile_all() {
  say "compiling ${#combos[@]} combinations' kernels, ${OCC_JOBS:-6} at once" | tee -a "$out/occupancy.txt"
  local t0=$(date +%s) running=0 c b p
  for c in "${combos[@]}"; do
    read -r b p <<<"$c"
    local passes=(""); [ "${OCC_NOGREEKS:-0}" = 1 ] && passes+=(--no-greeks)
    for g in "${passes[@]}"; do
      { compare "$b" "$p" 4096 --ladders 1 $g >/dev/null 2>>"$out/progress.txt" ||
          echo "compile of --config '$(knobs "$b" "$p")' $g failed (progress.txt)" | tee -a "$out/occupancy.txt"; } &
      if (( ++running >= ${OCC_JOBS:-6} )); then wait -n; ((running--)); fi
    done
  done
  wait
  echo "compiled in $(( $(date +%s) - t0 )) s" | tee -a "$out/occupancy.txt"
}

time_all() {
  local summary=$out/occupancy-summary.txt t0=$(date +%s)
  printf '%-8s %-6s %-10s %9s %9s %5s %8s %9s %9s %9s %9s\n' paths blocks kahan 'x7 Mp/s' 'x1 Mp/s' regs 'spill B' \
      'same bits' 'as first' 'price x7' 'price x1' | tee -a "$summary"
  local c b p
  for n in "${paths[@]}"; do
    local first=""
    for c in "${combos[@]}"; do
        read -r b p <<<"$c"
        local table ptable="" px7=- px1=-
        say "$n paths, --config '$(knobs "$b" "$p")'" >>"$out/occupancy.txt"
        table=$(compare "$b" "$p" "$n" 2>>"$out/progress.txt")
        if [ "${OCC_NOGREEKS:-0}" = 1 ]; then
          say "$n paths, price only, --config '$(knobs "$b" "$p")'" >>"$out/occupancy.txt"
          ptable=$(compare "$b" "$p" "$n" --no-greeks 2>>"$out/progress.txt")
          echo "$ptable" >>"$out/occupancy.txt"
          px7=$(awk -v e="$engine" '$1 == e && $3 == "plain" && $5 == 7 {print $7}' <<<"$ptable")
          px1=$(awk -v e="$engine" '$1 == e && $3 == "plain" && $5 == 1 {print $7}' <<<"$ptable")
        fi
        echo "$table" >>"$out/occupancy.txt"
        # Columns: engine (2 words), kernel, segs, mkts, ms/ladder, Mpath/s, price, delta, vega, same bits, regs, spill B.
        local x7 x1
        x7=$(awk -v e="$engine" '$1 == e && $3 ~ /^register/ && $5 == 7' <<<"$table")
        x1=$(awk -v e="$engine" '$1 == e && $3 ~ /^register/ && $5 == 1' <<<"$table")
        local values; values=$(awk '{print $8, $9, $10}' <<<"$x7")
        [ -n "$first" ] || first=$values
        local same=no; [ -n "$values" ] && [ "$values" = "$first" ] && same=yes
        printf '%-8s %-6s %-10s %9s %9s %5s %8s %9s %9s %9s %9s\n' "$n" "$b" "$p" "$(awk '{print $7}' <<<"$x7")" \
            "$(awk '{print $7}' <<<"$x1")" "$(awk '{print $12}' <<<"$x7")" "$(awk '{print $13}' <<<"$x7")" \
            "$(awk '{print $11}' <<<"$x7")" "$same" "${px7:--}" "${px1:--}" | tee -a "$summary"
    done
  done
  echo "timed in $(( $(date +%s) - t0 )) s" | tee -a "$summary"
}

[ $# -gt 0 ] || set -- compile time
for m in "$@"; do
  case "$m" in
    compile) compile_all ;;
    time) time_all ;;
    *) echo "gpu-occupancy.sh: unknown mode '$m' (compile, time)" >&2; exit 2 ;;
  esac
done
