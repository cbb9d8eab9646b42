#!/usr/bin/env bash
# Session 5, call 8: one market per call (value + 5 Greeks) at 8 and 12 segments, cuda (fastest knobs) and Vulkan.
set -uo pipefail
out=$OUT
bin=$PWD/build/gpu/bin
export __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1 __GL_SHADER_DISK_CACHE_PATH=/tmp/nvc
K=(TAPELAB_PATHS_PER_LANE=1 TAPELAB_KAHAN_LOCAL=0 TAPELAB_CUDA_MIN_BLOCKS=6 TAPELAB_CUDA_APPROX_MATH=1
   TAPELAB_QUANTILE_SELECT=1 TAPELAB_CUDA_OUTLINE_DRAWS=1)
runcmp() { # engine segments paths [flags]
  local e=$1 s=$2 n=$3; shift 3
  local env_=(); [ "$e" = cuda ] && env_=("${K[@]}")
  timeout 60 env "${env_[@]}" "$bin/tapelab" compare --engines "$e" --kernels register --markets 1 --points 7 --fp32 \
      --checkpoint "$s" --paths "$n" "$@"
}
t0=$(date +%s)
for e in cuda vulkan; do for s in 8 12 16; do runcmp $e $s 4096 --ladders 1 > /dev/null 2>> "$out/progress.txt" & done; done
wait
echo "compiled at $(( $(date +%s) - t0 )) s" >> "$out/results.txt"
for e in cuda vulkan; do for s in 8 12 16; do
  echo "=== $e, $s segments, 4M paths" >> "$out/results.txt"
  runcmp $e $s 4000000 2>> "$out/progress.txt" | grep -E "register|plain" >> "$out/results.txt"
done; done
echo "timed at $(( $(date +%s) - t0 )) s" >> "$out/results.txt"
cat "$out/results.txt"
