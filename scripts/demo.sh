#!/usr/bin/env bash
# `make demo`: runs every scripts/demo.d/*.sh in order with the build directory as argument.
# Each tool adds its own demo there (its main job on the data fetched into data/).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
export PATH="$PWD/$BUILD_DIR/bin:$PATH"
export EVK_DEMO_OUT=${EVK_DEMO_OUT:-$PWD/$BUILD_DIR/demo}
mkdir -p "$EVK_DEMO_OUT"
for s in scripts/demo.d/*.sh; do
  echo "=== demo: $(basename "$s" .sh)"
  bash "$s" "$BUILD_DIR"
done
echo "=== demo outputs in $EVK_DEMO_OUT"
