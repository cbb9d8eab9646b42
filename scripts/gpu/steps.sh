# The time budget of a call script (scripts/gpu/*.sh): source it after setting t0 (the start, date +%s),
# deadline (seconds from t0), out (the results folder) and stamp WHAT (a line into $out/timeline.txt).
#   left              the seconds left before the deadline
#   step NEED NAME CMD...   CMD (stdout into $out/NAME, stderr into progress.txt) when NEED seconds are left,
#                     cut at what is left; its exit status goes to timeline.txt
left() { echo $(( deadline - ($(date +%s) - t0) )); }
step() {
  local need=$1 name=$2; shift 2
  local l; l=$(left)
  if (( l < need )); then echo "skipped $name: $l s left, needs $need" | tee -a "$out/timeline.txt"; return; fi
  stamp "$name"
  echo "=== $name: $*" >> "$out/progress.txt"
  timeout "$l" "$@" > "$out/$name" 2>> "$out/progress.txt"
  echo "$name exit $?" >> "$out/timeline.txt"
}
