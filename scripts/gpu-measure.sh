#!/usr/bin/env bash
# Batched measurements on the lent H200 (device tool). Carry .gpu-runtime and
# build/gpu (scripts/gpu-pack.sh); results land in $OUT (./gpu-out elsewhere).
#   source scripts/gpu-env.sh; bash scripts/gpu-measure.sh smoke|main|sweeps|props
#   smoke   engines, the GPU unit tests, a quick compare (minutes)
#   main    tapelab compare at 1M and 4M paths, Greeks and price only, 1 and 4 markets,
#           cold then cached compiles; the JAX baseline
#   sweeps  Vulkan kernel grid (experiments/gpu_vulkan.sh) and the scratch sweep on cuda, opencl
#   props   the long property run
set -uo pipefail
mode=${1:-smoke}
out=${OUT:-gpu-out}
mkdir -p "$out"
bin=$PWD/build/gpu/bin
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
export TAPELAB_CACHE_DIR=${TAPELAB_CACHE_DIR:-/tmp/tapelab-cache}
export __GL_SHADER_DISK_CACHE=0   # only our caches count in compile times
engines=cuda,vulkan,opencl
say() { echo "=== $*"; }

case "$mode" in
smoke)
  say "engines"; "$bin/tapelab" engines
  for t in "$bin"/test_vulkan_* "$bin"/test_opencl_* "$bin"/test_cuda_* "$bin"/test_codegen_*; do
    [ -x "$t" ] || continue
    say "$(basename "$t")"; timeout 300 "$t" --gtest_brief=1 2>&1 | tail -25
  done
  say "quick compare"
  timeout 300 "$bin/tapelab" compare --engines $engines --kernels register,scratch --paths 100000 --ladders 1
  ;;
main)
  rm -rf "$TAPELAB_CACHE_DIR"
  say "compare, value + 5 Greeks, 1M paths, cold caches"
  "$bin/tapelab" compare --engines $engines --kernels register,scratch --paths 1000000 --markets 4 \
      2>>"$out/progress.txt" | tee "$out/compare_greeks_1M.txt"
  say "compare, value + 5 Greeks, 4M paths, cached compiles"
  "$bin/tapelab" compare --engines $engines --kernels register,scratch --paths 4000000 --markets 4 \
      2>>"$out/progress.txt" | tee "$out/compare_greeks_4M.txt"
  say "JAX baseline"
  python3 experiments/peers/jax_asian.py --paths 1000000 4000000 2>>"$out/progress.txt" | tee "$out/jax.csv"
  for paths in 1000000 4000000; do
    say "compare, price only, $paths paths"
    "$bin/tapelab" compare --engines $engines --kernels register --paths $paths --markets 4 --no-greeks \
        2>>"$out/progress.txt" | tee "$out/compare_price_$paths.txt"
  done
  ;;
sweeps)
  TAPELAB_BIN=$bin OUT=$out bash experiments/gpu_vulkan.sh vulkan
  say "scratch sweep"
  "$bin/scratch_sweep" --engines cuda,opencl --paths 1000000 --jobs 16 --out "$out/scratch_sweep.csv" 2>&1 | tail -45
  ;;
props)
  TAPELAB_BIN=$bin OUT=$out bash properties/long_run.sh
  ;;
*) echo "unknown mode $mode" >&2; exit 2 ;;
esac
