#!/usr/bin/env bash
# A long property run spread over the machine's cores: one process per
# (property, engine) pair and seed, each running cases until its time is up
# (TAPELAB_PROPERTY_SECONDS), then one table of tapes seen per property and
# engine, summed over processes. Made for the lent H200, where the GPU engines'
# compilers (NVRTC + ptxas, NVIDIA's OpenCL and Vulkan compilers) are the
# bottleneck and run on the CPU cores.
#
#   properties/parallel_run.sh [-e ENGINES] [-p PATTERN] [-j JOBS] [-s SECONDS] [-n MAX_NODES] [-b BINARY] [-m RANKS]
#     -e  comma-separated engines (default vulkan,cuda,opencl)
#     -p  only the properties whose name (Engines/Suite.Property) matches this extended regex (default: all)
#     -j  processes (seeds) per (property, engine) pair (default 1; CheckpointedEqualsPlain gets twice as many)
#     -s  seconds each process keeps starting new cases (default 420)
#     -n  TAPELAB_PROPERTY_MAX_NODES: the largest tape's steps for compiled engines (default 400)
#     -b  the property binary (default build/release/properties/tapelab_properties,
#         else build/gpu/bin/tapelab_properties)
#     -m  spread the processes over RANKS MPI ranks (several GPUs of a host, several hosts): rank r runs
#         processes r, r+RANKS, ...; each takes the GPU of its rank on its host (rank mod the engine's
#         device count, as tapelab under mpirun) unless TAPELAB_*_DEVICE names one. The launcher is
#         $TAPELAB_PROPERTY_MPIRUN (default: mpirun --oversubscribe --bind-to none; add a hostfile there);
#         with several hosts OUT must be on a shared file system (the ranks write their logs under it).
#   Environment: TAPELAB_PROPERTY_SEED is the first seed (default 20261129); process k uses seed+k.
#   OUT (default ./property-run) receives parallel-counts.txt, parallel-logs.tar.gz and the
#   shrunk tape of every failure (in the tarball, failures/).
set -uo pipefail
cd "$(dirname "$0")/.."
usage() { sed -n '2,/^[^#]/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; }
args=("$@")
engines=vulkan,cuda,opencl jobs=1 secs=420 nodes=400 bin= pattern= ranks=0 rankwork=
# -R WORK (internal): this process is one rank of -m's mpirun, writing into WORK.
while getopts "e:p:j:s:n:b:m:R:h" o; do
  case $o in
    e) engines=$OPTARG ;; p) pattern=$OPTARG ;; j) jobs=$OPTARG ;; s) secs=$OPTARG ;; n) nodes=$OPTARG ;; b) bin=$OPTARG ;;
    m) ranks=$OPTARG ;; R) rankwork=$OPTARG ;;
    h) usage; exit 0 ;; *) usage >&2; exit 2 ;;
  esac
done
for v in "$jobs" "$secs" "$nodes"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "parallel_run.sh: -j, -s and -n take positive integers, got '$v'" >&2; exit 2; }
done
[[ "$ranks" =~ ^[0-9]+$ ]] || { echo "parallel_run.sh: -m takes a positive integer, got '$ranks'" >&2; exit 2; }
if [[ -z "$bin" ]]; then
  for c in build/release/properties/tapelab_properties build/gpu/bin/tapelab_properties; do
    [[ -x "$c" ]] && { bin=$c; break; }
  done
fi
[[ -n "$bin" && -x "$bin" ]] || { echo "parallel_run.sh: no property binary (build tapelab_properties or pass -b)" >&2; exit 2; }
bin=$(realpath "$bin")
out=${OUT:-property-run}
mkdir -p "$out"
if [[ -n "$rankwork" ]]; then
  work=$rankwork
elif [[ $ranks -gt 0 ]]; then
  work=$(mktemp -d "$(realpath "$out")/.work.XXXXXX")  # seen by every rank (a shared OUT across hosts)
else
  work=$(mktemp -d)
fi
mkdir -p "$work/logs" "$work/failures"
seed0=${TAPELAB_PROPERTY_SEED:-20261129}
# Under -m: which of the processes this rank runs (every rank lists them the same way).
rank=0 size=1
if [[ -n "$rankwork" ]]; then
  rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-0}}}
  size=${OMPI_COMM_WORLD_SIZE:-${PMI_SIZE:-1}}
  # The property processes are no ranks: seeds stay seed+k and tapelab starts no MPI in them; the
  # host-local rank stays, so each takes its rank's GPU (api/knobs.cpp's deviceSlot).
  unset OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMI_RANK PMI_SIZE PMIX_RANK
fi

