#!/usr/bin/env bash
# Validate several genomes side by side in one call against the same pre-tuned originals:
#   side_by_side.sh TOOL PRETUNED_DIR "CLASSES" OUTDIR GENOME...
# For each class C and genome G: TOOL gi validate G --class C --pretuned C=PRETUNED_DIR/pretuned-C.genome
# --cases ${CASES:-10} --json > OUTDIR/<G's stem>-C.json, and one line per pair on stdout.
# The bundle's env.sh must be sourced (the tool on PATH).
set -u
tool=$1 pre=$(cd "$2" && pwd) classes=$3 out=$4
shift 4
mkdir -p "$out"
for c in $classes; do
  for g in "$@"; do
    n=$(basename "$g" .genome)
    t0=$(date +%s)
    timeout "${CAP_S:-120}" "$tool" gi validate "$g" --class "$c" --pretuned "$c=$pre/pretuned-$c.genome" \
      --cases "${CASES:-10}" --json > "$out/$n-$c.json" 2> "$out/$n-$c.log"
    echo "$c $n rc $? in $(( $(date +%s) - t0 )) s: $(grep -o '"validated": "[^"]*"' "$out/$n-$c.json")"
  done
done
