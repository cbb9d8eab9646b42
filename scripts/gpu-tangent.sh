#!/usr/bin/env bash
# The tangent kernel kind (issue 20) on the lent H200. Here: build release and pack
# (cmake --preset release && cmake --build --preset release && ./scripts/gpu-pack.sh), then
# one device-tool call per mode, carrying .gpu-runtime and build/gpu.tar.xz:
#   source scripts/gpu-env.sh; bash scripts/gpu-tangent.sh MODE...
#   main       the main job on cuda, tangent kind: `tapelab price --product asian --steps 252
#              --paths 4000000 --fp32 --engine cuda --kernel tangent` (twice: the first compiles,
#              the second is the number; target >= 500 Mpath/s), the same on vulkan, then
#              `tapelab compare --kernels tangent,register` at 4M on cuda and vulkan (the article's
#              timing: warm-up, 7-point ladder, median of 3) and the tangent unit tests
#              (test_api_tangent). About 3-4 min cold (NVRTC of the 1,536-node kernels dominates).
#   crossover  experiments/tangent_crossover on cuda and vulkan at 4M paths: basket 1..64 assets
#              (1 step; Greeks w.r.t. every spot and vol), the 252-step Asian; plain, tangent,
#              register, scratch. About 6-8 min cold (BASKET_ASSETS trims the list if a call nears
#              the 10-minute limit; a second call with the caches warm is faster).
# Results in $OUT (./gpu-out elsewhere): main.txt, compare-4m.txt, tests-tangent.txt,
# crossover-h200.csv (rows as measured, so a cut-off call keeps what it finished),
# crossover-progress.txt (stderr: the crossover per engine is its last lines).
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
bin=$PWD/build/gpu/bin
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
export TAPELAB_CACHE_DIR=${TAPELAB_CACHE_DIR:-/tmp/tapelab-cache}
export __GL_SHADER_DISK_CACHE=0
say() { echo "=== $* ($(date +%T))"; }

for mode in "$@"; do
  case "$mode" in
  main)
    {
      for engine in cuda vulkan; do
        for pass in compile timed; do
          say "price asian-252 4M fp32 $engine tangent ($pass)"
          timeout 300 "$bin/tapelab" price --product asian --steps 252 --paths 4000000 --fp32 --engine $engine \
            --kernel tangent
        done
      done
      say "compare 4M cuda,vulkan plain/tangent/register"
      timeout 400 "$bin/tapelab" compare --engines cuda,vulkan --kernels tangent,register --paths 4000000 \
        --markets 1 2>>"$out/progress.txt" | tee "$out/compare-4m.txt"
    } 2>&1 | tee "$out/main.txt"
    say "test_api_tangent" | tee "$out/tests-tangent.txt"
    timeout 300 "$bin/test_api_tangent" --gtest_brief=1 2>&1 | tail -30 | tee -a "$out/tests-tangent.txt"
    ;;
  crossover)
    timeout 580 "$bin/tangent_crossover" --engines cuda,vulkan --paths 4000000 \
      --assets "${BASKET_ASSETS:-1,2,4,8,16,32,64}" --basket-steps 1 --asian-steps 252 --reps 3 \
      --commit "${TAPELAB_COMMIT:-$(cat COMMIT 2>/dev/null || echo unknown)}" \
      --out "$out/crossover-h200.csv" 2> >(tee "$out/crossover-progress.txt" >&2)
    ;;
  *) echo "gpu-tangent.sh: unknown mode '$mode' (main, crossover)" >&2; exit 2 ;;
  esac
done
