#!/usr/bin/env bash
# GPU bundle hook for stereo: the GPU host has no OpenCV, so the real pairs travel as 8-bit PGM
# (converted here by stereo_to_pgm exactly as `stereo` reads them). Usage: stereo.sh DEST BUILD_DIR
# An OpenCV-free build (EVK_WITH_OPENCV=OFF, `make bundle`) cannot read PNG/JPEG: the converter of the
# ordinary build/ is used then when it exists; pairs that no converter reads are left out (their GPU
# tests skip).
set -euo pipefail
DEST=$1
BUILD_DIR=$2
convs=()
for c in "$BUILD_DIR/bin/stereo_to_pgm" build/bin/stereo_to_pgm; do [ -x "$c" ] && convs+=("$c"); done
if [ ${#convs[@]} -eq 0 ]; then echo "bundle.d/stereo: stereo_to_pgm not built; real-pair GPU tests will skip"; exit 0; fi
n=0
convert() {  # IN OUT: the first converter that reads IN
  for c in "${convs[@]}"; do "$c" "$1" "$2" 2>/dev/null && { n=$((n + 1)); return 0; }; done
  echo "bundle.d/stereo: no converter reads $1 (OpenCV-free build?); its GPU test will skip"
}
# Ground truth and masks too (all 8-bit), so `stereo eval` runs on the GPU host
# (bench/stereo/sgm_vs_libsgm.sh's accuracy table).
for scene in Tsukuba Venus; do
  d="$DEST/data/shared/stereo/$scene"
  [ -f "$d/imL.png" ] || continue
  for s in imL imR groundtruth nonocc; do [ -f "$d/$s.png" ] && convert "$d/$s.png" "$d/$s.pgm"; done
done
d="$DEST/data/project/stereo"
if [ -f "$d/aloeL.jpg" ]; then
  for s in L R; do convert "$d/aloe$s.jpg" "$d/aloe$s.pgm"; done
  [ -f "$d/aloeGT.png" ] && convert "$d/aloeGT.png" "$d/aloeGT.pgm"
fi
echo "bundle.d/stereo: $n images converted to PGM"
