#!/bin/sh
# Rebuilds every figure (PNG) and table (Markdown) of papers/findings.md from the
# CSVs in papers/data/ (or DATA_DIR) into papers/ (or OUT_DIR): figures/ and tables/.
# Same CSVs, same files. Needs python3-matplotlib (scripts/setup.sh installs it).
# A figure that breaks papers/style.py's rules (an empty panel, a legend over the data,
# text out of its panel, ...) stops it with exit 1 naming the figure; --require-spread
# also refuses timings without error bars (CTest's paper_build_quick: fresh driver CSVs).
#   papers/build.sh [DATA_DIR [OUT_DIR]] [--require-spread]   (also: cmake --build --preset ci --target paper)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=$here/data
out=$here
flags=
n=0
for a in "$@"; do
  case $a in
    --require-spread) flags=$a ;;
    -*) echo "tapelab: papers/build.sh: unknown flag $a (usage: build.sh [DATA_DIR [OUT_DIR]] [--require-spread])" >&2; exit 2 ;;
    *) n=$((n + 1)); if [ $n = 1 ]; then data=$a; elif [ $n = 2 ]; then out=$a; else
         echo "tapelab: papers/build.sh: too many arguments ($a)" >&2; exit 2; fi ;;
  esac
done
python=${PYTHON:-/usr/bin/python3}  # Debian's, which has matplotlib (pyenv's python3 may not)
SOURCE_DATE_EPOCH=0 exec "$python" "$here/plot.py" "$data" "$out" $flags
