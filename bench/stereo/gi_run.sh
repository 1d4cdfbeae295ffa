#!/usr/bin/env bash
# The stereo genetic-improvement run on a GPU host, from the GPU bundle (scripts/bundle.d/stereo.sh
# copies this script to BUNDLE/gi_run_stereo.sh). One device call: GPU tests, then
#   gi run (pop 60 x 10 generations, seed 1) -> gi minimize -> gi tune (original = pre-tuned baseline)
#   -> gi validate (10 hold-out cases) -> gi tune (evolved) -> gi validate -> the tool itself with
#   --kernel evolved.genome on Tsukuba against the CPU reference.
# Everything lands in OUTDIR/stereo-gi.tgz plus OUTDIR/summary.txt. Each step has a cap and the whole
# script a deadline (DEADLINE_S, default 520 s) so that what was done always comes back.
# Usage: gi_run_stereo.sh OUTDIR [POP] [GENERATIONS]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: gi_run_stereo.sh OUTDIR [POP] [GENERATIONS]}
pop=${2:-60}
gens=${3:-10}
deadline=$(( $(date +%s) + ${DEADLINE_S:-520} ))
mkdir -p "$out/gi"
work=$(cd "$out/gi" && pwd)
. "$here/env.sh" "$work/nvrtc-cache"
S="$here/bin/stereo"
summary="$out/summary.txt"
: > "$summary"

# step NAME CAP_S CMD...: runs CMD with stdout/stderr in $work/NAME.{out,log}, capped by the deadline.
step() {
  local name=$1 cap=$2
  shift 2
  local left=$(( deadline - $(date +%s) - 10 ))
  (( left < cap )) && cap=$left
  if (( cap < 5 )); then echo "$name: skipped (deadline)" >> "$summary"; return 1; fi
  local t0=$(date +%s%N)
  ( cd "$work" && timeout "$cap" "$@" > "$work/$name.out" 2> "$work/$name.log" )
  local rc=$?
  echo "$name: exit $rc in $(( ($(date +%s%N) - t0) / 1000000 )) ms (cap $cap s)" >> "$summary"
  return $rc
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv \
  > "$work/gpu.txt" 2>&1 || true
cat "$work/gpu.txt" >> "$summary"
# The GPU tests first (alone: the search times kernels), capped.
step gpu_tests "${TESTS_CAP_S:-150}" "$here/run.sh" "$work/tests" --tests-only
grep -hE '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]' "$work"/tests/*.log >> "$summary" 2>/dev/null
rm -rf "$work/tests/nvrtc-cache"

# The search gets what the deadline leaves after 200 s kept for the steps after it (at most 230 s).
run_cap=$(( deadline - $(date +%s) - 200 ))
(( run_cap > 230 )) && run_cap=230
step run "$run_cap" "$S" gi run --pop "$pop" --generations "$gens" --seed 1 --out run --json
# Cut by its cap: best.genome is written at the end, so close the run after its last checkpoint.
if [ ! -f "$work/run/best.genome" ] && [ -f "$work/run/checkpoint.json" ]; then
  done_gens=$(( $(wc -l < "$work/run/generations.csv") - 1 ))
  step run_close 30 "$S" gi run --resume run --generations "$done_gens" --json
fi
[ -f "$work/run/best.genome" ] && cp "$work/run/best.genome" "$work/best.genome"
if [ -f "$work/best.genome" ]; then
  step minimize 60 "$S" gi minimize best.genome -o min.genome --json
  [ -f "$work/min.genome" ] || cp "$work/best.genome" "$work/min.genome"
  step tune_original 70 "$S" gi tune -o pretuned.genome --json
  if [ -f "$work/pretuned.genome" ]; then pre=(--pretuned pretuned.genome); else pre=(); fi
  step validate_min 50 "$S" gi validate min.genome "${pre[@]}" --cases 10 --json
  step tune_evolved 70 "$S" gi tune min.genome -o evolved.genome --json
  [ -f "$work/evolved.genome" ] && step validate_evolved 50 "$S" gi validate evolved.genome "${pre[@]}" --cases 10 --json
  # The tool itself runs the evolved genome (--kernel FILE) and must match the CPU reference.
  best=evolved.genome
  [ -f "$work/$best" ] || best=min.genome
  L="$EVK_SHARED_DATA/stereo/Tsukuba/imL.pgm"
  R="$EVK_SHARED_DATA/stereo/Tsukuba/imR.pgm"
  if [ -f "$L" ]; then
    step tool_gpu 30 "$S" disparity "$L" "$R" -o tsukuba_gpu.pfm --backend gpu --kernel "$best" --verbose --json
    step tool_cpu 30 "$S" disparity "$L" "$R" -o tsukuba_cpu.pfm --backend cpu --json
    if cmp -s "$work/tsukuba_gpu.pfm" "$work/tsukuba_cpu.pfm"; then echo "tool: $best on Tsukuba identical to CPU" >> "$summary"
    else echo "tool: $best on Tsukuba DIFFERS from CPU (or missing)" >> "$summary"; fi
    rm -f "$work"/tsukuba_*.pfm
  fi
fi
for f in best min pretuned evolved; do
  [ -f "$work/$f.genome" ] && { echo "== $f.genome"; grep -v '^#' "$work/$f.genome"; } >> "$summary"
done
rm -rf "$work/nvrtc-cache"
tar czf "$out/stereo-gi.tgz" -C "$out" gi
echo "done" >> "$summary"
