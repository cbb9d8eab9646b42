#!/usr/bin/env bash
# 2026-12-02 call 1: evidence for the defaults (issue "Fast by default"): the register kernels of
# the 252-step Asian (window, 16 segments, fp32, value + 5 Greeks) at 1 and 7 markets, 1M and 4M
# paths, with IEEE math, the headline knob set and each of its knobs left out in turn; the same set
# with approximate math for reference; cuda, vulkan and opencl. gpu_kernels --reps 7 (median).
set -uo pipefail
source scripts/gpu-call-lib.sh 1
sample_clocks
H=PATHS_PER_LANE=1+KAHAN_LOCAL=0+QUANTILE_SELECT=1+MARKET_LOOP=1+CUDA_MIN_BLOCKS=10+STORE_DRAWS=1
cuda_sets=(
  "head-ieee $H"
  "head-approx $H+APPROX_MATH=1"
  "defaults -"
  "ieee-no-store PATHS_PER_LANE=1+KAHAN_LOCAL=0+QUANTILE_SELECT=1+MARKET_LOOP=1+CUDA_MIN_BLOCKS=10"
  "ieee-no-minblocks PATHS_PER_LANE=1+KAHAN_LOCAL=0+QUANTILE_SELECT=1+MARKET_LOOP=1+STORE_DRAWS=1"
  "ieee-minblocks8 PATHS_PER_LANE=1+KAHAN_LOCAL=0+QUANTILE_SELECT=1+MARKET_LOOP=1+CUDA_MIN_BLOCKS=8+STORE_DRAWS=1"
  "ieee-no-select PATHS_PER_LANE=1+KAHAN_LOCAL=0+MARKET_LOOP=1+CUDA_MIN_BLOCKS=10+STORE_DRAWS=1"
  "ieee-kahan-local PATHS_PER_LANE=1+QUANTILE_SELECT=1+MARKET_LOOP=1+CUDA_MIN_BLOCKS=10+STORE_DRAWS=1"
  "ieee-lanes4 KAHAN_LOCAL=0+QUANTILE_SELECT=1+MARKET_LOOP=1+CUDA_MIN_BLOCKS=10+STORE_DRAWS=1"
  "ieee-outline $H+CUDA_OUTLINE_DRAWS=1"
)
vk_sets=(
  "defaults -"
  "loop MARKET_LOOP=1"
  "loop-lanes1 MARKET_LOOP=1+PATHS_PER_LANE=1"
  "loop-lanes1-select MARKET_LOOP=1+PATHS_PER_LANE=1+QUANTILE_SELECT=1"
  "loop-lanes1-select-store MARKET_LOOP=1+PATHS_PER_LANE=1+QUANTILE_SELECT=1+STORE_DRAWS=1"
)
cl_sets=(
  "defaults -"
  "head-ieee PATHS_PER_LANE=1+KAHAN_LOCAL=0+QUANTILE_SELECT=1+MARKET_LOOP=1+STORE_DRAWS=1"
  "head-ieee-kahan-local PATHS_PER_LANE=1+QUANTILE_SELECT=1+MARKET_LOOP=1+STORE_DRAWS=1"
)
env_of() { [ "$1" = - ] || knobs "$1"; }
G=(--segments 16 --markets 1,7 --greeks on)
# compile phase: every set's kernels, 12 at once (cuda first: NVRTC; then the drivers' compilers)
running=0
compile() {  # compile ENGINE NAME SET KINDS
  local e=$1 n=$2 s=$3 k=$4
  mapfile -t K < <(env_of "$s")
  ( env "${K[@]}" timeout 230 "$bin/gpu_kernels" --engine "$e" --kinds "$k" --segments 16 --markets 1,7 --greeks on \
      --paths 4096 --reps 1 > "$out/compile-$e-$n.txt" 2>&1 ) &
  if (( ++running >= 12 )); then wait -n; ((running--)); fi
}
for s in "${cuda_sets[@]}"; do set -- $s; k=register; [ "$1" = head-ieee ] && k=plain,register; compile cuda "$1" "$2" "$k"; done
for s in "${cl_sets[@]}"; do set -- $s; compile opencl "$1" "$2" register; done
for s in "${vk_sets[@]}"; do set -- $s; compile vulkan "$1" "$2" register; done
wait
stamp compiled
time_set() {  # time_set ENGINE NAME SET
  local e=$1 n=$2 s=$3
  mapfile -t K < <(env_of "$s")
  local k=register; [ "$n" = head-ieee ] && k=plain,register
  echo "=== $e $n $s" >> "$out/ladders.txt"
  env "${K[@]}" timeout 60 "$bin/gpu_kernels" --engine "$e" --kinds "$k" "${G[@]}" --paths 1000000,4000000 --reps 7 >> "$out/ladders.txt" 2>&1
}
for round in 1 2; do
  for s in "${cuda_sets[@]}"; do set -- $s; time_set cuda "$1" "$2"; done
  stamp "cuda round $round"
  for s in "${vk_sets[@]}"; do set -- $s; time_set vulkan "$1" "$2"; done
  for s in "${cl_sets[@]}"; do set -- $s; time_set opencl "$1" "$2"; done
  stamp "vulkan+opencl round $round"
done
# one line per (engine, set, markets, paths): Mpath/s of both rounds
awk '/^=== / { e = $2; n = $3 } ($1 == "register" || $1 == "plain") && $3 ~ /^[0-9]+$/ { print e, n, $1, "x" $4, $3, $11, $8 "regs", "plain=" $15 }' "$out/ladders.txt" \
  | awk '{ k = $1" "$2" "$3" "$4" "$5; v[k] = v[k] " " $6; r[k] = $7 " " $8 } END { for (k in v) print k, v[k], r[k] }' | sort > "$out/summary.txt"
cat "$out/summary.txt"
