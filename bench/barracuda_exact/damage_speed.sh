#!/usr/bin/env bash
# `barracuda_exact map` with and without --damage on the same reads, alternating, REPS times each:
# the median whole-command time and reads/s of each and their ratio (issue 39: within 2%).
# Usage: damage_speed.sh REF.fa READS.fq[.gz] [REPS=3] [map options...]   (REF indexed beforehand)
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
awk -v a="$a" -v b="$b" -v n="$n" -v r="$reps" 'BEGIN {
  printf "%d reads, median of %d: without --damage %.3f s (%.0f reads/s), with %.3f s (%.0f reads/s), ratio %.3f\n", n, r, a, n / a, b, n / b, b / a }'
