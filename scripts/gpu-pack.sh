#!/usr/bin/env bash
# Packs what a run on the lent H200 needs into build/gpu.tar.xz (stripped
# binaries, xsimd headers for cpu-jit, golden files), small enough for the
# device tool's 64 MiB. Build first: cmake --preset release && cmake --build --preset release.
# On the H200: `tar xJf build/gpu.tar.xz` recreates build/gpu/ (scripts/gpu-env.sh does it).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
src=${1:-build/release}
dst=build/gpu
rm -rf "$dst" && mkdir -p "$dst/bin" "$dst/include"
cp "$src/cli/tapelab" "$dst/bin/"
for f in "$src"/tests/test_vulkan_* "$src"/tests/test_opencl_* "$src"/tests/test_cuda_* "$src"/tests/test_codegen_* "$src"/tests/test_api_regressions "$src"/tests/test_api_tangent "$src"/tests/test_api_split \
         "$src"/experiments/scratch_sweep "$src"/experiments/gpu_kernels "$src"/experiments/calibrate_proxy "$src"/experiments/tangent_crossover \
         "$src"/properties/tapelab_properties*; do
  [ -f "$f" ] && [ -x "$f" ] && cp "$f" "$dst/bin/"
done
strip "$dst"/bin/* 2>/dev/null || true
# Built with MPI (TAPELAB_MPI), the binaries link Open MPI's libraries: carry them so they start
# on a machine without Open MPI (mpirun itself comes from .gpu-runtime's debs, gpu-env.sh).
mkdir -p "$dst/lib"
for l in $(ldd "$dst/bin/tapelab" | awk '/libmpi|libopen-(rte|pal)|libhwloc|libevent/ { print $3 }'); do cp -L "$l" "$dst/lib/"; done
cp -r /usr/include/xsimd "$dst/include/" 2>/dev/null || true
cp -r tests/golden "$dst/" 2>/dev/null || true
# The device's checkout is this session's starting commit, not the one built: the pack says which.
echo "$(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- . ':!*.csv' ':!*.txt' 2>/dev/null || echo -dirty)" > "$dst/COMMIT"
tar cJf build/gpu.tar.xz -C build gpu
ls -l build/gpu.tar.xz; ls "$dst/bin"
