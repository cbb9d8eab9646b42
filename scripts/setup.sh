#!/usr/bin/env bash
# Installs the Debian packages tapelab needs. Idempotent: re-running installs nothing new.
set -euo pipefail
pkgs=(
  build-essential cmake ninja-build pkg-config git
  libboost-dev libeigen3-dev libxsimd-dev libxxhash-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev librapidcheck-dev
  clang libfuzzer-14-dev libclang-rt-14-dev
  libvulkan-dev libvulkan-volk-dev libshaderc-dev glslang-dev spirv-tools glslc mesa-vulkan-drivers vulkan-tools
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
  hipcc libamdhip64-dev rocm-device-libs
  python3 python3-matplotlib python3-dev python3-numpy python3-pytest python3-venv pybind11-dev python3-pip
  quantlib-python
  python3-nbclient python3-nbformat python3-ipykernel
  libopenmpi-dev openmpi-bin
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#pkgs[@]} packages already installed"
else
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# From PyPI, what Debian lacks, for Debian's Python (the one the module is built for): JAX on the CPU
# (tapelab.from_jax and the CPU peers), pinned to a release that runs on NumPy 1.x, which Debian's
# matplotlib and SciPy are built against (a newer JAX pulls NumPy 2 and breaks them).
# HiGHS (highspy), the MILP solver of the exact strategy (planner/exact.py), is not in Debian 12; nor is
# checkpoint_schedules (its Revolve, Multistage, H-Revolve and Mixed schedules run as tapelab plans:
# python/tapelab/schedules.py).
pypi=("jax[cpu]==0.4.30" "numpy<2" "highspy==1.15.1" "checkpoint_schedules==1.0.4")
if ! /usr/bin/python3 -c 'import jax, numpy, highspy, checkpoint_schedules, sys; sys.exit(jax.__version__ != "0.4.30" or int(numpy.__version__.split(".")[0]) >= 2)' 2>/dev/null; then
  echo "setup: installing ${pypi[*]} from PyPI"
  $SUDO /usr/bin/python3 -m pip install -q --break-system-packages "${pypi[@]}"
fi
