#!/usr/bin/env bash
# `make demo`'s registration step (scripts/demo.d/21-reg_deform_affine.sh) end to end on a small
# stand-in for the shared pair (seconds, CPU or GPU as --backend auto picks): a 40^3 textured volume
# as the template and the same volume moved by a known rotation and shift as the subject. Checks that
# both commands ran, every output is written, and the printed NMI rises with each step.
# Usage: demo_registration_test.sh BIN_DIR SOURCE_DIR
set -euo pipefail
bin=${1:?BIN_DIR}; src=${2:?SOURCE_DIR}
export PATH="$bin:$PATH"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/shared/brain"
reg_deform random-case --seed 3 --size 40 -o "$tmp/case" > /dev/null
# floating world -> reference world of a 6-degree rotation about z and a (2, -1.5, 1) mm shift
cat > "$tmp/inv.txt" <<'M'
0.9945218953682733 -0.10452846326765347 0 2
0.10452846326765347 0.9945218953682733 0 -1.5
0 0 1 1
0 0 0 1
M
reg_deform grid --ref "$tmp/case/image.nii.gz" --affine "$tmp/inv.txt" --spacing 5 -o "$tmp/grid.nii.gz"
reg_deform resample --ref "$tmp/case/image.nii.gz" --flo "$tmp/case/image.nii.gz" --trans "$tmp/grid.nii.gz" \
  --interp cubic --pad 0 -o "$tmp/shared/brain/subject_T1_head.nii.gz" --backend cpu
cp "$tmp/case/image.nii.gz" "$tmp/shared/brain/icbm152_2009a_t1_1mm.nii.gz"
cp "$tmp/case/image.nii.gz" "$tmp/shared/brain/mni152_t1_2mm.nii.gz"  # the template the CPU path uses
EVK_SHARED_DATA="$tmp/shared" EVK_DEMO_OUT="$tmp/out" bash "$src/scripts/demo.d/21-reg_deform_affine.sh" \
  > "$tmp/log" 2> "$tmp/err" || { echo "FAIL: the demo exited with $?"; tail -20 "$tmp/err"; exit 1; }
cat "$tmp/log"
out=$tmp/out/reg_deform_registration
for f in affine.txt affine_res.nii.gz affine_check.png cpp.nii.gz registered.nii.gz affine.json register.json; do
  [ -s "$out/$f" ] || { echo "FAIL: $out/$f missing"; exit 1; }
done
nmi() { grep -F "$1" "$tmp/log" | awk '{print $NF}'; }
n0=$(nmi "image centres aligned"); n1=$(nmi "after affine"); n2=$(nmi "after non-rigid")
echo "NMI: $n0 -> $n1 -> $n2"
awk -v a="$n0" -v b="$n1" -v c="$n2" 'BEGIN { exit !(a > 1 && b > a + 0.02 && c > b - 0.005) }' ||
  { echo "FAIL: NMI does not rise ($n0 -> $n1 -> $n2)"; exit 1; }
grep -q "reg_deform registration demo:" "$tmp/log" || { echo "FAIL: no closing line"; exit 1; }
echo PASS
