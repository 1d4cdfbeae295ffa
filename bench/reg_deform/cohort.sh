#!/usr/bin/env bash
# Cohort throughput of `reg_deform register-many` (subjects/hour, the whole command: reading,
# affine, non-rigid, writing cpp/res/done.json): N subjects to the 1 mm ICBM template, alternately
# the shared T1 head and a T2-like remap of it (T2LIKE, made by fold_free.sh's recipe), once per
# setting of JOBS (subjects at once per device) on DEVICES. Prints one line per setting and keeps
# each run's summary.tsv.
# Usage: bench/reg_deform/cohort.sh BIN_DIR OUTDIR [N=200] [JOBS="1 2 3"] [DEVICES=0]
# (shared brains from EVK_SHARED_DATA or ../shared/data; T2LIKE: path of the T2-like image, else T1 only)
set -uo pipefail
bin=$(cd "${1:?usage: cohort.sh BIN_DIR OUTDIR [N] [JOBS] [DEVICES]}" && pwd)
out=${2:?OUTDIR}
n=${3:-200}
jobs_list=${4:-1 2 3}
devices=${5:-0}
mkdir -p "$out"
out=$(cd "$out" && pwd)
data=${EVK_SHARED_DATA:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/data}
R=$data/brain/icbm152_2009a_t1_1mm.nii.gz
W=$(mktemp -d /tmp/cohort.XXXXXX)
trap 'rm -rf "$W"' EXIT
ln -s "$data/brain/subject_T1_head.nii.gz" "$W/t1.nii.gz"
[ -n "${T2LIKE:-}" ] && ln -s "$T2LIKE" "$W/t2.nii.gz"
for i in $(seq 1 "$n"); do
  img=t1.nii.gz
  [ -n "${T2LIKE:-}" ] && [ $((i % 2)) = 0 ] && img=t2.nii.gz
  printf 'sub-%04d\t%s\n' "$i" "$img"
done > "$W/list.tsv"
S=$out/summary.txt
echo "host cores: $(nproc); $n subjects; devices $devices" >> "$S"
for j in $jobs_list; do
  rm -rf "$W/out"; mkdir -p "$W/out"
  t=$(date +%s.%N)
  "$bin/reg_deform" register-many "$R" "$W/list.tsv" -o "$W/out" --backend gpu --devices "$devices" --jobs "$j" \
    > "$out/jobs$j.out" 2> "$out/jobs$j.err"
  rc=$?
  s=$(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  cp "$W/out/summary.tsv" "$out/summary-jobs$j.tsv" 2> /dev/null
  folded=$(awk -F'\t' 'NR > 1 && $5 > 0' "$W/out/summary.tsv" 2> /dev/null | wc -l)
  ok=$(awk -F'\t' 'NR > 1 && $2 == "ok"' "$W/out/summary.tsv" 2> /dev/null | wc -l)
  awk -v j="$j" -v s="$s" -v n="$n" -v ok="$ok" -v f="$folded" -v rc="$rc" 'BEGIN {
    printf "jobs %s: exit %s, %d of %d ok, %.1f s, %.0f subjects/hour, %d with folded voxels\n", j, rc, ok, n, s, 3600 * n / s, f }' | tee -a "$S"
done
