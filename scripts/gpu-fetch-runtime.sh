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
# Open MPI's runtime for mpirun there (scripts/gpu-mpi-scaling.sh): the tapelab we build links
# Debian's libmpi.so.40 (4.1.4); its launcher (orterun, orted), PMIx, hwloc and libevent. 3.7 MB.
# Components needing libraries not carried (ucx, ofi, verbs, psm) fail to load and are not used.
apt-get download openmpi-bin openmpi-common libopenmpi3 libpmix2 libhwloc15 libevent-core-2.1-7 \
  libevent-pthreads-2.1-7 libmunge2
ls -l
