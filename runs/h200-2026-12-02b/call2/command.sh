# Call 2 as it ran (the device tool's command line, chained 20 s after call 1 on the warm machine, so
# /tmp/tapelab-cache held call 1's kernels and tuning entries); shown here one command a line.
source scripts/gpu-env.sh >/dev/null
export __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1 __GL_SHADER_DISK_CACHE_SIZE=4294967296 __GL_SHADER_DISK_CACHE_PATH=/tmp/tapelab-nv-shader-cache
o=/tmp/res2; mkdir -p $o; T=$PWD/build/gpu/bin/tapelab; J="--product asian --steps 252"
C="$T compare $J --markets 7 --ladders 5 --json --paths 4000000"
timeout 150 $C --engines cuda,vulkan,opencl > $o/compare-4M.json 2>$o/p1.txt; echo c1 $?
timeout 60 $C --engines cuda --untuned > $o/compare-cuda-4M-untuned.json 2>$o/p2.txt; echo c2 $?
timeout 120 $T tune $J --paths 4000000 --budget-seconds 100 --json --engine cuda --markets 7 --shortlist experiments/tune/cuda.txt --config math=approx > $o/tune-cuda-x7-approx.json 2>$o/p3.txt; echo t $?
timeout 200 python3 gpu-snap/experiments/drivers/peers.py --machine h200 --commit "$(cat build/gpu/COMMIT)" --tapelab-bin $T --paths 1000000,4000000 --engines cuda --config '' --config math=approx --out $o/peers-h200.csv > $o/peers.log 2>&1; echo p $?
cp -r /tmp/tapelab-cache/tune $o/tuning-cache; tar czf $OUT/call2.tgz -C /tmp res2
