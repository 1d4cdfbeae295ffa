#!/usr/bin/env bash
# Known-transform recovery of `reg_deform affine` on a brain: for each seed, a random rigid and a
# random affine transform T (issue 12's ranges), the floating image = REF resampled through T^-1
# (cubic, through `grid --affine` + `resample`), then `reg_deform affine` with each configuration
# (and reg_aladin when given) and the mean/max error of the recovered mapping over the head voxels
# (affine_known.py error). Images go to a temporary folder; OUTDIR gets the matrices and summary.txt.
# Usage: affine_known.sh REG_DEFORM REF.nii.gz OUTDIR BACKEND "SEEDS" ["TAG:OPTIONS" ...]
#   configurations default to "default:" (reg_aladin's defaults); e.g. "subvoxel:--subvoxel".
#   $REG_ALADIN (with its libraries on LD_LIBRARY_PATH): also run it, -platf $ALADIN_PLATF (default 0).
set -euo pipefail
rd=${1:?REG_DEFORM binary}; ref=${2:?REF}; out=${3:?OUTDIR}; backend=${4:-auto}; seeds=${5:-"1 2"}; shift 5 || true
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=("default:")
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-/usr/bin/python3}
mkdir -p "$out"
work=$(mktemp -d /tmp/affine_known.XXXXXX)
trap 'rm -rf "$work"' EXIT
for s in $seeds; do
  for kind in rigid affine; do
    w="$work/$kind-$s"
    o="$out/$kind-$s"
    "$py" "$here/affine_known.py" make "$s" "$kind" "$o.true.txt" "$w.inv.txt"
    "$rd" grid --ref "$ref" --affine "$w.inv.txt" --spacing 5 -o "$w.grid.nii.gz"
    "$rd" resample --ref "$ref" --flo "$ref" --trans "$w.grid.nii.gz" --interp cubic -o "$w.flo.nii.gz" --backend "$backend"
    for cfg in "${configs[@]}"; do
      tag=${cfg%%:*}
      read -r -a opts <<< "${cfg#*:}"
      t0=$(date +%s.%N)
      "$rd" affine --ref "$ref" --flo "$w.flo.nii.gz" -o "$o.$tag.txt" --backend "$backend" "${opts[@]}"
      t1=$(date +%s.%N)
      printf '%-6s seed %s %-9s (%s): %s  [%.1f s]\n' "$kind" "$s" "$tag" "$backend" \
        "$("$py" "$here/affine_known.py" error "$ref" "$o.true.txt" "$o.$tag.txt")" "$(awk "BEGIN{print $t1 - $t0}")" |
        tee -a "$out/summary.txt"
    done
    if [ -n "${REG_ALADIN:-}" ]; then
      t0=$(date +%s.%N)
      "$REG_ALADIN" -ref "$ref" -flo "$w.flo.nii.gz" -aff "$o.aladin.txt" -platf "${ALADIN_PLATF:-0}" > "$w.aladin.log" 2>&1 ||
        { echo "reg_aladin failed on $kind-$s: $(tail -2 "$w.aladin.log")" | tee -a "$out/summary.txt"; continue; }
      t1=$(date +%s.%N)
      printf '%-6s seed %s %-9s (platf %s): %s  [%.1f s]\n' "$kind" "$s" reg_aladin "${ALADIN_PLATF:-0}" \
        "$("$py" "$here/affine_known.py" error "$ref" "$o.true.txt" "$o.aladin.txt")" "$(awk "BEGIN{print $t1 - $t0}")" |
        tee -a "$out/summary.txt"
    fi
  done
done
