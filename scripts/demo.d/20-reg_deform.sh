#!/usr/bin/env bash
# reg_deform demo on the small nibabel brain (data/brain/anatomical.nii): a control-point grid with a
# smooth random deformation, its deformation field, the resampled image, and a PNG of the middle
# slice before/after with the grid drawn over it (the right panel shows the left grid's lines
# carried through the transformation).
set -euo pipefail
BUILD_DIR=${1:-build}
OUT=${EVK_DEMO_OUT:-$BUILD_DIR/demo}/reg_deform
IMG=data/brain/anatomical.nii
if [ ! -f "$IMG" ]; then echo "reg_deform demo: $IMG missing (run scripts/fetch-data.sh)"; exit 0; fi
mkdir -p "$OUT"
reg_deform grid --ref "$IMG" -o "$OUT/cpp.nii.gz" --spacing 4 --perturb 4 --seed 7
reg_deform field --ref "$IMG" --cpp "$OUT/cpp.nii.gz" -o "$OUT/def.nii.gz" --verbose
reg_deform resample --ref "$IMG" --flo "$IMG" --trans "$OUT/def.nii.gz" -o "$OUT/warped.nii.gz" --interp cubic --verbose
reg_deform snapshot --ref "$IMG" --flo "$IMG" --trans "$OUT/def.nii.gz" -o "$OUT/slice.png" --spacing 4
echo "reg_deform demo: $OUT/{cpp,def,warped}.nii.gz and $OUT/slice.png"
