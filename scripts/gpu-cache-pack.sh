#!/bin/sh
# Packs this machine's NVRTC kernel cache for the lent H200: build/cuda-cache.tar.xz, which
# scripts/gpu-env.sh unpacks into TAPELAB_CACHE_DIR there. Without a GPU the cuda engine still
# compiles for sm_90 (NVRTC + ptxas, compile-only) and caches the cubin under a key of the NVRTC
# version, the architecture, the options and the source, so a kernel compiled here is a cache hit
# there (NVRTC 13.0 on both, checked 2026-12-01b: every cuda kernel of three calls "(cached)").
# Compile the kernels a call will run first, e.g. with the same scratch_sweep, calibrate_proxy or
# market_order command (compare refuses a compile-only engine), then:
#   scripts/gpu-cache-pack.sh [SINCE]    SINCE: only entries modified after it (default: today 00:00),
#                                       e.g. "2026-12-01 05:00"; carry build/cuda-cache.tar.xz too.
# A 7-market entry is ~8 MB (PTX and cubin), ~0.6 MB packed; with build/gpu.tar.xz (~26 MB) keep the
# carry under the tool's 64 MiB.
set -eu
cache=${TAPELAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tapelab}
since=${1:-$(date +%Y-%m-%d)}
out=$(pwd)/build/cuda-cache.tar.xz
[ -d "$cache/cuda" ] || { echo "gpu-cache-pack.sh: no NVRTC cache in $cache/cuda" >&2; exit 1; }
list=$(mktemp)
(cd "$cache" && find cuda -name '*.nvrtc' -newermt "$since" > "$list")
n=$(wc -l < "$list")
[ "$n" -gt 0 ] || { echo "gpu-cache-pack.sh: no cache entry newer than $since" >&2; rm -f "$list"; exit 1; }
(cd "$cache" && tar cf - -T "$list") | xz -T0 -6 > "$out"
rm -f "$list"
size=$(stat -c %s "$out")
echo "gpu-cache-pack.sh: $n kernels since $since in $out ($((size / 1048576)) MiB)"
[ "$size" -lt $((36 * 1048576)) ] || echo "gpu-cache-pack.sh: over 36 MiB: with build/gpu.tar.xz the carry may pass 64 MiB; give a later SINCE" >&2
