#!/usr/bin/env bash
# Known-transform recovery of `reg_deform affine` on a brain: for each seed, a random rigid and a
# random affine transform T (issue 12's ranges), the floating image = REF resampled through T^-1
# (cubic, through `grid --affine` + `resample`), then `reg_deform affine` and the mean/max error of
# the recovered mapping over the head voxels (affine_known.py error).
# Usage: affine_known.sh REG_DEFORM REF.nii.gz OUTDIR BACKEND "SEEDS" [extra affine options]
set -euo pipefail
rd=${1:?REG_DEFORM binary}; ref=${2:?REF}; out=${3:?OUTDIR}; backend=${4:-auto}; seeds=${5:-"1 2"}; shift 5 || true
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
for s in $seeds; do
  for kind in rigid affine; do
    w="$out/$kind-$s"
    "${PYTHON:-/usr/bin/python3}" "$here/affine_known.py" make "$s" "$kind" "$w.true.txt" "$w.inv.txt"
    "$rd" grid --ref "$ref" --affine "$w.inv.txt" --spacing 5 -o "$w.grid.nii.gz"
    "$rd" resample --ref "$ref" --flo "$ref" --trans "$w.grid.nii.gz" --interp cubic -o "$w.flo.nii.gz" --backend "$backend"
    t0=$(date +%s.%N)
    "$rd" affine --ref "$ref" --flo "$w.flo.nii.gz" -o "$w.est.txt" --backend "$backend" "$@"
    t1=$(date +%s.%N)
    printf '%s seed %s (%s): %s  [%.1f s]\n' "$kind" "$s" "$backend" \
      "$("${PYTHON:-/usr/bin/python3}" "$here/affine_known.py" error "$ref" "$w.true.txt" "$w.est.txt")" "$(awk "BEGIN{print $t1 - $t0}")" | tee -a "$out/summary.txt"
  done
done
