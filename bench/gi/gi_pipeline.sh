#!/usr/bin/env bash
# The GI pipeline of the issue's "done when", for one or more tools on one GPU, from an OpenCV-free
# bundle (`make bundle`): per tool
#   gi run (POP x GENERATIONS, seed 1) -> gi minimize -> gi tune (original: the pre-tuned baseline)
#   -> gi validate (hold-out cases, vs original and pre-tuned) -> gi tune (evolved) -> gi validate
# Each step has a cap, the whole script a deadline, and OUTDIR/gi-TOOL.tar.gz is rewritten after
# every step, so a cut run still returns what was done. A summary goes to OUTDIR/summary.txt and the
# genomes to OUTDIR/TOOL/. Run it from the repository root (the device tool's working copy).
# CLASS: one size class for every step (`gi classes` lists them); without it the search cycles
# through the classes, minimize/tune measure on every class and validate reports every class (the
# steps' caps are then 4x longer).
# Usage: gi_pipeline.sh BUNDLE OUTDIR "TOOL..." [POP] [GENERATIONS] [DEADLINE_S] [CASES] [CLASS]
# A TOOL may name another GI subcommand of the tool as TOOL:COMMAND (barracuda_exact:gi-inexact, the
# inexact-search kernel); its results go to OUTDIR/TOOL-COMMAND.
set -uo pipefail
b=$(cd "${1:?usage: gi_pipeline.sh BUNDLE OUTDIR TOOLS [POP] [GENERATIONS] [DEADLINE_S] [CASES]}" && pwd)
out=${2:?OUTDIR}
tools=${3:?TOOLS}
pop=${4:-60}
gens=${5:-10}
deadline=$(( $(date +%s) + ${6:-540} ))
cases=${7:-10}
cls=${8:-}
copt=()
f=4  # cap factor: every class is measured
if [ -n "$cls" ]; then copt=(--class "$cls"); f=1; fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
summary="$out/summary.txt"
W=$(mktemp -d /tmp/gi-pipe.XXXXXX)
. "$b/env.sh" "$W/nvrtc-cache"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv \
  >> "$summary" 2>&1 || true
echo "host cores: $(nproc)" >> "$summary"

ntools=$(wc -w <<< "$tools")
for spec in $tools; do
  tool=${spec%%:*}
  gi=gi
  [[ "$spec" == *:* ]] && gi=${spec#*:}
  t=$tool
  [ "$gi" != gi ] && t="$tool-$gi"
  work="$W/$t"
  mkdir -p "$work"
  # this tool's share of what is left
  share=$(( (deadline - $(date +%s)) / ntools ))
  ntools=$(( ntools - 1 ))
  tool_end=$(( $(date +%s) + share ))
  pack() { tar czf "$out/gi-$t.tar.gz" -C "$W" "$t" --exclude nvrtc-cache 2>/dev/null; }
  # step NAME CAP_S CMD...: stdout/stderr in $work/NAME.{out,log}, capped by the tool's end
  step() {
    local name=$1 cap=$2
    shift 2
    local left=$(( tool_end - $(date +%s) - 5 ))
    (( left < cap )) && cap=$left
    if (( cap < 5 )); then echo "$t $name: skipped (deadline)" >> "$summary"; return 1; fi
    local t0=$(date +%s%N)
    ( cd "$work" && timeout "$cap" "$@" > "$work/$name.out" 2> "$work/$name.log" )
    local rc=$?
    echo "$t $name: exit $rc in $(( ($(date +%s%N) - t0) / 1000000 )) ms (cap $cap s)" >> "$summary"
    pack
    return $rc
  }
  # the search gets what is left after ~45% of the share kept for the steps after it
  run_cap=$(( share * 55 / 100 ))
  step run "$run_cap" "$tool" "$gi" run --pop "$pop" --generations "$gens" --seed 1 "${copt[@]}" --out run --json
  if [ ! -f "$work/run/best.genome" ] && [ -f "$work/run/checkpoint.json" ]; then
    # cut by its cap: close the run after its last checkpoint (best.genome is written at the end)
    done_gens=$(( $(wc -l < "$work/run/generations.csv") - 1 ))
    step run_close 30 "$tool" "$gi" run --resume run --generations "$done_gens" --json
  fi
  [ -f "$work/run/best.genome" ] && cp "$work/run/best.genome" "$work/best.genome"
  if [ -f "$work/best.genome" ]; then
    step minimize $((60 * f)) "$tool" "$gi" minimize best.genome "${copt[@]}" -o min.genome --json
    [ -f "$work/min.genome" ] || cp "$work/best.genome" "$work/min.genome"
    step tune_original $((60 * f)) "$tool" "$gi" tune "${copt[@]}" -o pretuned.genome --json
    if [ -f "$work/pretuned.genome" ]; then pre=(--pretuned pretuned.genome); else pre=(); fi
    step validate_min $((50 * f)) "$tool" "$gi" validate min.genome "${pre[@]}" "${copt[@]}" --cases "$cases" --json
    step tune_evolved $((60 * f)) "$tool" "$gi" tune min.genome "${copt[@]}" -o evolved.genome --json
    [ -f "$work/evolved.genome" ] && step validate_evolved $((50 * f)) "$tool" "$gi" validate evolved.genome "${pre[@]}" "${copt[@]}" --cases "$cases" --json
  fi
  mkdir -p "$out/$t"
  for f in best min pretuned evolved; do
    [ -f "$work/$f.genome" ] || continue
    cp "$work/$f.genome" "$out/$t/"
    echo "$t $f.genome: $(grep -v '^#' "$work/$f.genome" | tr '\n' ' ')" >> "$summary"
  done
  rm -rf "$W/nvrtc-cache"
  pack
done
echo "done" >> "$summary"
