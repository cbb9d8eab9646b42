#!/usr/bin/env bash
# The H200 measurement for the Vulkan engine (issue 5): plain against
# register-checkpointed kernels for the 252-step Asian, fp32, 1M and 4M paths,
# value + 5 Greeks and price only, 1 and 4 markets per dispatch; the register
# kernel also without the opaque identity (config opaque=off), so the
# registers/spills and the speed show whether the driver merges the
# recomputation when nothing stops it; a segment-count sweep; and first against
# cached compile times (two processes sharing TAPELAB_CACHE_DIR).
#
# On the lent H200 (device tool), from the repository root, carrying
# .gpu-runtime and build/gpu (scripts/gpu-pack.sh):
#   source scripts/gpu-env.sh; experiments/gpu_vulkan.sh [ENGINE]
# Writes CSVs under $OUT (default /tmp/tapelab-out); prints the tables.
set -euo pipefail
bin=${TAPELAB_BIN:-build/gpu/bin}
engine=${1:-vulkan}
out=${OUT:-/tmp/tapelab-out}
mkdir -p "$out"
export TAPELAB_CACHE_DIR=$(mktemp -d /tmp/tapelab-cache.XXXXXX)   # empty: the first process compiles
export __GL_SHADER_DISK_CACHE=0   # NVIDIA's own shader cache off: only ours (VkPipelineCache on disk) counts
run() { echo "+ gpu_kernels $*"; "$bin/gpu_kernels" --engine "$engine" "$@"; }

echo "== 1. plain vs register (16 segments) vs register without opq: first process, empty caches"
run --steps 252 --paths 1000000,4000000 --markets 1,4 --greeks on,off \
    --kinds plain,register,register-noopq --segments 16 --reps 3 --out "$out/${engine}_asian252.csv"

echo "== 2. second process: the same kernels from the SPIR-V and pipeline caches"
run --steps 252 --paths 1000000 --markets 1,4 --greeks on --kinds plain,register --segments 16 --reps 1 \
    --out "$out/${engine}_asian252_cached.csv"

echo "== 3. register kernel: segment count sweep (1M paths, value + 5 Greeks, 1 market)"
run --steps 252 --paths 1000000 --markets 1 --greeks on --kinds register --segments 2,4,8,16,32,64 --reps 3 \
    --out "$out/${engine}_asian252_segments.csv"
rm -rf "$TAPELAB_CACHE_DIR"
