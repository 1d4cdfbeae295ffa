#!/usr/bin/env bash
# A full-size GI search for one tool on one GPU, spread over as many device calls as it needs, then
# the steps after it, from an OpenCV-free bundle (`make bundle`):
#   gi run (POP x GENERATIONS, seed 1, generations cycling through every size class)
#   -> gi minimize -> per size class C: gi tune --class C of the original (the class's pre-tuned
#   baseline, pretuned-C.genome) and of the minimized genome (evolved-C.genome), then gi validate
#   evolved-C.genome --class C with CASES hold-out cases, vs the original and pretuned-C
# Each call continues where the last one stopped: the run resumes from its checkpoint (it gets SIGINT
# at the deadline, so at most the generation in progress is lost), and a step that finished is not
# run again (a step cut by the deadline starts over on the next call). The state is OUTDIR/TOOL;
# OUTDIR/gi-search-TOOL.tar.gz holds it and is rewritten after every step: extract it into OUTDIR
# before the next call. A TOOL may name another GI subcommand as TOOL:COMMAND
# (barracuda_exact:gi-inexact); its state is then OUTDIR/TOOL-COMMAND.
# GI_DEVICES (e.g. "all" or "0,1"): the run evaluates on those GPUs, one worker each (`gi run
# --devices`; same kind of GPU only), else on device 0.
# Usage (repository root on the GPU host):
#   gi_search.sh BUNDLE OUTDIR TOOL[:COMMAND] [POP] [GENERATIONS] [DEADLINE_S] [CASES]
set -uo pipefail
b=$(cd "${1:?usage: gi_search.sh BUNDLE OUTDIR TOOL[:COMMAND] [POP] [GENERATIONS] [DEADLINE_S] [CASES]}" && pwd)
out=${2:?OUTDIR}
spec=${3:?TOOL}
pop=${4:-300}
gens=${5:-50}
deadline=$(( $(date +%s) + ${6:-540} ))
cases=${7:-10}
tool=${spec%%:*}
gi=gi
[[ "$spec" == *:* ]] && gi=${spec#*:}
t=$tool
[ "$gi" != gi ] && t="$tool-$gi"
mkdir -p "$out/$t"
out=$(cd "$out" && pwd)
work="$out/$t"
summary="$work/summary.txt"
W=$(mktemp -d /tmp/gi-search.XXXXXX)
. "$b/env.sh" "$W/nvrtc-cache"
{
  echo "== call $(date -u +%FT%TZ), deadline in $(( deadline - $(date +%s) )) s"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader 2>&1
  echo "host cores: $(nproc)"
} >> "$summary"
pack() { tar czf "$out/gi-search-$t.tar.gz" -C "$out" "$t" 2>/dev/null; }

# completed generations of the run (generations.csv has a header line)
done_gens() { [ -f "$work/run/generations.csv" ] && echo $(( $(wc -l < "$work/run/generations.csv") - 1 )) || echo 0; }

# step NAME DONE_FILE CAP_S CMD...: skipped when DONE_FILE exists; stdout/stderr in NAME.{out,log};
# capped by the deadline; DONE_FILE is the step's own output, or NAME.done (written on exit 0)
step() {
  local name=$1 done_file=$2 cap=$3
  shift 3
  if [ -s "$work/$done_file" ]; then return 0; fi
  local left=$(( deadline - $(date +%s) - 10 ))
  (( left < cap )) && cap=$left
  if (( cap < 20 )); then echo "$name: not started (deadline)" >> "$summary"; return 1; fi
  local t0=$(date +%s%N)
  ( cd "$work" && timeout --kill-after=10 "$cap" "$@" > "$work/$name.out" 2> "$work/$name.log" )
  local rc=$?
  echo "$name: exit $rc in $(( ($(date +%s%N) - t0) / 1000000 )) ms (cap $cap s)" >> "$summary"
  if (( rc == 0 )) && [ "$done_file" = "$name.done" ]; then date -u +%FT%TZ > "$work/$done_file"; fi
  pack
  return $rc
}

# the search: start or resume, SIGINT at the deadline (it checkpoints after every generation)
n=$(done_gens)
if (( n < gens )); then
  left=$(( deadline - $(date +%s) - 30 ))
  if (( left > 60 )); then
    t0=$(date +%s)
    dev=()
    [ -n "${GI_DEVICES:-}" ] && dev=(--devices "$GI_DEVICES")
    if [ -f "$work/run/checkpoint.json" ]; then
      ( cd "$work" && timeout --signal=INT --kill-after=30 "$left" "$tool" "$gi" run --resume run --generations "$gens" "${dev[@]}" --json \
        > "$work/run.out.$t0" 2> "$work/run.log.$t0" )
    else
      ( cd "$work" && timeout --signal=INT --kill-after=30 "$left" "$tool" "$gi" run --pop "$pop" --generations "$gens" \
        --seed 1 --out run "${dev[@]}" --json > "$work/run.out.$t0" 2> "$work/run.log.$t0" )
    fi
    echo "run: exit $? after $(( $(date +%s) - t0 )) s, $(done_gens) of $gens generations done" >> "$summary"
    pack
  fi
fi
n=$(done_gens)
if (( n >= gens )) && [ ! -f "$work/run/best.genome" ]; then
  # every generation done but cut before the end of the run: close it (writes best.genome and the report)
  step run_close run/best.genome 60 "$tool" "$gi" run --resume run --generations "$gens" --json
fi
if [ -f "$work/run/best.genome" ]; then
  [ -f "$work/best.genome" ] || cp "$work/run/best.genome" "$work/best.genome"
  if step minimize min.genome 400 "$tool" "$gi" minimize best.genome -o min.genome --json; then
    # per size class: the pre-tuned original, the tuned evolved genome, and its validation against both
    for c in $("$tool" "$gi" classes 2> /dev/null | awk '{print $1}'); do
      step "tune_original-$c" "pretuned-$c.genome" 300 "$tool" "$gi" tune --class "$c" -o "pretuned-$c.genome" --json &&
      step "tune_evolved-$c" "evolved-$c.genome" 300 "$tool" "$gi" tune min.genome --class "$c" -o "evolved-$c.genome" --json &&
      step "validate-$c" "validate-$c.done" 300 "$tool" "$gi" validate "evolved-$c.genome" --class "$c" \
        --pretuned "$c=pretuned-$c.genome" --cases "$cases" --json
    done
  fi
fi
echo "state: $(done_gens) of $gens generations; $(cd "$work" && ls -- *.genome *.done 2>/dev/null | tr '\n' ' ')" >> "$summary"
pack
tail -4 "$summary"
rm -rf "$W"
