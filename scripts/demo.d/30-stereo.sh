#!/usr/bin/env bash
# stereo demo: the aloe pair (opencv-doc, fetched into data/stereo) -> disparity map -> evaluation
# against aloeGT.png (scale 1). aloe's disparities exceed 50 px at this size, so 0..191 is used.
set -euo pipefail
out=${EVK_DEMO_OUT:-build/demo}
mkdir -p "$out"
d=data/stereo
if [ ! -f "$d/aloeL.jpg" ]; then echo "stereo demo: $d/aloeL.jpg missing (run scripts/fetch-data.sh)"; exit 0; fi
stereo disparity "$d/aloeL.jpg" "$d/aloeR.jpg" -o "$out/aloe.pfm" --color "$out/aloe_color.png" \
  --max-disparity 191 --verbose
stereo eval "$out/aloe.pfm" "$d/aloeGT.png" --gt-scale 1
