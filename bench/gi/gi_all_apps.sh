#!/usr/bin/env bash
# A short end-to-end GI check of every tool on one GPU (copy into the bundle root or run as
# bundle/../bench/gi/gi_all_apps.sh BUNDLE OUTDIR): for each tool a small search, then validation of
# its best genome on unseen hold-out cases. Results: OUTDIR/gi_all.tar.gz and a summary on stdout.
# Usage: gi_all_apps.sh BUNDLE OUTDIR [POP] [GENERATIONS] [PER_TOOL_SECONDS]
set -u
b=$(cd "${1:?usage: gi_all_apps.sh BUNDLE OUTDIR [POP] [GENERATIONS] [PER_TOOL_SECONDS]}" && pwd)
out=${2:?OUTDIR}
pop=${3:-60}
gens=${4:-5}
per=${5:-110}
W=$(mktemp -d /tmp/gi-all.XXXXXX)
mkdir -p "$out"
. "$b/env.sh" "$W/nvrtc-cache"
for t in stereo reg_deform barracuda_exact; do
  s=$SECONDS
  timeout "$per" "$t" gi run --pop "$pop" --generations "$gens" --seed 3 --out "$W/$t" --json > "$W/$t.run.json" 2> "$W/$t.run.log"
  rc=$?
  v=skipped
  if [ -s "$W/$t/best.genome" ]; then
    timeout 60 "$t" gi validate "$W/$t/best.genome" --cases 3 --json > "$W/$t.validate.json" 2> "$W/$t.validate.log"
    v="rc=$?"
  fi
  echo "$t: gi run rc=$rc in $((SECONDS - s)) s, validate $v; best: $(grep -v '^#' "$W/$t/best.genome" 2>/dev/null | tr '\n' ' ')"
  tail -n 3 "$W/$t/generations.csv" 2>/dev/null
  head -c 1500 "$W/$t.validate.json" 2>/dev/null; echo
done
tar czf "$out/gi_all.tar.gz" -C "$W" --exclude nvrtc-cache . 2>/dev/null
