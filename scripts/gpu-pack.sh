#!/usr/bin/env bash
# Copies what a run on the lent H200 needs into build/gpu/ (stripped binaries,
# xsimd headers for cpu-jit, the scripts), small enough for the device tool's
# 64 MiB. Build first: cmake --preset release && cmake --build --preset release.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
src=${1:-build/release}
dst=build/gpu
rm -rf "$dst" && mkdir -p "$dst/bin" "$dst/include"
cp "$src/cli/tapelab" "$dst/bin/"
for f in "$src"/tests/test_vulkan_* "$src"/tests/test_opencl_* "$src"/tests/test_cuda_* "$src"/tests/test_codegen_* \
         "$src"/experiments/scratch_sweep "$src"/experiments/cut_strategies "$src"/experiments/gpu_kernels "$src"/properties/tapelab_properties*; do
  [ -f "$f" ] && [ -x "$f" ] && cp "$f" "$dst/bin/"
done
strip "$dst"/bin/* 2>/dev/null || true
cp -r /usr/include/xsimd "$dst/include/" 2>/dev/null || true
cp -r tests/golden "$dst/" 2>/dev/null || true
du -sh "$dst"; ls "$dst/bin"
