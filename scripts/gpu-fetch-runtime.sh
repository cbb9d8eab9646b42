#!/usr/bin/env bash
# Run once here (not on the GPU machine): downloads the loader packages the H200
# lacks into .gpu-runtime/ (ignored by git) for scripts/gpu-env.sh to unpack there.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
grep -qx '/.gpu-runtime/' .git/info/exclude 2>/dev/null || echo /.gpu-runtime/ >> .git/info/exclude
mkdir -p .gpu-runtime
cd .gpu-runtime
# NVIDIA's Vulkan ICD (libGLX_nvidia) needs glvnd; shaderc is linked statically.
apt-get download libvulkan1 ocl-icd-libopencl1 libglvnd0 libglx0 libegl1 libgl1 libopengl0 libgles2
ls -l
