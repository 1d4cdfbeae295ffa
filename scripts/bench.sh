#!/usr/bin/env bash
# `make bench`: runs every Google Benchmark program (build/bin/bench_*) and writes JSON results
# to BUILD_DIR/bench-results/. GPU benchmarks skip themselves without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
OUT=${2:-$BUILD_DIR/bench-results}
mkdir -p "$OUT"
shopt -s nullglob
found=0
for b in "$BUILD_DIR"/bin/bench_*; do
  found=1
  name=$(basename "$b")
  echo "=== $name"
  "$b" --benchmark_out="$OUT/$name.json" --benchmark_out_format=json --benchmark_counters_tabular=true
done
[ $found -eq 1 ] || echo "bench: no benchmark programs built yet"
echo "bench: results in $OUT"
