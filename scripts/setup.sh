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
  python3 python3-matplotlib python3-dev python3-numpy python3-pytest python3-venv pybind11-dev
  libopenmpi-dev openmpi-bin
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#pkgs[@]} packages already installed"
  exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
