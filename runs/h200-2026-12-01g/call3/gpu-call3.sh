#!/usr/bin/env bash
# Session 9, call 3: the reductions beside the next kernel (greatest priority, the default) against
# behind each kernel, with more ladders (gpu_kernels --reps 15, alternating, three rounds; call 2's
# compare medians of 3 disagreed at 4M); then the peers with the faster placement.
set -uo pipefail
source scripts/gpu-call-lib.sh 3
sample_clocks
S2=PATHS_PER_LANE=1+KAHAN_LOCAL=0+APPROX_MATH=1+QUANTILE_SELECT=1+MARKET_LOOP=1+CUDA_OUTLINE_DRAWS=0+CUDA_MIN_BLOCKS=10+STORE_DRAWS=1
mkdir -p "$out/cuda"
OUT=$out/cuda OCC_SETS="$S2" OCC_JOBS=1 timeout 170 bash scripts/gpu-occupancy.sh compile
stamp "compiled"
for round in 1 2 3; do
  for s in $S2 $S2+CUDA_SUMS_BESIDE=0; do
    mapfile -t K < <(knobs "$s")
    echo "=== round $round: ${K[*]}" >> "$out/ab.txt"
    env "${K[@]}" timeout 60 "$bin/gpu_kernels" --engine cuda --markets 7 --kinds register --segments 16 \
      --paths 1000000,4000000 --greeks on --reps 15 >> "$out/ab.txt" 2>&1
  done
done
stamp "a/b"
P=(price --product asian --steps 252 --fp32 --engine cuda --kernel register --checkpoint 16
   --ladder spot=97,98,99,100,101,102,103 --markets 7)
for s in $S2 $S2+CUDA_SUMS_BESIDE=0; do
  mapfile -t K < <(knobs "$s")
  echo "=== timeline 4000000 paths (${K[*]})" >> "$out/timeline-runs.txt"
  env "${K[@]}" TAPELAB_TIMELINE=1 timeout 30 "$bin/tapelab" "${P[@]}" --paths 4000000 >> "$out/timeline-runs.txt" 2>&1
done
# The placement with the higher mean Mpath/s over both sizes and the three rounds.
best=$(awk '/^=== round/ { set = ($0 ~ /BESIDE=0/) ? "behind" : "beside" } $1 == "register" && $4 == 7 && $5 == "on" { s[set] += $11; n[set]++ }
  END { for (k in s) print s[k] / n[k], k }' "$out/ab.txt" | sort -g | tail -1 | awk '{print $2}')
echo "faster: ${best:-unknown}" | tee -a "$out/timeline.txt"
extra=(); [ "$best" = behind ] && extra=(TAPELAB_CUDA_SUMS_BESIDE=0)
mapfile -t K < <(knobs "$S2")
common=(--machine h200 --sweep-bin "$bin/scratch_sweep" --tapelab-bin "$bin/tapelab" --commit "$commit" --paths 1000000,4000000)
env "${K[@]}" "${extra[@]}" timeout 170 python3 experiments/drivers/peers.py "${common[@]}" --engines cuda --out "$out/peers-cuda-h200.csv" \
    2>> "$out/peers-progress.txt"
stamp "peers"
