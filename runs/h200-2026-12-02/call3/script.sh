#!/usr/bin/env bash
# One call on the lent H200 for the issues "Fast by default" and "On the H200": the tuner on the main
# job (the 252-step Asian, fp32, value + 5 Greeks), the defaults against the tuned winners.
#   here:   ./scripts/gpu-fetch-runtime.sh (once); cmake --build --preset ci; ./scripts/gpu-pack.sh build/ci
#           TAPELAB_CACHE_DIR=DIR tapelab tune --product asian --steps 252 --engine cuda --markets M
#               --config math=X --shortlist experiments/tune/cuda.txt   (M in 7 1, X in ieee approx: compile-only
#               here, it fills the NVRTC cache), then TAPELAB_CACHE_DIR=DIR ./scripts/gpu-cache-pack.sh
#           a dry run of the script's mechanics (cuda compile-only, lavapipe, PoCL, a tiny job):
#               GPU_TUNE_DRY=1 bash scripts/gpu-tune.sh 0
#   there:  run with carry [.gpu-runtime, build/gpu.tar.xz, build/cuda-cache.tar.xz]:
#           source scripts/gpu-env.sh; timeout 570 bash scripts/gpu-tune.sh K; tar czf $OUT/callK.tgz -C /tmp resK
# Steps, most important first; each is skipped when less time is left than it needs (GPU_TUNE_S, default
# 540 s, from the start): tapelab tune over experiments/tune/ENGINE.txt (a warm-up, median of 3, each
# candidate's bits against its own plain kernel; the winners go to the tuning cache) on cuda at 7 and 1
# markets, opencl and vulkan at 7, cuda at 7 with approximate math, then compare on cuda at 7 markets
# with no variables (the cache's winners), then the one-market tunes of opencl and vulkan. Each step's
# output is one file in /tmp/resK, its exit status in timeline.txt; progress.txt has every line the
# tools wrote on stderr.
set -uo pipefail
if [ "${GPU_TUNE_DRY:-0}" = 1 ]; then  # here, without a GPU: the mechanics only
  out=/tmp/res${1:?}; rm -rf "$out"; mkdir -p "$out"; bin=$PWD/build/ci/cli; t0=$(date +%s); commit=dry
  stamp() { echo "$1 at $(( $(date +%s) - t0 )) s" | tee -a "$out/timeline.txt"; }
  job=(--product asian --steps 8); paths=4000; deadline=${GPU_TUNE_S:-300}
else
  source scripts/gpu-call-lib.sh "${1:?gpu-tune.sh: give the call number}"
  sample_clocks
  job=(--product asian --steps 252); paths=4000000; deadline=${GPU_TUNE_S:-540}
fi
T=$bin/tapelab
export __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_PATH=/tmp/nv-shader-cache
left() { echo $(( deadline - ($(date +%s) - t0) )); }
# step NEED NAME CMD...: runs CMD (stdout into NAME, stderr into progress.txt) when NEED seconds are
# left, cut at what is left; its exit status goes to timeline.txt.
step() {
  local need=$1 name=$2; shift 2
  local l; l=$(left)
  if (( l < need )); then echo "skipped $name: $l s left, needs $need" | tee -a "$out/timeline.txt"; return; fi
  stamp "$name"
  echo "=== $name: $*" >> "$out/progress.txt"
  timeout "$l" "$@" > "$out/$name" 2>> "$out/progress.txt"
  echo "$name exit $?" >> "$out/timeline.txt"
}
TUNE=("$T" tune "${job[@]}" --paths "$paths" --budget-seconds 500 --json)
step 40 tune-cuda-x7-ieee.json "${TUNE[@]}" --engine cuda --markets 7 --shortlist experiments/tune/cuda.txt
step 30 tune-cuda-x1-ieee.json "${TUNE[@]}" --engine cuda --markets 1 --shortlist experiments/tune/cuda.txt
step 150 tune-opencl-x7-ieee.json "${TUNE[@]}" --engine opencl --markets 7 --shortlist experiments/tune/opencl.txt
step 100 tune-vulkan-x7.json "${TUNE[@]}" --engine vulkan --markets 7 --shortlist experiments/tune/vulkan.txt
step 40 tune-cuda-x7-approx.json "${TUNE[@]}" --engine cuda --markets 7 --shortlist experiments/tune/cuda.txt --config math=approx
step 40 compare-cuda-tuned.json "$T" compare "${job[@]}" --engines cuda --markets 7 --paths "$paths" --json
step 60 tune-opencl-x1-ieee.json "${TUNE[@]}" --engine opencl --markets 1 --shortlist experiments/tune/opencl.txt
step 60 tune-vulkan-x1.json "${TUNE[@]}" --engine vulkan --markets 1 --shortlist experiments/tune/vulkan.txt
stamp "done"
cp -r "${TAPELAB_CACHE_DIR:-/tmp/tapelab-cache}/tune" "$out/tuning-cache" 2>/dev/null || true
