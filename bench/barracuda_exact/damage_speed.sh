#!/usr/bin/env bash
# `barracuda_exact map` with and without --damage on the same reads, alternating, REPS times each:
# the median whole-command time and reads/s of each and their ratio (issue 39: within 2%); then the
# peer on the BAM map wrote: `barracuda_exact damage -q 0` against mapDamage 2 (-l 25 --no-plot
# --no-stats, when installed), the whole commands, the same tables compared.
# Usage: damage_speed.sh REF.fa READS.fq[.gz] [REPS=3] [map options...]   (REF indexed beforehand)
# KEEP=DIR keeps the last --damage run's tables and plot (DIR/d.*).
set -euo pipefail
ref=${1:?usage: damage_speed.sh REF.fa READS [REPS] [map options]}
reads=${2:?READS}
reps=${3:-3}
shift $(( $# < 3 ? $# : 3 ))
W=$(mktemp -d /tmp/damage_speed.XXXXXX)
trap 'rm -rf "$W"' EXIT
n=$(( $(zcat -f "$reads" | wc -l) / 4 ))
run() {  # label, extra options: prints seconds
  local t0 t1
  t0=$(date +%s.%N)
  barracuda_exact map "$@" "$ref" "$reads" -o "$W/o.bam" > /dev/null 2>&1
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
: > "$W/without"; : > "$W/with"
for _ in $(seq "$reps"); do
  run "$@" >> "$W/without"
  run "$@" --damage "$W/d" >> "$W/with"
done
a=$(median < "$W/without"); b=$(median < "$W/with")
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp "$W"/d.* "$KEEP/"; fi
awk -v a="$a" -v b="$b" -v n="$n" -v r="$reps" 'BEGIN {
  printf "%d reads, median of %d: without --damage %.3f s (%.0f reads/s), with %.3f s (%.0f reads/s), ratio %.3f\n", n, r, a, n / a, b, n / b, b / a }'
command -v mapDamage > /dev/null && command -v samtools > /dev/null || { echo "mapDamage or samtools not installed: no peer"; exit 0; }
cp "$ref" "$W/ref.fa"
samtools faidx "$W/ref.fa"
records=$(samtools view -c -F 0xF04 "$W/o.bam")
t0=$(date +%s.%N); barracuda_exact damage -q 0 "$W/ref.fa" "$W/o.bam" -o "$W/ours" 2> /dev/null; t1=$(date +%s.%N)
mapDamage -i "$W/o.bam" -r "$W/ref.fa" -l 25 --no-plot --no-stats -d "$W/md" > /dev/null 2>&1; t2=$(date +%s.%N)
same=$(cmp -s <(grep -v '^#' "$W/ours.misincorporation.txt") <(grep -v '^#' "$W/md/misincorporation.txt") && echo "same table" || echo "TABLES DIFFER")
awk -v a="$t0" -v b="$t1" -v c="$t2" -v n="$records" -v s="$same" 'BEGIN {
  printf "%d mapped records: damage %.2f s, mapDamage %.2f s, ratio %.1fx, %s\n", n, b - a, c - b, (c - b) / (b - a), s }'
