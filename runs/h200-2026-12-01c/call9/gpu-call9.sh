#!/usr/bin/env bash
# Session 5, call 9: the phase split by instruction counts (Nsight Compute, 1M paths, one market, cuda):
# draws alone (experiments/tapes/draws-252.tape, price only), + forward (Asian price only), + reverse
# (plain with Greeks), + recompute (register, 16 segments); fastest knobs, and the first two with the defaults.
set -uo pipefail
out=$OUT
bin=$PWD/build/gpu/bin
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
cat build/gpu/COMMIT > "$out/commit.txt" 2>/dev/null
K=(TAPELAB_PATHS_PER_LANE=1 TAPELAB_KAHAN_LOCAL=0 TAPELAB_CUDA_MIN_BLOCKS=6 TAPELAB_CUDA_APPROX_MATH=1
   TAPELAB_QUANTILE_SELECT=1 TAPELAB_CUDA_OUTLINE_DRAWS=1)
sections=(--section SpeedOfLight --section InstructionStats --section Occupancy --section LaunchStats)
common=(--engine cuda --fp32 --paths 1000000)
t0=$(date +%s)
one() {  # label, knobs (fast|default), then tapelab arguments
  local label=$1 which=$2; shift 2
  local k=(); [ "$which" = fast ] && k=("${K[@]}")
  echo "=== ncu: $label ($which knobs)" >> "$out/ncu-phases.txt"
  env "${k[@]}" timeout 40 ncu --clock-control none --launch-count 1 "${sections[@]}" "$bin/tapelab" "$@" "${common[@]}" \
      >> "$out/ncu-phases.txt" 2>&1
  echo "$label $which at $(( $(date +%s) - t0 )) s" >> "$out/timeline.txt"
}
# Compile all six first, side by side (NVRTC on 16 cores), then profile from the cache.
warm() { local which=$1; shift; local k=(); [ "$which" = fast ] && k=("${K[@]}")
  env "${k[@]}" "$bin/tapelab" "$@" --engine cuda --fp32 --paths 4096 > /dev/null 2>> "$out/progress.txt"; }
warm fast run experiments/tapes/draws-252.tape --kernel plain --checkpoint off --no-greeks &
warm fast price --product asian --steps 252 --kernel plain --checkpoint off --no-greeks &
warm fast price --product asian --steps 252 --kernel plain --checkpoint off &
warm fast price --product asian --steps 252 --kernel register --checkpoint 16 &
warm default run experiments/tapes/draws-252.tape --kernel plain --checkpoint off --no-greeks &
warm default price --product asian --steps 252 --kernel plain --checkpoint off --no-greeks &
wait
echo "compiled at $(( $(date +%s) - t0 )) s" >> "$out/timeline.txt"
one "draws alone, price only" fast run experiments/tapes/draws-252.tape --kernel plain --checkpoint off --no-greeks
one "asian, price only" fast price --product asian --steps 252 --kernel plain --checkpoint off --no-greeks
one "asian plain, value + 5 Greeks" fast price --product asian --steps 252 --kernel plain --checkpoint off
one "asian register 16, value + 5 Greeks" fast price --product asian --steps 252 --kernel register --checkpoint 16
one "draws alone, price only" default run experiments/tapes/draws-252.tape --kernel plain --checkpoint off --no-greeks
one "asian, price only" default price --product asian --steps 252 --kernel plain --checkpoint off --no-greeks
grep -E "^=== ncu|Duration|Executed Instructions  |Registers Per|Achieved Occupancy|Issue Slots Busy" "$out/ncu-phases.txt"
