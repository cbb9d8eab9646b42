#!/usr/bin/env bash
# 1 vs 2 GPUs with MPI (issue #16), on a machine with two H200s (device tool kind nvidia-h200-x2):
# the main job's tape (--product asian --steps 252 --fp32, value + 5 Greeks, the default kernel:
# register-checkpointed, 16 segments), at 64M and 1G paths, on cuda and vulkan. For each engine
# and path count: one process (no mpirun), mpirun -np 1 and mpirun -np 2; prints whether the bits
# (value, Greeks, standard errors) are identical, the speed-up, and where the time goes (each
# rank's run, rank 0's wait for the slower rank, the reduction, compile, process start).
#
#   Here:  ./scripts/gpu-fetch-runtime.sh   (once: its .debs include Open MPI's runtime)
#          cmake --preset release && cmake --build --preset release && ./scripts/gpu-pack.sh
#   There: run(kind=nvidia-h200-x2, carry=[".gpu-runtime", "build/gpu.tar.xz"],
#              command="source scripts/gpu-env.sh; bash scripts/gpu-mpi-scaling.sh")
#
# Results in $OUT: scaling.txt (the table), runs/*.json (every run), log.txt. About 5-7 minutes
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

# run NAME RANKS ENGINE PATHS: one pricing; its JSON in runs/NAME.json, wall seconds in runs/NAME.wall.
run() {
  local name=$1 ranks=$2 engine=$3 paths=$4 f=$out/runs/$1.json
  local cmd=("$bin/tapelab" price $job --engine "$engine" --paths "$paths" --json)
  [ "$ranks" -gt 0 ] && cmd=("${mpi[@]}" -np "$ranks" "${cmd[@]}")
  local t0=$(date +%s.%N)
  timeout 240 "${cmd[@]}" >"$f" 2>>"$log"
  local rc=$?
  awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.2f\n", a - b }' > "$out/runs/$name.wall"
  echo "--- $name (rc $rc): $(cat "$out/runs/$name.wall") s wall" >>"$log"
  if [ $rc -ne 0 ]; then echo "gpu-mpi-scaling: $name failed (rc $rc), see log.txt" | tee -a "$log"; return 1; fi
}

{
  printf '%-7s %10s %-9s %10s %10s %9s %8s  %-34s %9s %9s %8s %12s\n' engine paths setup "run s" "wall s" "speed-up" \
    "compile" "per-rank run s" "wait s" "reduce s" "Mpath/s" "bits"
} >"$out/scaling.txt"
for engine in $engines; do
  # Compile once (cached for the runs below) and keep the first-use costs out of the numbers.
  run "$engine-warm" 0 "$engine" 1000000 || continue
  "${mpi[@]}" -np 2 "$bin/tapelab" price $job --engine "$engine" --paths 1000000 --json >/dev/null 2>>"$log"
  for paths in $paths_list; do
    label=$paths
    base=$engine-$label-single
    run "$base" 0 "$engine" "$paths" || continue
    # Which GPU each rank holds, sampled during the 2-rank run.
    (sleep 6; nvidia-smi --query-compute-apps=pid,gpu_bus_id,used_memory --format=csv,noheader >"$out/runs/$engine-$label-np2.gpus" 2>&1) &
    run "$engine-$label-np1" 1 "$engine" "$paths"
    run "$engine-$label-np2" 2 "$engine" "$paths"
    wait
    for setup in single np1 np2; do
      f=$out/runs/$engine-$label-$setup.json
      [ -s "$f" ] || continue
      secs=$(field "$f" seconds)
      wall=$(cat "$out/runs/$engine-$label-$setup.wall")
      speed=$(awk -v a="$(field "$out/runs/$base.json" seconds)" -v b="$secs" 'BEGIN { printf "%.3f", a / b }')
      same=differ; [ "$(bits "$f")" == "$(bits "$out/runs/$base.json")" ] && same=identical
      ranks=$(grep -o '"run_seconds":\[[^]]*\]' "$f" | cut -d: -f2)
      printf '%-7s %10s %-9s %10.4f %10.2f %8sx %8.2f  %-34s %9s %9s %8.1f %12s\n' "$engine" "$label" "$setup" "$secs" "$wall" \
        "$speed" "$(field "$f" compile_seconds)" "${ranks:--}" "$(field "$f" wait_seconds)" "$(field "$f" reduce_seconds)" \
        "$(awk -v p="$paths" -v s="$secs" 'BEGIN { print p / s / 1e6 }')" "$same" >>"$out/scaling.txt"
    done
  done
done
{
  echo
  echo "run s: rank 0's run() (compile excluded; with ranks: its part, the wait for every rank's agreement, the"
  echo "partials sent to rank 0 and added in block order, the sums broadcast). speed-up: single's run s / this run s."
  echo "per-rank run s: each rank's own paths on its GPU; wait s: rank 0 waiting for the slowest rank; reduce s:"
  echo "receiving and adding the other ranks' block partials. wall s - compile - run s: process and MPI start-up,"
  echo "kernel load from the cache. bits: value, Greeks and standard errors against the single process."
  last=${paths_list##* }
  echo "value (single, $last paths): $(for e in $engines; do f=$out/runs/$e-$last-single.json; [ -s "$f" ] && echo "$e $(field "$f" value)"; done)"
} >>"$out/scaling.txt"
cat "$out/scaling.txt"
