#!/usr/bin/env bash
# 1 vs 2 GPUs with MPI (issue #16), on a machine with two H200s (device tool kind nvidia-h200-x2):
# the main job's tape (--product asian --steps 252 --fp32, value + 5 Greeks, the default kernel:
# register-checkpointed, 16 segments), at 64M and 1G paths, on cuda and vulkan. For each engine
# and path count: one process (no mpirun) on each GPU, mpirun -np 1, mpirun -np 2 (chunks taken
# as the ranks go), -np 2 with the GPUs swapped between the ranks, and -np 2 in fixed halves (the
# earlier split); prints whether the bits (value, Greeks, standard errors) are identical, the
# speed-up, and where the time goes (chunks and busy time per rank, when each rank's engine ended,
# rank 0's wait for the last partials, the block-order additions and the tail after the engines).
#
#   Here:  ./scripts/gpu-fetch-runtime.sh   (once: its .debs include Open MPI's runtime)
#          cmake --preset release && cmake --build --preset release && ./scripts/gpu-pack.sh
#   There: run(kind=nvidia-h200-x2, carry=[".gpu-runtime", "build/gpu.tar.xz"],
#              command="source scripts/gpu-env.sh; bash scripts/gpu-mpi-scaling.sh")
#
# Results in $OUT: scaling.txt (the table), runs/*.json (every run), log.txt. About 7-9 minutes
# with cold kernel caches (two compiles per engine: one for the single process, which the ranks
# then load from the cache). SCALING_PATHS / SCALING_ENGINES override the lists, SCALING_BIN the
# folder holding tapelab (a CPU check here: SCALING_ENGINES=cpu-jit SCALING_PATHS="200000" SCALING_BIN=build/ci/cli).
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out/runs"
bin=${SCALING_BIN:-$PWD/build/gpu/bin}
[ -x "$bin/tapelab" ] || bin=$PWD/build/release/cli   # a build on the machine itself
export TAPELAB_CACHE_DIR=${TAPELAB_CACHE_DIR:-/tmp/tapelab-cache}
export __GL_SHADER_DISK_CACHE=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Debian's PMIx 4.2 unpacked on the H200's Ubuntu 24.04 crashed orterun (SIGSEGV in
# pmix_preg_base_generate_ppn, 2026-11-30); these two components avoid the crashing paths.
export PMIX_MCA_gds=hash PMIX_MCA_preg=native
export OMPI_MCA_mca_base_component_show_load_errors=0   # components whose libraries we did not carry (ucx, ofi)
paths_list=${SCALING_PATHS:-"64000000 1000000000"}
engines=${SCALING_ENGINES:-"cuda vulkan"}
job=${SCALING_JOB:-"--product asian --steps 252 --fp32"}
log=$out/log.txt

# Our Open MPI (Debian 12's 4.1.4, which tapelab links) first: orterun from .gpu-runtime, then the image's.
mpirun=
for c in /usr/bin/orterun /usr/bin/mpirun.openmpi "$(command -v mpirun || true)"; do
  [ -n "$c" ] && [ -x "$c" ] && { mpirun=$c; break; }
done
{
  echo "=== $(date -u)"; nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader 2>&1
  echo "mpirun: ${mpirun:-none}"; [ -n "$mpirun" ] && "$mpirun" --version 2>&1 | head -1
  ldd "$bin/tapelab" | grep -E "mpi|open-(rte|pal)|pmix|hwloc|not found"
} | tee "$log"
if [ -z "$mpirun" ]; then
  echo "gpu-mpi-scaling: no mpirun: carry .gpu-runtime made by scripts/gpu-fetch-runtime.sh (it holds Open MPI's .debs)" | tee -a "$log"
  exit 3
fi
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$ngpu" -ge 2 ] || echo "gpu-mpi-scaling: only $ngpu GPU(s): -np 2 shares one (ask for nvidia-h200-x2)" | tee -a "$log"
mpi=("$mpirun" --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader --mca pml ob1
     -x VK_DRIVER_FILES -x TAPELAB_CACHE_DIR -x LD_LIBRARY_PATH -x CPLUS_INCLUDE_PATH -x __GL_SHADER_DISK_CACHE)

# field JSON KEY: a number's text from --json output (first match).
field() { grep -o "\"$2\":[^,}]*" "$1" | head -1 | cut -d: -f2; }
# The result's numbers: value, stderr, Greeks and their stderrs (what must be identical).
bits() { sed 's/.*\("value".*\),"kernel_stats".*/\1/' "$1"; }

# arr JSON KEY: a JSON array's inside ("1,2"), from the ranks object.
arr() { grep -o "\"$2\":\[[^]]*\]" "$1" | head -1 | sed 's/.*\[\(.*\)\]/\1/'; }
# fmt LIST: numbers rounded to 3 decimals, joined by '/'.
fmt() { tr ',' '\n' <<<"$1" | awk 'NF { printf "%s%.3f", (n++ ? "/" : ""), $1 }'; }

# run NAME RANKS ENGINE PATHS [ENV...]: one pricing; its JSON in runs/NAME.json, wall seconds in
# runs/NAME.wall. RANKS 0: no mpirun. ENV: VAR=VALUE for every process (after mpirun: -x VAR).
# RANKS "swap": two ranks, rank 0 on GPU 1 and rank 1 on GPU 0 (tells a slow GPU from a slow rank).
run() {
  local name=$1 ranks=$2 engine=$3 paths=$4 f=$out/runs/$1.json
  shift 4
  local cmd=("$bin/tapelab" price $job --engine "$engine" --paths "$paths" --json)
  local envs=() xs=()
  for e in "$@"; do envs+=("$e"); xs+=(-x "$e"); done
  local dev=TAPELAB_CUDA_DEVICE; [ "$engine" == vulkan ] && dev=TAPELAB_VULKAN_DEVICE
  if [ "$ranks" == swap ]; then
    cmd=("${mpi[@]}" "${xs[@]}" -np 1 -x "$dev=1" "${cmd[@]}" : -np 1 -x "$dev=0" "${cmd[@]}")
  elif [ "$ranks" -gt 0 ]; then
    cmd=("${mpi[@]}" "${xs[@]}" -np "$ranks" "${cmd[@]}")
  fi
  local t0=$(date +%s.%N)
  env "${envs[@]}" timeout 240 "${cmd[@]}" >"$f" 2>>"$log"
  local rc=$?
  awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.2f\n", a - b }' > "$out/runs/$name.wall"
  echo "--- $name (rc $rc): $(cat "$out/runs/$name.wall") s wall" >>"$log"
  if [ $rc -ne 0 ]; then echo "gpu-mpi-scaling: $name failed (rc $rc), see log.txt" | tee -a "$log"; return 1; fi
}

{
  printf '%-7s %10s %-11s %8s %7s %8s %7s %6s  %-9s %-13s %-13s %-13s %6s %6s %6s %6s %7s %9s\n' engine paths setup "run s" \
    "wall s" speed-up compile chunks "per rank:" "chunks" "busy s" "end s" "idle" "wait" reduce "tail r" "tail s" bits
} >"$out/scaling.txt"
for engine in $engines; do
  dev=TAPELAB_CUDA_DEVICE; [ "$engine" == vulkan ] && dev=TAPELAB_VULKAN_DEVICE
  # Compile once (cached for the runs below) and keep the first-use costs out of the numbers.
  run "$engine-warm" 0 "$engine" 1000000 || continue
  "${mpi[@]}" -np 2 "$bin/tapelab" price $job --engine "$engine" --paths 1000000 --json >/dev/null 2>>"$log"
  for paths in $paths_list; do
    label=$paths
    base=$engine-$label-single
    run "$base" 0 "$engine" "$paths" || continue
    setups="single gpu1 np1 np2 swap halves"
    # The other GPU alone: is one H200 slower than the other?
    run "$engine-$label-gpu1" 0 "$engine" "$paths" "$dev=1"
    # Which GPU each rank holds, sampled during the 2-rank run.
    (sleep 6; nvidia-smi --query-compute-apps=pid,gpu_bus_id,used_memory --format=csv,noheader >"$out/runs/$engine-$label-np2.gpus" 2>&1) &
    run "$engine-$label-np1" 1 "$engine" "$paths"
    run "$engine-$label-np2" 2 "$engine" "$paths"
    wait
    # The GPUs swapped between the ranks; and the old fixed halves (one chunk per rank) for comparison.
    run "$engine-$label-swap" swap "$engine" "$paths"
    run "$engine-$label-halves" 2 "$engine" "$paths" "TAPELAB_MPI_CHUNK_PATHS=$(( (paths + 1) / 2 ))"
    for setup in $setups; do
      f=$out/runs/$engine-$label-$setup.json
      [ -s "$f" ] || continue
      secs=$(field "$f" seconds)
      wall=$(cat "$out/runs/$engine-$label-$setup.wall")
      speed=$(awk -v a="$(field "$out/runs/$base.json" seconds)" -v b="$secs" 'BEGIN { printf "%.3f", a / b }')
      same=differ; [ "$(bits "$f")" == "$(bits "$out/runs/$base.json")" ] && same=identical
      if grep -q '"ranks"' "$f"; then
        printf '%-7s %10s %-11s %8.4f %7.2f %7sx %7.2f %6s  %-9s %-13s %-13s %-13s %6.3f %6.3f %6.3f %6.3f %7.3f %9s\n' "$engine" "$label" \
          "$setup" "$secs" "$wall" "$speed" "$(field "$f" compile_seconds)" "$(field "$f" chunks)" "" \
          "$(arr "$f" rank_chunks | tr , /)" "$(fmt "$(arr "$f" run_seconds)")" "$(fmt "$(arr "$f" end_seconds)")" \
          "$(arr "$f" idle_seconds | tr ',' '\n' | awk '{ s += $1 } END { print s + 0 }')" "$(field "$f" wait_seconds)" \
          "$(field "$f" reduce_seconds)" "$(field "$f" tail_reduce_seconds)" "$(field "$f" tail_seconds)" "$same" >>"$out/scaling.txt"
      else
        printf '%-7s %10s %-11s %8.4f %7.2f %7sx %7.2f %6s  %-9s %-13s %-13s %-13s %6s %6s %6s %6s %7s %9s\n' "$engine" "$label" "$setup" \
          "$secs" "$wall" "$speed" "$(field "$f" compile_seconds)" - "" - - - - - - - - "$same" >>"$out/scaling.txt"
      fi
    done
  done
done
{
  echo
  echo "setups: single: one process on GPU 0 (no mpirun); gpu1: one process on GPU 1; np1: mpirun -np 1; np2: two ranks"
  echo "taking chunks as they go (api/ranks.h); swap: two ranks, rank 0 on GPU 1 and rank 1 on GPU 0; halves: two ranks"
  echo "with one chunk each (TAPELAB_MPI_CHUNK_PATHS = paths/2: the earlier fixed split)."
  echo "run s: rank 0's run() (compile excluded; with ranks: the whole split run up to the sums broadcast)."
  echo "speed-up: single's run s / this run s. chunks: of the run; per rank: chunks each took, busy s (its runBlocks"
  echo "calls), end s (when its last chunk ended, from the run's start). idle: engine threads waiting for a chunk,"
  echo "summed. wait: rank 0 from its own last chunk to the last partials' arrival; reduce: all of rank 0's block-order"
  echo "additions (mostly while the engines ran); tail r: the part after rank 0's last chunk; tail s: rank 0's last"
  echo "chunk's end to the sums broadcast (what the split adds after the engines). wall s - compile - run s: process and"
  echo "MPI start-up, kernel load from the cache. bits: value, Greeks and standard errors against the single process."
  last=${paths_list##* }
  echo "value (single, $last paths): $(for e in $engines; do f=$out/runs/$e-$last-single.json; [ -s "$f" ] && echo "$e $(field "$f" value)"; done)"
} >>"$out/scaling.txt"
cat "$out/scaling.txt"
