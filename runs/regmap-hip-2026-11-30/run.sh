#!/usr/bin/env bash
# The register map of the HIP kernels without an AMD GPU (README.md here):
# gpu_kernels on the compile-only hip engine, as run for this folder.
#   run.sh BUILD_DIR [OUT_DIR]   (OUT_DIR defaults to this folder)
# Two runs side by side at nice 10: both targets as hipcc 5.2.3 builds them,
# then gfx1103 again with LLVM 15's 128-VGPR gfx11 limit lifted.
set -euo pipefail
build=${1:?usage: run.sh BUILD_DIR [OUT_DIR]}
here=$(cd "$(dirname "$0")" && pwd)
out=${2:-$here}
grid=(--engine hip --steps 252 --markets 1,2,4,8 --greeks on --segments 8,16,24,32,48 --kinds plain,register)
TAPELAB_HIP_ARCH=gfx1103,gfx90a nice -n 10 "$build/experiments/gpu_kernels" "${grid[@]}" \
  --out "$out/gpu_kernels.csv" > "$out/gpu_kernels.log" 2>&1 &
TAPELAB_HIP_ARCH=gfx1103 TAPELAB_HIP_GFX11_VGPRS=256 nice -n 10 "$build/experiments/gpu_kernels" "${grid[@]}" \
  --out "$out/gpu_kernels-gfx1103-256.csv" > "$out/gpu_kernels-gfx1103-256.log" 2>&1 &
wait
python3 "$here/registers_csv.py" "$out/gpu_kernels.log" "$out/gpu_kernels-gfx1103-256.log" > "$out/registers.csv"
python3 "$here/registers_csv.py" --table "$out/gpu_kernels.log" "$out/gpu_kernels-gfx1103-256.log"
