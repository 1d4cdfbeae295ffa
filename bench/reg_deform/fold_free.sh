#!/usr/bin/env bash
# Folding and NMI of `reg_deform register` against reg_f3d on two 1 mm pairs: subject_T1_head ->
# ICBM 2009a, and the same subject with its tissue intensities inverted (T2-like, multimodal; made
# here with nibabel). Per pair: our affine, then register with the defaults (Jacobian log 0.01 and the
# final grid unfolded), with `--allow-folding --jl 0` (reg_f3d's objective) and with
# `--allow-folding` (jl 0.01 alone); reg_aladin + reg_f3d with their defaults when NiftyReg's tarball
# is given. Folded voxels of every grid by `reg_deform jacobian`, NMI by reg_measure.
# Usage: bench/reg_deform/fold_free.sh BIN_DIR OUTDIR [niftyreg-bin.tar.gz] [BACKEND=cpu|gpu]
# (BIN_DIR: a build's bin/ or a bundle's; the shared brains from EVK_SHARED_DATA or ../shared/data;
# PAIRS: default "t1 t2like"; PYTHON: a python3 with nibabel, default /usr/bin/python3; T2LIKE: the
# T2-like image made before, where the host has no nibabel).
set -uo pipefail
bin=$(cd "${1:?usage: fold_free.sh BIN_DIR OUTDIR [niftyreg-bin.tar.gz] [BACKEND]}" && pwd)
out=${2:?OUTDIR}
nr_tgz=${3:-}
be=${4:-cpu}
mkdir -p "$out"
out=$(cd "$out" && pwd)
data=${EVK_SHARED_DATA:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/data}
R=$data/brain/icbm152_2009a_t1_1mm.nii.gz
T1=$data/brain/subject_T1_head.nii.gz
W=$(mktemp -d /tmp/foldfree.XXXXXX)
trap 'rm -rf "$W"' EXIT
S=$out/summary.txt
echo "host cores: $(nproc); backend $be" > "$S"
py=${PYTHON:-/usr/bin/python3}
if [ -n "${T2LIKE:-}" ]; then cp "$T2LIKE" "$W/t2like.nii.gz"; else "$py" - "$T1" "$W/t2like.nii.gz" <<'PY'
import sys, nibabel as nib, numpy as np
im = nib.load(sys.argv[1]); d = im.get_fdata().astype(np.float32)
hi = np.percentile(d[d > 0], 99)
t = np.where(d > 0.1 * hi, np.clip(1.15 * hi - d, 0, None), d * 0.5)  # tissue inverted, background dark
nib.save(nib.Nifti1Image(t.astype(np.float32), im.affine, im.header), sys.argv[2])
PY
fi
if [ -n "$nr_tgz" ] && [ -f "$nr_tgz" ]; then
  nr=$W/nr; mkdir -p "$nr"; tar xzf "$nr_tgz" -C "$nr"; export LD_LIBRARY_PATH="$nr/bin/lib:${LD_LIBRARY_PATH:-}"
fi
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
folds() { "$bin/reg_deform" jacobian --ref "$R" --cpp "$1" --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["folded_voxels"], "folded, min det %.4f" % j["min_jacobian"])'; }
nmi() { [ -n "${nr:-}" ] && "$nr/bin/reg_measure" -ref "$R" -flo "$1" -nmi 2>&1 | grep NMI; }
for name in ${PAIRS:-t1 t2like}; do
  F=$T1
  [ "$name" = t2like ] && F=$W/t2like.nii.gz
  "$bin/reg_deform" affine --ref "$R" --flo "$F" -o "$out/$name-aff.txt" --backend "$be" > /dev/null 2>&1
  for run in "defaults:" "allow-jl0:--allow-folding --jl 0" "allow:--allow-folding"; do
    tag=${run%%:*}; t=$(now)
    # shellcheck disable=SC2086
    "$bin/reg_deform" register --ref "$R" --flo "$F" --aff "$out/$name-aff.txt" --cpp "$W/$name-$tag.nii.gz" \
      --res "$W/$name-$tag-res.nii.gz" --backend "$be" --json ${run#*:} > "$out/$name-$tag.json" 2> "$out/$name-$tag.log"
    echo "$name ours $tag: exit $?, $(secs "$t") s; $(folds "$W/$name-$tag.nii.gz"); $(nmi "$W/$name-$tag-res.nii.gz")" >> "$S"
  done
  if [ -n "${nr:-}" ]; then
    plat=0; [ "$be" = gpu ] && plat=1
    "$nr/bin/reg_aladin" -ref "$R" -flo "$F" -aff "$W/$name-nraff.txt" -platf $plat -omp "$(nproc)" > /dev/null 2>&1
    t=$(now)
    "$nr/bin/reg_f3d" -ref "$R" -flo "$F" -aff "$W/$name-nraff.txt" -cpp "$W/$name-f3d.nii.gz" -res "$W/$name-f3d-res.nii.gz" \
      -platf $plat -omp "$(nproc)" > "$out/$name-f3d.log" 2>&1
    echo "$name reg_f3d: exit $?, $(secs "$t") s; $(folds "$W/$name-f3d.nii.gz"); $(nmi "$W/$name-f3d-res.nii.gz")" >> "$S"
  fi
done
cat "$S"
