#!/usr/bin/env bash
# Speed-up of `gi run --devices all` (one worker per GPU) against one GPU, same tool, population,
# seed and size classes, on one GPU host, from a bundle (`make bundle`). Two run directories:
#   OUTDIR/TOOL/all  gi run --devices all     (every GPU of the host; refuses mixed kinds)
#   OUTDIR/TOOL/one  gi run --device 0
# Each call gives both runs half of what is left of DEADLINE_S; a run cut by its share continues
# with --resume on the next call (call again with the same OUTDIR until both have GENERATIONS; a
# 300 x 50 run takes ~12 minutes on one H200, so a full pair needs 3 or 4 calls of 540 s). The
# summary compares the generations both runs completed: wall time (sum of the generations' wall_s),
# candidates/s and the speed-up; OUTDIR/TOOL/summary.txt and OUTDIR/gi-multi-TOOL.tar.gz are
# rewritten after every step.
# Usage (repository root on the GPU host): gi_multi_gpu.sh BUNDLE OUTDIR TOOL [POP] [GENERATIONS] [DEADLINE_S] [CLASS]
set -uo pipefail
b=$(cd "${1:?usage: gi_multi_gpu.sh BUNDLE OUTDIR TOOL [POP] [GENERATIONS] [DEADLINE_S] [CLASS]}" && pwd)
out=${2:?OUTDIR}
tool=${3:?TOOL}
pop=${4:-300}
gens=${5:-50}
deadline=$(( $(date +%s) + ${6:-540} ))
cls=${7:-}
mkdir -p "$out/$tool"
out=$(cd "$out" && pwd)
W=$(mktemp -d /tmp/gi-multi.XXXXXX)
. "$b/env.sh" "$W/nvrtc-cache"
summary="$out/$tool/summary.txt"
pack() { tar czf "$out/gi-multi-$tool.tar.gz" -C "$out" "$tool" 2>/dev/null; }
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv 2>&1
  echo "host cores: $(nproc)"
} >> "$summary"

# completed generations of a run directory (generations.csv has a header line)
done_gens() { [ -f "$1/generations.csv" ] && echo $(( $(wc -l < "$1/generations.csv") - 1 )) || echo 0; }

# run NAME DEVICE-OPTION...: (re)starts or resumes the run for its share of the time left
run() {
  local name=$1
  shift
  local dir="$out/$tool/$name"
  local n
  n=$(done_gens "$dir")
  if (( n >= gens )); then echo "$name: $n generations already" >> "$summary"; return 0; fi
  local left=$(( deadline - $(date +%s) - 20 ))
  local share=$left
  [ "$name" = "all" ] && share=$(( left / 2 ))
  (( share < 30 )) && { echo "$name: no time left" >> "$summary"; return 1; }
  local t0=$(date +%s)
  if [ -f "$dir/checkpoint.json" ]; then
    timeout --signal=INT --kill-after=20 "$share" "$tool" gi run --resume "$dir" --generations "$gens" "$@" --json \
      > "$dir.out.$t0" 2> "$dir.log.$t0"
  else
    local c=()
    [ -n "$cls" ] && c=(--class "$cls")
    timeout --signal=INT --kill-after=20 "$share" "$tool" gi run --pop "$pop" --generations "$gens" --seed 1 "${c[@]}" \
      --out "$dir" "$@" --json > "$dir.out.$t0" 2> "$dir.log.$t0"
  fi
  echo "$name ($*): exit $? after $(( $(date +%s) - t0 )) s (share $share s), $(done_gens "$dir") generations done" >> "$summary"
  pack
}

run all --devices all
run one --device 0

# compare the generations both completed: column 20 of generations.csv is wall_s, 7 evaluated
na=$(done_gens "$out/$tool/all")
no=$(done_gens "$out/$tool/one")
n=$(( na < no ? na : no ))
if (( n > 0 )); then
  stats() { awk -F, -v n="$n" 'NR > 1 && NR <= n + 1 { w += $20; e += $7 } END { printf "%.1f %d", w, e }' "$1/generations.csv"; }
  read -r wa ea <<< "$(stats "$out/$tool/all")"
  read -r wo eo <<< "$(stats "$out/$tool/one")"
  lanes=$(tr -d ' \n' < "$out/$tool/all/config.json" | grep -o '"devices":\[[^]]*\]' | tr -cd ',' | wc -c)
  lanes=$(( lanes + 1 ))
  awk -v n="$n" -v wa="$wa" -v wo="$wo" -v ea="$ea" -v eo="$eo" -v l="$lanes" -v t="$tool" -v p="$pop" 'BEGIN {
    printf "%s pop %d, generations 0..%d: one GPU %.1f s (%.1f candidates/s), %d GPUs %.1f s (%.1f candidates/s): speed-up %.2fx\n",
      t, p, n - 1, wo, eo / wo, l, wa, ea / wa, wo / wa }' >> "$summary"
fi
pack
tail -3 "$summary"
rm -rf "$W"