# The engine properties, from the binary's own list (Engines/<Suite>.<Property>/<engine>).
mapfile -t props < <("$bin" --gtest_list_tests | awk '/^[A-Za-z]/ { s = $1 } /^  / && s ~ /^Engines\// { sub(/\/.*/, "", $1); print s $1 }' | sort -u)
[[ ${#props[@]} -gt 0 ]] || { echo "parallel_run.sh: $bin lists no engine properties" >&2; exit 2; }
if [[ -n "$pattern" ]]; then
  mapfile -t props < <(printf '%s\n' "${props[@]}" | { grep -E -- "$pattern" || true; })
  [[ ${#props[@]} -gt 0 ]] || { echo "parallel_run.sh: -p: no engine property matches '$pattern'" >&2; exit 2; }
fi

known=$("$bin" --gtest_list_tests | awk '/^  [^ ]*\// { sub(/^[^\/]*\//, "", $1); print $1 }' | sort -u | tr '\n' ' ')
IFS=, read -ra engs <<<"$engines"
for e in "${engs[@]}"; do
  [[ " $known" == *" ${e//[^A-Za-z0-9]/_} "* ]] ||
    { echo "parallel_run.sh: -e: no engine '$e' in $bin (known: $known)" >&2; exit 2; }
done

if [[ $ranks -gt 0 && -z "$rankwork" ]]; then
  read -ra mpirun <<<"${TAPELAB_PROPERTY_MPIRUN:-mpirun --oversubscribe --bind-to none}"
  echo "parallel_run.sh: over $ranks MPI ranks: ${mpirun[*]} -np $ranks"
  start=$(date +%s)
  "${mpirun[@]}" -np "$ranks" bash "$PWD/properties/parallel_run.sh" "${args[@]}" -b "$bin" -R "$work"
  status=$?
  k=$(cat "$work"/processes.* 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
else
export TAPELAB_PROPERTY_RUNS=100000 TAPELAB_PROPERTY_SECONDS=$secs TAPELAB_PROPERTY_MAX_NODES=$nodes
export TAPELAB_PROPERTY_SHRINK_SECONDS=${TAPELAB_PROPERTY_SHRINK_SECONDS:-120}
k=0
pids=()
for e in "${engs[@]}"; do
  param=${e//[^A-Za-z0-9]/_}
  for p in "${props[@]}"; do
    n=$jobs
    [[ $p == *CheckpointedEqualsPlain ]] && n=$((2 * jobs))
    for ((j = 0; j < n; ++j)); do
      ((k % size == rank)) || { k=$((k + 1)); continue; }
      name="${p//[^A-Za-z0-9]/_}-$param-$j"
      TAPELAB_PROPERTY_SEED=$((seed0 + k)) TAPELAB_PROPERTY_FAILURES="$work/failures/$name" \
        "$bin" --gtest_filter="$p/$param" >"$work/logs/$name.log" 2>&1 &
      pids+=($!)
      k=$((k + 1))
    done
  done
done
where=""; [[ -n "$rankwork" ]] && where="rank $rank of $size on $(hostname): ${#pids[@]} of "
echo "parallel_run.sh: $where$k processes (${#props[@]} properties x engines $engines), ${secs} s each, tapes up to $nodes steps, seeds $seed0..$((seed0 + k - 1))"
start=$(date +%s)
while :; do
  alive=0
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=$((alive + 1)); done
  [[ $alive -eq 0 ]] && break
  [[ $rank -eq 0 ]] && echo "parallel_run.sh: $(( $(date +%s) - start )) s, $alive of ${#pids[@]} processes running${where:+ on rank 0}"
  sleep "$(( secs < 30 ? 1 : 30 ))"
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
if [[ -n "$rankwork" ]]; then  # the parent sums up
  echo "${#pids[@]}" >"$work/processes.$rank"
  exit "$status"
fi
fi

{
  echo "property run: $k processes$([[ $ranks -gt 0 ]] && echo " over $ranks MPI ranks"), ${secs} s each, tapes up to $nodes steps, seeds $seed0..$((seed0 + k - 1)), $(( $(date +%s) - start )) s wall"
  printf '%-48s %-8s %6s %8s %8s %8s %10s %8s\n' property engine procs tapes kernels nested compared nanbits
  cat "$work"/logs/*.log | grep '^COUNT ' |
    sed -E 's/^COUNT ([^ ]+)\/[^ ]+ engine=([^ ]+) tapes=([0-9]+) kernels=([0-9]+) runs=[0-9]+ compared=([0-9]+) unchecked=[0-9]+ nanbits=([0-9]+) nested=([0-9]+).*/\1 \2 \3 \4 \5 \6 \7/' |
    awk '{ k = $1 " " $2; n[k]++; t[k] += $3; kr[k] += $4; c[k] += $5; nb[k] += $6; ne[k] += $7; te[$2] += $3; all += $3 }
         END { for (k in n) { split(k, a, " "); printf "%-48s %-8s %6d %8d %8d %8d %10d %8d\n", a[1], a[2], n[k], t[k], kr[k], ne[k], c[k], nb[k] }
               for (e in te) printf "total %-42s %-8s %15d\n", "", e, te[e]; printf "total %-42s %-8s %15d\n", "", "all", all }' | sort
  echo "failures:"
  grep -h -E '^\[  FAILED  \] Engines' "$work"/logs/*.log | sort -u || true
  grep -l -E '^\[  FAILED  \]' "$work"/logs/*.log >/dev/null 2>&1 || echo "  none"
} | tee "$out/parallel-counts.txt"
tar czf "$out/parallel-logs.tar.gz" -C "$work" logs failures
rm -rf "$work"
exit "$status"
