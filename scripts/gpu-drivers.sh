#!/usr/bin/env bash
# The paper's drivers (issue 15: experiments/drivers/*.py) on the lent H200: cliff, markets and
# segments within about 8 minutes together; strategies and peers each want a call of their own
# (~5 min each; the device tool allows 10 minutes a command). Here: build release and pack
# (cmake --preset release && cmake --build --preset release && ./scripts/gpu-pack.sh), then one
# device-tool call, carrying .gpu-runtime and build/gpu.tar.xz:
#   source scripts/gpu-env.sh; bash scripts/gpu-drivers.sh [MODE...]     (default: cliff markets segments)
#   cliff     cuda,vulkan,opencl; steps 16..504 (9 lengths); plain, register (16 segments), scratch soa/aos
#             at seglen 100; 1M paths, median of 5. ~200 s cold (NVRTC of the 504-step kernels dominates).
#   markets   cuda,vulkan; 1,2,4,6,8 markets per dispatch at 252 steps; same kernels. ~170 s cold.
#   segments  cuda,vulkan; register kernel at 1..64 segments, 252 steps. ~110 s cold.
#   seglen    scratch_sweep itself (seglen x layout; not in the default: the 2026-11-29 run has it).
#   strategies  cuda,vulkan; register kernel per cut strategy (window, uniform, optimal, two-level,
#             revolve, budget) at 8, 12, 16 segments, 1 and 7 markets, 252 steps, 1M paths; revolve at
#             7 markets left out (NVRTC takes over 4 min per kernel: mode strategies-revolve7). Kernels
#             compiled 14 side by side first (NVIDIA's shader disk cache on, so Vulkan's compiles carry
#             to the timed runs), then timed one point at a time. Estimate ~90 s compile + ~150 s
#             timed, ~4-5 min; STRATEGIES_S (default 560).
#   strategies-revolve7  revolve 8/12/16 at 7 markets only, cuda,vulkan, each point cut at 420 s;
#             ~5-7 min, alone in a call (REVOLVE7_S, default 580); strategies_revolve7-h200.csv, which
#             papers/plot.py draws with strategies-h200.csv.
#   peers     JAX (one market, vmap ladder with shared draws, ladder loop), the hand-written CUDA
#             kernel (nvcc) and tapelab compare (cuda,vulkan; plain and register, 1 and 7 markets per
#             dispatch) at 1M and 4M paths, value + 5 Greeks and price only, in one CSV; JAX skipped
#             with its reason where python3 has no jax. Estimate JAX ~60 s, nvcc + kernel ~15 s,
#             compare ~170 s cold: ~4-5 min; PEERS_S (default 560). PEERS_CUDA_KNOBS='TAPELAB_A=1 ...' runs cuda
#             with those knobs (peers-M.csv, with JAX and the hand-written kernel) and Vulkan with its defaults
#             (peers_vulkan-M.csv) in the same call; 2026-12-01c's was ~60 s with warm kernel caches.
# Each mode runs under its own timeout (CLIFF_S, MARKETS_S, SEGMENTS_S, ... seconds) and on its own engines
# (CLIFF_ENGINES, MARKETS_ENGINES, SEGMENTS_ENGINES, STRATEGIES_ENGINES, PEERS_ENGINES), and writes rows
# as they finish, so a mode cut short keeps what it measured. Results in $OUT (./gpu-out elsewhere):
# MODE-h200.csv (copy them to papers/data/ and run papers/build.sh), *-progress.txt (stderr).
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
bin=$PWD/build/gpu/bin
py=${PYTHON:-python3}
export CPLUS_INCLUDE_PATH=$PWD/build/gpu/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
export TAPELAB_CACHE_DIR=${TAPELAB_CACHE_DIR:-/tmp/tapelab-cache}
export __GL_SHADER_DISK_CACHE=0
machine=${MACHINE:-h200}
common=(--machine "$machine" --sweep-bin "$bin/scratch_sweep" --tapelab-bin "$bin/tapelab" --commit "${TAPELAB_COMMIT:-$(cat build/gpu/COMMIT 2>/dev/null || cat COMMIT 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}")
say() { echo "=== $* ($(date +%T))"; }
[ $# -eq 0 ] && set -- cliff markets segments

for mode in "$@"; do
  say "$mode"
  case "$mode" in
  cliff)
    timeout "${CLIFF_S:-210}" "$py" experiments/drivers/cliff.py "${common[@]}" --engines "${CLIFF_ENGINES:-cuda,vulkan,opencl}" \
      --steps 16,32,64,128,192,252,320,400,504 --out "$out/cliff-$machine.csv" 2> >(tee "$out/cliff-progress.txt" >&2)
    ;;
  markets)
    timeout "${MARKETS_S:-170}" "$py" experiments/drivers/markets.py "${common[@]}" --engines "${MARKETS_ENGINES:-cuda,vulkan}" \
      --markets 1,2,4,6,8 --out "$out/markets-$machine.csv" 2> >(tee "$out/markets-progress.txt" >&2)
    ;;
  segments)
    timeout "${SEGMENTS_S:-110}" "$py" experiments/drivers/segments.py "${common[@]}" --engines "${SEGMENTS_ENGINES:-cuda,vulkan}" \
      --segments 1,2,4,8,16,32,64 --out "$out/segments-$machine.csv" 2> >(tee "$out/segments-progress.txt" >&2)
    ;;
  strategies|strategies-revolve7)
    # Compile times are not what this mode measures: NVIDIA's own shader cache on, so the compile
    # phase's Vulkan pipelines are hits in the timed runs (tapelab's single pipeline-cache file is
    # last-writer-wins across processes).
    export __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1 __GL_SHADER_DISK_CACHE_SIZE=4294967296
    export __GL_SHADER_DISK_CACHE_PATH=/tmp/tapelab-nv-shader-cache
    if [ "$mode" = strategies ]; then
      timeout "${STRATEGIES_S:-560}" "$py" experiments/drivers/strategies.py "${common[@]}" --engines "${STRATEGIES_ENGINES:-cuda,vulkan}" \
        --skip revolve@7 --compile-jobs 14 --point-timeout 300 --out "$out/strategies-$machine.csv" \
        2> >(tee "$out/strategies-progress.txt" >&2)
    else
      timeout "${REVOLVE7_S:-580}" "$py" experiments/drivers/strategies.py "${common[@]}" --engines cuda,vulkan \
        --strategies revolve --markets 7 --compile-jobs 14 --point-timeout 420 \
        --out "$out/strategies_revolve7-$machine.csv" 2> >(tee "$out/strategies-revolve7-progress.txt" >&2)
    fi
    export __GL_SHADER_DISK_CACHE=0
    ;;
  peers)
    # Compile times are not measured here either: NVIDIA's shader cache on, so the Vulkan pipelines of
    # the first compare serve the later ones (7-market pipelines take about a minute each to build).
    export __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1 __GL_SHADER_DISK_CACHE_SIZE=4294967296
    export __GL_SHADER_DISK_CACHE_PATH=/tmp/tapelab-nv-shader-cache
    if [ -n "${PEERS_CUDA_KNOBS:-}" ]; then
      # cuda with knobs (e.g. its fastest set, README), JAX and the hand-written kernel in peers-M.csv (the
      # header's knobs= names them); Vulkan with its defaults in peers_vulkan-M.csv; same call, PEERS_S
      # shared (two thirds, one third). PEERS_ENGINES does not apply here.
      for k in $PEERS_CUDA_KNOBS; do
        [[ $k == TAPELAB_*=* ]] || { echo "gpu-drivers.sh: PEERS_CUDA_KNOBS: '$k' is not TAPELAB_NAME=VALUE" >&2; exit 2; }
      done
      total=${PEERS_S:-560}
      env $PEERS_CUDA_KNOBS timeout $(( total * 2 / 3 )) "$py" experiments/drivers/peers.py "${common[@]}" --engines cuda \
        --paths 1000000,4000000 --out "$out/peers-$machine.csv" 2> >(tee "$out/peers-progress.txt" >&2)
      timeout $(( total / 3 )) "$py" experiments/drivers/peers.py "${common[@]}" --engines vulkan --no-jax --no-handwritten \
        --paths 1000000,4000000 --out "$out/peers_vulkan-$machine.csv" 2> >(tee -a "$out/peers-progress.txt" >&2)
    else
      timeout "${PEERS_S:-560}" "$py" experiments/drivers/peers.py "${common[@]}" --engines "${PEERS_ENGINES:-cuda,vulkan}" \
        --paths 1000000,4000000 --out "$out/peers-$machine.csv" 2> >(tee "$out/peers-progress.txt" >&2)
    fi
    export __GL_SHADER_DISK_CACHE=0
    ;;
  seglen)
    timeout "${SEGLEN_S:-400}" "$bin/scratch_sweep" --engines cuda,vulkan,opencl \
      --out "$out/scratch_sweep-$machine.csv" 2> >(tee "$out/seglen-progress.txt" >&2)
    ;;
  *) echo "gpu-drivers.sh: unknown mode '$mode' (cliff, markets, segments, seglen, strategies, strategies-revolve7, peers)" >&2; exit 2 ;;
  esac
  echo "exit $? ($mode)"
done
