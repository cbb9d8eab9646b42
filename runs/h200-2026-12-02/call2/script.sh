#!/usr/bin/env bash
# One call on the lent H200 for the issues "Fast by default" and "On the H200": the tuner on the main
# job, the defaults against the tuned winners, and the peers at the same accuracy contract.
#   here:   ./scripts/gpu-fetch-runtime.sh (once); cmake --build --preset ci; ./scripts/gpu-pack.sh build/ci
#           TAPELAB_CACHE_DIR=DIR tapelab tune --product asian --steps 252 --engine cuda --markets M
#               --config math=X --shortlist experiments/tune/cuda.txt   (M in 7 1, X in ieee approx: compile-only
#               here, it fills the NVRTC cache), then TAPELAB_CACHE_DIR=DIR ./scripts/gpu-cache-pack.sh
#   there:  run with carry [.gpu-runtime, build/gpu.tar.xz, build/cuda-cache.tar.xz]:
#           source scripts/gpu-env.sh; timeout 570 bash scripts/gpu-tune.sh K; tar czf $OUT/callK.tgz -C /tmp resK
# Steps, most important first; each is skipped when less time is left than it needs (GPU_TUNE_S, default
# 550 s, from the start): cuda's shortlist at 7 and 1 markets, 4M paths, IEEE then approximate math
# (tapelab tune: a warm-up, median of 3, each candidate's bits against its own plain kernel; the
# winners go to the tuning cache); compare on cuda at 7 markets with no variables (the cache's
# winner) and --untuned (the engine's defaults); the peers (JAX's vmap ladder) with tapelab at both
# contracts; then vulkan's and opencl's shortlists (their kernels compile on the device) and their
# compare. Everything lands in /tmp/resK (one file per step; progress.txt has the tuner's lines).
set -uo pipefail
source scripts/gpu-call-lib.sh "${1:?gpu-tune.sh: give the call number}"
sample_clocks
T=$bin/tapelab
job=(--product asian --steps 252)
deadline=${GPU_TUNE_S:-550}
export __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_PATH=/tmp/nv-shader-cache
left() { echo $(( deadline - ($(date +%s) - t0) )); }
# step NEED NAME CMD...: runs CMD (stdout into NAME) when NEED seconds are left, capped at what is left.
step() {
  local need=$1 name=$2; shift 2
  local l; l=$(left)
  if (( l < need )); then echo "skipped $name: $l s left, needs $need" | tee -a "$out/timeline.txt"; return; fi
  stamp "$name"
  timeout "$l" "$@" > "$out/$name" 2>> "$out/progress.txt"
  echo "exit $?" >> "$out/$name"
}
tune() {  # tune ENGINE MARKETS [flags]
  local e=$1 m=$2; shift 2
  echo "=== tune $e x$m $*" >> "$out/progress.txt"
  "$T" tune "${job[@]}" --engine "$e" --markets "$m" --paths 4000000 --shortlist "experiments/tune/$e.txt" --budget-seconds 500 --json "$@"
}
step 40 tune-cuda-x7-ieee.json tune cuda 7
step 40 tune-cuda-x7-approx.json tune cuda 7 --config math=approx
step 30 tune-cuda-x1-ieee.json tune cuda 1
step 30 tune-cuda-x1-approx.json tune cuda 1 --config math=approx
step 40 compare-cuda-4M.json "$T" compare --engines cuda --markets 7 --paths 4000000 --json
step 40 compare-cuda-4M-untuned.json "$T" compare --engines cuda --markets 7 --paths 4000000 --untuned --json
step 150 peers-h200.csv python3 experiments/drivers/peers.py --machine h200 --tapelab-bin "$T" --commit "$commit" \
    --engines cuda --paths 1000000,4000000 --passes value+5greeks --config '' --config math=approx --no-handwritten
step 150 tune-vulkan-x7.json tune vulkan 7
step 150 tune-opencl-x7-ieee.json tune opencl 7
step 60 compare-gpus-4M.json "$T" compare --engines vulkan,opencl --markets 7 --paths 4000000 --json
step 60 compare-gpus-4M-untuned.json "$T" compare --engines vulkan,opencl --markets 7 --paths 4000000 --untuned --json
step 60 tune-vulkan-x1.json tune vulkan 1
step 60 tune-opencl-x1-ieee.json tune opencl 1
stamp "done"
cp -r "${TAPELAB_CACHE_DIR:-/tmp/tapelab-cache}/tune" "$out/tuning-cache" 2>/dev/null || true
