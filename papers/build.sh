#!/bin/sh
# Rebuilds every figure (PNG) and table (Markdown) of papers/findings.md from the
# CSVs in papers/data/ (or DATA_DIR) into papers/ (or OUT_DIR): figures/ and tables/.
# Same CSVs, same files. Needs python3-matplotlib (scripts/setup.sh installs it).
#   papers/build.sh [DATA_DIR [OUT_DIR]]      (also: cmake --build --preset ci --target paper)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=${1:-$here/data}
out=${2:-$here}
python=${PYTHON:-/usr/bin/python3}  # Debian's, which has matplotlib (pyenv's python3 may not)
SOURCE_DATE_EPOCH=0 exec "$python" "$here/plot.py" "$data" "$out"
