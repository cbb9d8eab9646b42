#!/usr/bin/env bash
# Packs what a run on the lent H200 needs into build/gpu.tar.xz (stripped
# binaries, xsimd headers for cpu-jit, golden files), small enough for the
# device tool's 64 MiB. Build first: cmake --preset release && cmake --build --preset release.
# OLD_TAPELAB=FILE adds an earlier tapelab as bin/old/tapelab (below).
# On the H200: `tar xJf build/gpu.tar.xz` recreates build/gpu/ (scripts/gpu-env.sh does it).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
src=${1:-build/release}
dst=build/gpu
rm -rf "$dst" && mkdir -p "$dst/bin" "$dst/include"
cp "$src/cli/tapelab" "$dst/bin/"  # always
# BINS="tapelab test_api_loops ...": only these (a call that needs a few fits the tool's 64 MiB with room).
if [ -n "${BINS:-}" ]; then
  for b in $BINS; do
    for f in "$src/cli/$b" "$src/tests/$b" "$src/experiments/$b" "$src/properties/$b"; do [ -x "$f" ] && [ -f "$f" ] && cp "$f" "$dst/bin/"; done
    [ -f "$dst/bin/$b" ] || { echo "gpu-pack.sh: BINS: no binary named $b under $src" >&2; exit 2; }
  done
fi
[ -n "${BINS:-}" ] || for f in "$src"/tests/test_vulkan_* "$src"/tests/test_opencl_* "$src"/tests/test_cuda_* "$src"/tests/test_codegen_* "$src"/tests/test_api_regressions "$src"/tests/test_api_tangent "$src"/tests/test_api_split \
         "$src"/experiments/scratch_sweep "$src"/experiments/gpu_kernels "$src"/experiments/calibrate_proxy "$src"/experiments/tangent_crossover \
         "$src"/properties/tapelab_properties*; do
  [ -f "$f" ] && [ -x "$f" ] && cp "$f" "$dst/bin/"
done
# A version-3 (or any earlier) tapelab to time beside this one in the same call (gpu/tune-and-compare.sh boxmuller):
# OLD_TAPELAB=path/to/tapelab [OLD_COMMIT=hash] scripts/gpu-pack.sh ... puts it in bin/old/.
if [ -n "${OLD_TAPELAB:-}" ]; then
  [ -x "$OLD_TAPELAB" ] || { echo "gpu-pack.sh: OLD_TAPELAB=$OLD_TAPELAB is not an executable" >&2; exit 2; }
  mkdir -p "$dst/bin/old"
  cp "$OLD_TAPELAB" "$dst/bin/old/tapelab"
  echo "old: ${OLD_COMMIT:-unknown commit} ($OLD_TAPELAB)" > "$dst/bin/old/COMMIT"
fi
strip "$dst"/bin/* "$dst"/bin/old/tapelab 2>/dev/null || true
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
