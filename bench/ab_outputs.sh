#!/usr/bin/env bash
# Two builds of the three tools side by side on one GPU host, same inputs, one run: A (before a
# change) and B (after). For each job both builds' outputs are compared (stereo maps byte for byte,
# SAM records byte for byte without the @PG line, reg_deform affine matrices and B-spline grids as
# the deformation fields they give: max |A - B| in mm, by B's `reg_deform field`) and the whole
# command is timed (median of ROUNDS runs, A and B alternating so drift hits both alike).
# Usage: ab_outputs.sh BUNDLE_A BUNDLE_B OUTDIR [ROUNDS]
#   BUNDLE_A needs only bin/{stereo,reg_deform,barracuda_exact}; BUNDLE_B is a full `make bundle`
#   (its data, env.sh and bc_simreads are used for both).
# OUTDIR/ab-outputs.txt: one line per job: identical / max diff, median s of A and B, B/A.
set -uo pipefail
a=$(cd "${1:?usage: ab_outputs.sh BUNDLE_A BUNDLE_B OUTDIR [ROUNDS]}" && pwd)
b=$(cd "${2:?BUNDLE_B}" && pwd)
out=${3:?OUTDIR}
rounds=${4:-3}
mkdir -p "$out"
out=$(cd "$out" && pwd)
W=$(mktemp -d /tmp/ab-outputs.XXXXXX)
trap 'rm -rf "$W"' EXIT
. "$b/env.sh" "$W/nvrtc-cache" > /dev/null
S="$out/ab-outputs.txt"
{ echo "A $(cat "$a/COMMIT" 2>/dev/null)"; echo "B $(cat "$b/COMMIT" 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1; } > "$S"

# job NAME CMD-TEMPLATE: @T is replaced by the tool directory, @O by the output prefix of the build.
# Runs A and B ROUNDS times each (alternating), keeps the last outputs as $W/A.* and $W/B.*.
job() {
  local name=$1 tmpl=$2 who r t0 t1
  for r in $(seq 1 "$rounds"); do
    for who in A B; do
      local dir=$a
      [ "$who" = B ] && dir=$b
      local cmd=${tmpl//@T/$dir\/bin}
      cmd=${cmd//@O/$W\/$name.$who}
      t0=$(date +%s.%N)
      if ! bash -c "$cmd" > "$W/$name.$who.stdout" 2> "$W/$name.$who.stderr"; then
        echo "$name $who round $r: failed: $(tail -1 "$W/$name.$who.stderr")" >> "$S"
      fi
      t1=$(date +%s.%N)
      echo "$name $who $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" >> "$W/times"
    done
  done
}
med() { grep "^$1 $2 " "$W/times" | awk '{print $3}' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
report() {  # NAME VERDICT
  local ta tb
  ta=$(med "$1" A)
  tb=$(med "$1" B)
  printf '%-28s %-34s A %8.3f s  B %8.3f s  B/A %.3f\n' "$1" "$2" "$ta" "$tb" \
    "$(awk -v a="$ta" -v b="$tb" 'BEGIN { print (a > 0 ? b / a : 0) }')" >> "$S"
}
same() {  # NAME FILE-SUFFIX: byte comparison of A's and B's outputs
  if cmp -s "$W/$1.A$2" "$W/$1.B$2"; then echo identical; else echo "DIFFER ($2)"; fi
}

# stereo: the real pairs (PGM in the bundle) and a large synthetic pair, SSD and SGM.
for scene in Tsukuba Venus; do
  d="$EVK_SHARED_DATA/stereo/$scene"
  [ -f "$d/imL.pgm" ] || continue
  job "stereo-ssd-$scene" "@T/stereo disparity $d/imL.pgm $d/imR.pgm -o @O.pfm --max-disparity 63"
  report "stereo-ssd-$scene" "$(same "stereo-ssd-$scene" .pfm)"
  job "stereo-sgm-$scene" "@T/stereo disparity $d/imL.pgm $d/imR.pgm -o @O.pfm --method sgm --max-disparity 63 --subpixel parabola --lr-check 1 --median 3"
  report "stereo-sgm-$scene" "$(same "stereo-sgm-$scene" .pfm)"
done
d="$EVK_DATA_DIR/stereo"
if [ -f "$d/aloeL.pgm" ]; then
  job stereo-sgm-aloe-256 "@T/stereo disparity $d/aloeL.pgm $d/aloeR.pgm -o @O.pfm --method sgm --max-disparity 255 --paths 8"
  report stereo-sgm-aloe-256 "$(same stereo-sgm-aloe-256 .pfm)"
  job stereo-sgm4-aloe-128 "@T/stereo disparity $d/aloeL.pgm $d/aloeR.pgm -o @O.pfm --method sgm --max-disparity 127 --paths 4"
  report stereo-sgm4-aloe-128 "$(same stereo-sgm4-aloe-128 .pfm)"
fi

# reg_deform: affine then register, subject -> MNI 2 mm and ICBM 1 mm.
F="$EVK_SHARED_DATA/brain/subject_T1_head.nii.gz"
field_diff() {  # NAME REF: both grids as fields by B's tool, max |A - B| over every voxel and axis
  local n=$1 ref=$2
  "$b/bin/reg_deform" field --ref "$ref" --cpp "$W/$n.A.cpp.nii.gz" -o "$W/$n.A.def.nii" > /dev/null 2>&1
  "$b/bin/reg_deform" field --ref "$ref" --cpp "$W/$n.B.cpp.nii.gz" -o "$W/$n.B.def.nii" > /dev/null 2>&1
  python3 - "$W/$n.A.def.nii" "$W/$n.B.def.nii" <<'PY' 2>&1
import sys, struct, numpy as np
def load(p):
    h = open(p, "rb").read()
    off = int(struct.unpack("<f", h[108:112])[0])
    dt = struct.unpack("<h", h[70:72])[0]
    return np.frombuffer(h[off:], dtype={16: "<f4", 64: "<f8"}[dt]).astype(np.float64)
a, b = load(sys.argv[1]), load(sys.argv[2])
print("max |A-B| %.2e mm" % (np.abs(a - b).max() if a.shape == b.shape else float("inf")))
PY
}
for pair in 2mm:mni152_t1_2mm 1mm:icbm152_2009a_t1_1mm; do
  tag=${pair%%:*}
  R="$EVK_SHARED_DATA/brain/${pair#*:}.nii.gz"
  [ -f "$R" ] && [ -f "$F" ] || continue
  job "reg-affine-$tag" "@T/reg_deform affine --ref $R --flo $F -o @O.aff.txt --res @O.res.nii.gz"
  report "reg-affine-$tag" "$(same "reg-affine-$tag" .aff.txt)"
  cp "$W/reg-affine-$tag.B.aff.txt" "$W/aff-$tag.txt"
  job "reg-register-$tag" "@T/reg_deform register --ref $R --flo $F --aff $W/aff-$tag.txt --cpp @O.cpp.nii.gz --res @O.res.nii.gz"
  v=$(same "reg-register-$tag" .cpp.nii.gz)
  [ "$v" = identical ] || v="$(field_diff "reg-register-$tag" "$R")"
  report "reg-register-$tag" "$v"
done

# barracuda_exact: E. coli, 200 k simulated 100 bp reads, inexact (aln + samse) and exact, SAM.
G="$EVK_DATA_DIR/genomes/NC_008253.fna.gz"
if [ -f "$G" ]; then
  gzip -dc "$G" > "$W/ecoli.fa"
  "$b/bin/barracuda_exact" index "$W/ecoli.fa" > /dev/null 2>&1
  bc_simreads "$W/ecoli.fa" 200000 "$W/reads.fq.gz" 100 1 "$(nproc)" > /dev/null 2>&1
  sam_same() {  # NAME: records equal without @PG (it names the build's command line)
    if cmp -s <(grep -v '^@PG' "$W/$1.A.sam") <(grep -v '^@PG' "$W/$1.B.sam"); then echo identical
    else echo DIFFER; fi
  }
  job bc-map-inexact "@T/barracuda_exact map $W/ecoli.fa $W/reads.fq.gz -o @O.sam"
  report bc-map-inexact "$(sam_same bc-map-inexact)"
  job bc-map-exact "@T/barracuda_exact map --exact $W/ecoli.fa $W/reads.fq.gz -o @O.sam"
  report bc-map-exact "$(sam_same bc-map-exact)"
  job bc-map-adna "@T/barracuda_exact map --seed-len 1024 --max-diff 0.01 --max-gap-open 2 $W/ecoli.fa $W/reads.fq.gz -o @O.sam"
  report bc-map-adna "$(sam_same bc-map-adna)"
fi
cat "$S"
