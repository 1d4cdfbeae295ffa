#!/usr/bin/env bash
# reg_deform registration demo on the shared brains: subject_T1_head (1.6 mm, its own scanner
# space) registered to a template in the two steps NiftyReg users take, with no other
# tool: global (`reg_deform affine`, reg_aladin's method and defaults), then non-rigid from that
# affine (`reg_deform register --aff`, reg_f3d's method and defaults). Prints the NMI (NiftyReg
# reg_measure's) against the template before, after the affine and after the non-rigid step.
#
# On a GPU (--backend auto picks it) the 1 mm template is used (a few seconds). Without one the CPU
# registers the subject to the 2 mm MNI152 template instead (8x fewer voxels: about a minute on
# 8 cores instead of tens of minutes), with the same commands and defaults, and says so. Set
# EVK_DEMO_FULL=1 for the 1 mm template on the CPU too.
# Outputs ($EVK_DEMO_OUT/reg_deform_registration): affine.txt (reference world -> floating world,
# NiftyReg's format), affine_res.nii.gz and affine_check.png (checkerboards before | after), cpp.nii.gz
# (the control-point grid, NiftyReg's layout), registered.nii.gz, and each command's --json report.
# Skips without ../shared/data (or $EVK_SHARED_DATA).
set -euo pipefail
BUILD_DIR=${1:-build}
OUT=${EVK_DEMO_OUT:-$BUILD_DIR/demo}/reg_deform_registration
SHARED=${EVK_SHARED_DATA:-../shared/data}
REF=$SHARED/brain/icbm152_2009a_t1_1mm.nii.gz
REF2=$SHARED/brain/mni152_t1_2mm.nii.gz
FLO=$SHARED/brain/subject_T1_head.nii.gz
if [ ! -f "$REF" ] || [ ! -f "$REF2" ] || [ ! -f "$FLO" ]; then
  echo "reg_deform registration demo: skipped ($SHARED/brain with the shared brains not found; set EVK_SHARED_DATA)"
  exit 0
fi
mkdir -p "$OUT"
# A JSON number by key from a --json report (the first occurrence).
json_number() { grep -m1 "\"$1\":" "$2" | sed 's/.*": *\([-0-9.eE+]*\).*/\1/'; }

backend=$(reg_deform devices --json | grep -m1 '"backend"' | sed 's/.*": *"\([a-z]*\)".*/\1/')
if [ "$backend" = gpu ]; then
  echo "GPU found: subject_T1_head -> ICBM 2009a 1 mm template (reg_aladin's and reg_f3d's defaults)"
elif [ "${EVK_DEMO_FULL:-0}" = 1 ]; then
  echo "no usable GPU: subject_T1_head -> ICBM 2009a 1 mm template on the CPU (EVK_DEMO_FULL=1; this takes a while)"
else
  REF=$REF2
  echo "no usable GPU: the CPU registers subject_T1_head to the 2 mm MNI152 template instead of the 1 mm"
  echo "  ICBM one (8x fewer voxels; same commands and defaults). EVK_DEMO_FULL=1 uses the 1 mm template."
fi

t0=$(date +%s)
echo "--- reg_deform affine (global: rigid then affine, block matching)"
reg_deform affine --ref "$REF" --flo "$FLO" -o "$OUT/affine.txt" --res "$OUT/affine_res.nii.gz" \
  --png "$OUT/affine_check.png" --backend auto --json -v > "$OUT/affine.json"
t1=$(date +%s)
echo "--- reg_deform register --aff (non-rigid: cubic B-spline grid, NMI)"
reg_deform register --ref "$REF" --flo "$FLO" --aff "$OUT/affine.txt" --cpp "$OUT/cpp.nii.gz" \
  --res "$OUT/registered.nii.gz" --backend auto --json -v > "$OUT/register.json"
t2=$(date +%s)

nmi0=$(json_number nmi_initial "$OUT/affine.json")
nmi1=$(json_number nmi "$OUT/affine.json")
nmi2=$(json_number nmi_reg_measure "$OUT/register.json")
echo "NMI against the template (NiftyReg reg_measure's, 64 bins):"
printf '  %-30s %.4f\n' "image centres aligned" "$nmi0" "after affine ($((t1 - t0)) s)" "$nmi1" \
  "after non-rigid ($((t2 - t1)) s)" "$nmi2"
echo "reg_deform registration demo: $OUT/{affine.txt,affine_res.nii.gz,affine_check.png,cpp.nii.gz,registered.nii.gz}"
