#!/usr/bin/env bash
# reg_deform affine demo on the shared 1 mm pair: subject_T1_head (1.6 mm, its own scanner space)
# registered to the ICBM 2009a template with reg_aladin's defaults, on the GPU when one is usable
# (else all CPU cores, ~10 s on 16 cores). Writes the matrix, the floating image resampled into the
# template (cubic) and a PNG check: template/subject checkerboards of the middle axial and coronal
# slices, before (image centres aligned) and after. Skips without ../shared/data (or $EVK_SHARED_DATA).
set -euo pipefail
BUILD_DIR=${1:-build}
OUT=${EVK_DEMO_OUT:-$BUILD_DIR/demo}/reg_deform_affine
SHARED=${EVK_SHARED_DATA:-../shared/data}
REF=$SHARED/brain/icbm152_2009a_t1_1mm.nii.gz
FLO=$SHARED/brain/subject_T1_head.nii.gz
if [ ! -f "$REF" ] || [ ! -f "$FLO" ]; then
  echo "reg_deform affine demo: skipped ($SHARED/brain with the 1 mm pair not found; set EVK_SHARED_DATA)"
  exit 0
fi
mkdir -p "$OUT"
reg_deform affine --ref "$REF" --flo "$FLO" -o "$OUT/affine.txt" --res "$OUT/subject_in_icbm.nii.gz" \
  --png "$OUT/check.png" --verbose
echo "reg_deform affine demo: $OUT/affine.txt (reference world -> floating world, NiftyReg's format),"
echo "  $OUT/subject_in_icbm.nii.gz and $OUT/check.png (checkerboards before | after)"
