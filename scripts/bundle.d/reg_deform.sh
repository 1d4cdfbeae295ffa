#!/usr/bin/env bash
# GPU bundle hook for reg_deform: the affine kernels' fatbin travels as a file too, so the GPU host
# (which has cuobjdump) can check its SASS for FMAs (bench/reg_deform/affine_sass.sh).
# Usage: reg_deform.sh DEST BUILD_DIR
set -euo pipefail
DEST=$1
BUILD_DIR=$2
f="$BUILD_DIR/evk_kernels/reg_deform_affine.fatbin"
[ -f "$f" ] || { echo "bundle.d/reg_deform: $f not built (no CUDA?)"; exit 0; }
mkdir -p "$DEST/kernels/fatbin"
cp "$f" "$DEST/kernels/fatbin/"
