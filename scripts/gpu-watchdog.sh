#!/usr/bin/env bash
# The device watchdog (TAPELAB_DEVICE_TIMEOUT, gpu/host/watchdog.h) on the lent H200, where CUDA
# runs (tests/cli/test_cli_watchdog.cpp covers Vulkan and OpenCL on lavapipe and PoCL only). About
# a minute. Build and pack as scripts/gpu-drivers.sh says, then one device-tool call carrying
# .gpu-runtime and build/gpu.tar.xz:
#   source scripts/gpu-env.sh; bash scripts/gpu-watchdog.sh
# For each engine: a 10 us limit on 2^30 paths must end with rc=1 and one line "tapelab: <engine>:
# device did not finish within 1e-05 s (TAPELAB_DEVICE_TIMEOUT); ..." within seconds; the default
# limit and no limit (0) must give rc=0 and the same numbers. Results in $OUT/watchdog-h200.txt.
# ENGINES (default "cuda vulkan opencl"), PATHS (the normal runs, default 10^7) and BIN (default
# build/gpu/bin) override; here: BIN=build/ci/cli PATHS=20000 ENGINES="vulkan opencl".
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
bin=${BIN:-$PWD/build/gpu/bin}
export TAPELAB_CACHE_DIR=${TAPELAB_CACHE_DIR:-/tmp/tapelab-cache}
{
  for engine in ${ENGINES:-cuda vulkan opencl}; do
    echo "=== $engine"
    start=$(date +%s%N)
    TAPELAB_DEVICE_TIMEOUT=0.00001 timeout 300 "$bin/tapelab" price --product european --engine "$engine" \
      --paths 1073741824
    echo "tiny limit: rc=$? in $(( ($(date +%s%N) - start) / 1000000 )) ms (want rc=1, one line above)"
    for limit in "" 0; do
      TAPELAB_DEVICE_TIMEOUT=$limit timeout 300 "$bin/tapelab" price --product european --engine "$engine" \
        --paths "${PATHS:-10000000}" | tail -n +2 | md5sum
      echo "limit '${limit:-default}': rc=${PIPESTATUS[0]} (want rc=0 and the same digest twice)"
    done
  done
} 2>&1 | tee "$out/watchdog-h200.txt"
