#!/usr/bin/env bash
# Per-size-class validation of existing genomes (default: the H200 genomes of 2026-11-22, evolved on
# the paper's case only), from a bundle (`make bundle`), for each tool:
#   1. gi tune --class C (the original)       -> OUTDIR/TOOL/pretuned-C.genome: the pre-tuned
#      original of every class (skipped with TUNE=0: then RUNS/TOOL/pretuned.genome, tuned on the
#      paper's case, is the baseline of every class)
#   2. gi validate RUNS/TOOL/evolved.genome --cases N --pretuned C=... -> OUTDIR/TOOL/validate.json
# and OUTDIR/summary.txt: per tool and class the median (min..max) speed-up over the original and
# over the pre-tuned original, max error, cases run / skipped (outside the genome's `requires`).
# OUTDIR/gi-classes.tar.gz is rewritten after every step.
# Usage (repository root on the GPU host): gi_validate_classes.sh BUNDLE OUTDIR [CASES] [DEADLINE_S] [RUNS] ["TOOLS"]
set -uo pipefail
b=$(cd "${1:?usage: gi_validate_classes.sh BUNDLE OUTDIR [CASES] [DEADLINE_S] [RUNS] [TOOLS]}" && pwd)
out=${2:?OUTDIR}
cases=${3:-10}
deadline=$(( $(date +%s) + ${4:-540} ))
runs=$(cd "${5:-bench/gi/runs/h200-2026-11-22}" && pwd)
tools=${6:-stereo reg_deform barracuda_exact}
tune=${TUNE:-1}
mkdir -p "$out"
out=$(cd "$out" && pwd)
W=$(mktemp -d /tmp/gi-classes.XXXXXX)
. "$b/env.sh" "$W/nvrtc-cache"
summary="$out/summary.txt"
pack() { tar czf "$out/gi-classes.tar.gz" -C "$out" --exclude gi-classes.tar.gz . 2>/dev/null; }
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv 2>&1
  echo "host cores: $(nproc); genomes from $runs; $cases hold-out cases per class"
} >> "$summary"

classes_of() { "$1" gi classes | awk '{ print $1 }'; }  # the tool's size classes

ntools=$(wc -w <<< "$tools")
for t in $tools; do
  share=$(( (deadline - $(date +%s)) / ntools ))
  ntools=$(( ntools - 1 ))
  tool_end=$(( $(date +%s) + share ))
  mkdir -p "$out/$t"
  cd "$out/$t"
  pre=()
  if [ "$tune" = 1 ]; then
    for c in $(classes_of "$t"); do
      cap=$(( (tool_end - $(date +%s)) / 3 ))  # tuning gets at most a third of what is left, per class
      (( cap < 20 )) && { echo "$t tune $c: skipped (deadline)" >> "$summary"; continue; }
      t0=$(date +%s)
      timeout "$cap" "$t" gi tune --class "$c" -o "pretuned-$c.genome" --json > "tune-$c.json" 2> "tune-$c.log"
      echo "$t tune $c: exit $? in $(( $(date +%s) - t0 )) s: $(grep -v '^#' "pretuned-$c.genome" 2> /dev/null | tr '\n' ' ')" >> "$summary"
      [ -f "pretuned-$c.genome" ] && pre+=(--pretuned "$c=pretuned-$c.genome")
      pack
    done
  fi
  [ ${#pre[@]} -eq 0 ] && [ -f "$runs/$t/pretuned.genome" ] && pre=(--pretuned "$runs/$t/pretuned.genome")
  left=$(( tool_end - $(date +%s) - 5 ))
  if (( left < 20 )); then echo "$t validate: skipped (deadline)" >> "$summary"; cd "$out"; continue; fi
  t0=$(date +%s)
  timeout "$left" "$t" gi validate "$runs/$t/evolved.genome" "${pre[@]}" --cases "$cases" --json \
    > validate.json 2> validate.log
  echo "$t validate $runs/$t/evolved.genome: exit $? in $(( $(date +%s) - t0 )) s" >> "$summary"
  # one line per class from the JSON (python3 when present, else the raw file stays for reading)
  if command -v python3 > /dev/null && [ -s validate.json ]; then
    python3 - "$t" validate.json >> "$summary" <<'PY'
import json, sys
tool, path = sys.argv[1], sys.argv[2]
j = json.load(open(path))
print(f"{tool}: requires {j.get('requires', [])}")
for c in j["classes"]:
    s, p = c["speedup"], c["speedup_vs_pretuned"]
    print(f"  {c['class']:<11} run {c['run']:>2} skipped {c['skipped']:>2}  vs original {s['median']:.3f}x "
          f"({s['min']:.3f}..{s['max']:.3f})  vs pre-tuned {p['median']:.3f}x ({p['min']:.3f}..{p['max']:.3f})  "
          f"max error {c['max_error']:.3g}  {'ok' if c['blessed'] else 'REFUSED: ' + c['reason']}")
PY
  fi
  cd "$out"
  pack
done
rm -rf "$W"
cat "$summary"
