#!/usr/bin/env bash
# barracuda_exact's bundle hook: the 64-bit libdivsufsort (libdivsufsort64.so.3, for references over
# 2 Gbp) is not matched by gpu-bundle.sh's library pattern, nor is Google Benchmark's shared library
# that bench_barracuda_exact links; carry both.
set -euo pipefail
DEST=$1
BUILD_DIR=$2
for b in "$DEST"/bin/barracuda_exact "$DEST"/bin/*barracuda_exact*; do
  [ -e "$b" ] || continue
  ldd "$b" | awk '/libdivsufsort64|libbenchmark/ {print $3}'
done | sort -u | while read -r lib; do cp -L "$lib" "$DEST/lib/"; done
: "$BUILD_DIR"
