#!/usr/bin/env bash
# A long property run: every property on every engine usable on this machine,
# with TAPELAB_PROPERTY_RUNS times the CI case counts, then a table of how
# many tapes each property saw per engine (from the COUNT lines).
#
#   properties/long_run.sh [BINARY] [RUNS] [GTEST_FILTER]
#     BINARY  the property binary (default: build/release/properties/tapelab_properties,
#             else build/gpu/bin/tapelab_properties, which scripts/gpu-pack.sh packs)
#     RUNS    TAPELAB_PROPERTY_RUNS (default 100: about 1,000 tapes per GPU engine and property)
#     FILTER  --gtest_filter (default: everything)
#   Environment: TAPELAB_PROPERTY_SEED (default 20240917) picks another seed set;
#   TAPELAB_PROPERTY_FAILURES where shrunk failing tapes go (default ./property-failures);
#   OUT, when set (the GPU machine's result folder), receives the log and the table.
#
# On the H200 (see DEVELOPERS.md): carry .gpu-runtime and build/gpu, then
#   source scripts/gpu-env.sh; properties/long_run.sh build/gpu/bin/tapelab_properties 100 '*vulkan*:*cuda*:*opencl*'
set -uo pipefail
cd "$(dirname "$0")/.."

bin=${1:-}
if [[ -z "$bin" ]]; then
  for c in build/release/properties/tapelab_properties build/gpu/bin/tapelab_properties; do
    [[ -x "$c" ]] && { bin=$c; break; }
  done
fi
[[ -n "$bin" && -x "$bin" ]] || { echo "long_run.sh: no property binary (build tapelab_properties or pass its path)" >&2; exit 2; }
runs=${2:-100}
filter=${3:-*}
out=${OUT:-.}
log="$out/properties-long-run.log"
export TAPELAB_PROPERTY_RUNS=$runs
export TAPELAB_PROPERTY_FAILURES=${TAPELAB_PROPERTY_FAILURES:-$out/property-failures}
export TAPELAB_PROPERTY_SHRINK_SECONDS=${TAPELAB_PROPERTY_SHRINK_SECONDS:-300}

echo "long_run.sh: $bin, TAPELAB_PROPERTY_RUNS=$runs, filter '$filter', log $log"
start=$(date +%s)
"$bin" --gtest_filter="$filter" 2>&1 | tee "$log" | grep -E '^(COUNT|SKIP|\[  FAILED|\[       OK)' 
status=${PIPESTATUS[0]}
end=$(date +%s)

{
  echo
  echo "tapes seen per property and engine (TAPELAB_PROPERTY_RUNS=$runs, $((end - start)) s):"
  printf '%-55s %-14s %8s %8s %8s %9s\n' property engine tapes kernels compared seconds
  grep '^COUNT ' "$log" | sed -E 's/^COUNT ([^ ]+) engine=([^ ]+) tapes=([0-9]+) kernels=([0-9]+) runs=[0-9]+ compared=([0-9]+) unchecked=[0-9]+ nanbits=[0-9]+ seconds=([0-9.]+).*/\1 \2 \3 \4 \5 \6/' |
    awk '{ printf "%-55s %-14s %8d %8d %8d %9s\n", $1, $2, $3, $4, $5, $6; t[$2] += $3; all += $3 }
         END { for (e in t) printf "total %-49s %8d\n", e, t[e]; printf "total %-49s %8d\n", "all", all }'
  echo "failures:"
  grep -E '^\[  FAILED  \] [^ ]+/|^\[  FAILED  \] [A-Za-z]+\.[A-Za-z]+ \(' "$log" || echo "  none"
} | tee "$out/properties-long-run-counts.txt"
exit "$status"
