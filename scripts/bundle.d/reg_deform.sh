#!/usr/bin/env bash
# reg_deform's bundle hook: bench_reg_deform links Google Benchmark's shared library, which the GPU
# host lacks (no -dev packages); carry it beside the binaries (run.sh puts lib/ on LD_LIBRARY_PATH).
set -euo pipefail
DEST=$1
BUILD_DIR=$2
b="$BUILD_DIR/bin/bench_reg_deform"
[ -x "$b" ] || exit 0
ldd "$b" | awk '/=>/ {print $3}' | grep -E 'libbenchmark' | while read -r lib; do cp -L "$lib" "$DEST/lib/"; done
