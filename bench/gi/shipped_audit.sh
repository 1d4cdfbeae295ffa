#!/usr/bin/env bash
# Re-validate the shipped genomes that this GPU's `--kernel auto` picks, one class at a time, against
# originals pre-tuned on this GPU (gi validate checks every launch's output):
#   shipped_audit.sh TOOL PRETUNED_DIR OUTDIR CLASS=GENOME...
# e.g. shipped_audit.sh stereo bench/gi/runs/h200-2026-11-24/stereo /tmp/res/audit \
#        paper=kernels/evolved/stereo/sm90-h100-paper.genome middlebury=...
# The bundle's env.sh must be sourced. One line per pair on stdout (bench/gi/side_by_side.sh).
set -u
tool=$1 pre=$2 out=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
for cg in "$@"; do
  bash "$here/side_by_side.sh" "$tool" "$pre" "${cg%%=*}" "$out" "${cg#*=}"
done
