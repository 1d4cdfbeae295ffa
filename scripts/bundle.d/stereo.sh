#!/usr/bin/env bash
# GPU bundle hook for stereo: the GPU host has no OpenCV, so the real pairs travel as 8-bit PGM
# (converted here by stereo_to_pgm exactly as `stereo` reads them). Usage: stereo.sh DEST BUILD_DIR
set -euo pipefail
DEST=$1
BUILD_DIR=$2
conv="$BUILD_DIR/bin/stereo_to_pgm"
if [ ! -x "$conv" ]; then echo "bundle.d/stereo: $conv not built; real-pair GPU tests will skip"; exit 0; fi
n=0
for scene in Tsukuba Venus; do
  d="$DEST/data/shared/stereo/$scene"
  [ -f "$d/imL.png" ] || continue
  for s in L R; do "$conv" "$d/im$s.png" "$d/im$s.pgm"; n=$((n + 1)); done
done
d="$DEST/data/project/stereo"
if [ -f "$d/aloeL.jpg" ]; then
  for s in L R; do "$conv" "$d/aloe$s.jpg" "$d/aloe$s.pgm"; n=$((n + 1)); done
fi
echo "bundle.d/stereo: $n images converted to PGM"
