# Source this at the start of every command on the lent H200 (device tool):
#   source scripts/gpu-env.sh
# The H200 image has the NVIDIA driver but no Vulkan or OpenCL loader and no
# shaderc (ours is linked statically); we carry the loaders as Debian packages in .gpu-runtime/ (made once here by
# scripts/gpu-fetch-runtime.sh) and unpack them, then point the loaders at
# NVIDIA's ICDs. Carry `.gpu-runtime` and `build/gpu.tar.xz` (scripts/gpu-pack.sh) with each run.
[ -f build/gpu.tar.xz ] && tar xJf build/gpu.tar.xz -C build   # scripts/gpu-pack.sh made it
for f in .gpu-runtime/*.deb; do dpkg -x "$f" /; done
ldconfig
mkdir -p /etc/OpenCL/vendors
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export TAPELAB_SOURCE_DIR=$PWD   # tests that read tests/data find this checkout
export TAPELAB_CACHE_DIR=${TAPELAB_CACHE_DIR:-/tmp/tapelab-cache}
# NVRTC kernels compiled beforehand on the build machine (scripts/gpu-cache-pack.sh), when carried.
[ -f build/cuda-cache.tar.xz ] && mkdir -p "$TAPELAB_CACHE_DIR" && tar xJf build/cuda-cache.tar.xz -C "$TAPELAB_CACHE_DIR"
export LD_LIBRARY_PATH=$PWD/build/gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}   # Open MPI's libraries (gpu-pack.sh)
# mpirun (Open MPI from .gpu-runtime: /usr/bin/orterun) as root, quiet about components not carried.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mca_base_component_show_load_errors=0
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
