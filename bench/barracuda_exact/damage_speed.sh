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
run() {  # JSON-FILE, map options: prints seconds (the whole command; its --json kept in JSON-FILE)
  local t0 t1 j=$1
  shift
  t0=$(date +%s.%N)
  barracuda_exact map --json "$@" "$ref" "$reads" -o "$W/o.bam" > "$j" 2> /dev/null
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
stage() {  # STAGE JSON-FILES...: that stage's seconds in each run, one line
  python3 -c 'import json, sys; print(" ".join("%.2f" % json.load(open(f))["seconds"][sys.argv[1]] for f in sys.argv[2:]))' "$@"
}
: > "$W/without"; : > "$W/with"
for i in $(seq "$reps"); do
  run "$W/without.$i.json" "$@" >> "$W/without"
  run "$W/with.$i.json" "$@" --damage "$W/d" >> "$W/with"
done
a=$(median < "$W/without"); b=$(median < "$W/with")
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp "$W"/d.* "$KEEP/"; fi
awk -v a="$a" -v b="$b" -v n="$n" -v r="$reps" 'BEGIN {
  printf "%d reads, median of %d: without --damage %.3f s (%.0f reads/s), with %.3f s (%.0f reads/s), ratio %.3f\n", n, r, a, n / a, b, n / b, b / a }'
echo "  runs without: $(tr '\n' ' ' < "$W/without")| with: $(tr '\n' ' ' < "$W/with")"
echo "  format stage s without: $(stage format "$W"/without.*.json) | with: $(stage format "$W"/with.*.json)"
echo "  search stage s without: $(stage search "$W"/without.*.json) | with: $(stage search "$W"/with.*.json)"
command -v mapDamage > /dev/null && command -v samtools > /dev/null || { echo "mapDamage or samtools not installed: no peer"; exit 0; }
cp "$ref" "$W/ref.fa"
samtools faidx "$W/ref.fa"
records=$(samtools view -c -F 0xF04 "$W/o.bam")
t0=$(date +%s.%N); barracuda_exact damage -q 0 "$W/ref.fa" "$W/o.bam" -o "$W/ours" 2> /dev/null; t1=$(date +%s.%N)
mapDamage -i "$W/o.bam" -r "$W/ref.fa" -l 25 --no-plot --no-stats -d "$W/md" > /dev/null 2>&1; t2=$(date +%s.%N)
same=$(cmp -s <(grep -v '^#' "$W/ours.misincorporation.txt") <(grep -v '^#' "$W/md/misincorporation.txt") && echo "same table" || echo "TABLES DIFFER")
awk -v a="$t0" -v b="$t1" -v c="$t2" -v n="$records" -v s="$same" 'BEGIN {
  printf "%d mapped records: damage %.2f s, mapDamage %.2f s, ratio %.1fx, %s\n", n, b - a, c - b, (c - b) / (b - a), s }'
