#!/bin/sh
# Every experiment driver that records a built-in product refuses sizes too large together before
# recording (issue 49: tangent_crossover --basket-steps 1000000 --assets 64 reached 16.9 GB): exit 2,
# one line naming its flags and the bound, within seconds and 2 GB of address space. CTest runs it
# (experiments/CMakeLists.txt) with the build's experiments folder and its Python module folder.
#   size_bounds_check.sh BUILD/experiments BUILD/python SOURCE
set -u
bin=$1 py=$2 src=$3
failed=0
check() {  # check NAME COMMAND...: exit 2, one line on stderr saying the bound
  name=$1
  shift
  err=$( (ulimit -v 2000000; timeout 30 "$@" 2>&1 >/dev/null) )
  rc=$?
  lines=$(printf '%s\n' "$err" | grep -c .)
  if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || ! printf '%s' "$err" | grep -q 'over the bound of'; then
    echo "FAIL $name: exit $rc, stderr: $err"
    failed=1
  else
    echo "ok   $name: $err"
  fi
}
check tangent_crossover "$bin/tangent_crossover" --engines reference --basket-steps 1000000 --assets 64
check tangent_crossover-max-nodes "$bin/tangent_crossover" --engines reference --assets 8 --max-nodes 100
check gpu_kernels "$bin/gpu_kernels" --engine reference --steps 1000000
check scratch_sweep "$bin/scratch_sweep" --engines reference --steps 100000 --max-nodes 100000
if [ -x "$bin/market_order" ]; then check market_order "$bin/market_order" --steps 1000000; fi
check calibrate_proxy env TAPELAB_MAX_NODES=1000 "$bin/calibrate_proxy" --steps 500
check python_strategy env PYTHONPATH="$py" /usr/bin/python3 "$src/experiments/python_strategy.py" \
  --tapes heat:steps=1000000:points=10001 --out "${TMPDIR:-/tmp}/size_bounds_check_$$"  # the bench's flags
exit $failed
