#!/usr/bin/env bash
# First-run latency of an evolved kernel variant, before and after shipping it inside the tool
# (issue 10): each tool's main job, run cold (fresh NVRTC cache, new process), three ways:
#   auto      --kernel auto: the shipped variant from the embedded fatbin (no NVRTC)
#   file      --kernel GENOME (the same genome as a file) with --no-embedded-variants: NVRTC
#             compile into an empty disk cache, what every first run paid before variants were shipped
#   original  --kernel original: the human kernel's embedded fatbin
# Wall time of the whole command (median of REPEATS cold runs) and the tool's own load/kernel
# figures from -v. Usage: first_run_latency.sh BUNDLE OUTDIR [REPEATS]
set -uo pipefail
b=$(cd "${1:?usage: first_run_latency.sh BUNDLE OUTDIR [REPEATS]}" && pwd)
out=${2:?OUTDIR}
reps=${3:-5}
mkdir -p "$out"
out=$(cd "$out" && pwd)
W=$(mktemp -d /tmp/latency.XXXXXX)
. "$b/env.sh"
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
log="$out/first_run_latency.txt"
echo "# first-run latency on $dev ($(date -u +%FT%TZ)); median of $reps cold runs" > "$log"

# shipped genome of TOOL for this GPU: the variant `devices --json` says auto picks for CLASS
variant_file() {  # TOOL CLASS -> writes $W/TOOL.genome, prints the id
  "$b/bin/$1" devices --json > "$W/$1.devices.json"
  python3 - "$W/$1.devices.json" "$2" "$W/$1.genome" "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); cls = sys.argv[2]; tool = sys.argv[4]
sel = j["devices"][0]["kernels"][tool].get("by_class", {}).get(cls, j["devices"][0]["kernels"][tool])
vid = sel["variant"]
for v in j["variants"]:
    if v["id"] == vid:
        with open(sys.argv[3], "w") as f:
            f.write("# evokernels genome v1\n# kernel: %s\n# cc: %s\n%s\n" % (tool, v["compute_capability"], v["genome"]))
print(vid)
PY
}
# time_cmd NAME CMD...: REPEATS cold runs, median wall ms; the last run's stderr kept
time_cmd() {
  local name=$1
  shift
  case $name in *-file) set -- "$@" --no-embedded-variants ;; esac
  local ts=()
  for i in $(seq "$reps"); do
    rm -rf "$W/cache"
    export EVK_CACHE_DIR="$W/cache"
    local t0=$(date +%s%N)
    "$@" > "$W/$name.out" 2> "$W/$name.err" || { echo "$name: FAILED: $(tail -1 "$W/$name.err")" >> "$log"; return; }
    ts+=($(( ($(date +%s%N) - t0) / 1000000 )))
  done
  local med=$(printf '%s\n' "${ts[@]}" | sort -n | sed -n "$(( (reps + 1) / 2 ))p")
  printf '%-28s median %6d ms  (runs: %s)  %s\n' "$name" "$med" "${ts[*]}" \
    "$(grep -E 'gpu stages|kernel loaded|load ' "$W/$name.err" | head -2 | tr '\n' ' ')" >> "$log"
}

# stereo: a 320x240 pair (the shipped variant's class) as PGM
python3 - "$W" <<'PY'
import random, sys
w, h = 320, 240
random.seed(3)
L = bytes(random.randrange(256) for _ in range(w * h))
R = bytes(L[y * w + min(w - 1, x + 7)] for y in range(h) for x in range(w))
for n, d in (("l", L), ("r", R)):
    open("%s/%s.pgm" % (sys.argv[1], n), "wb").write(b"P5\n%d %d\n255\n" % (w, h) + d)
PY
id=$(variant_file stereo 320x240)
echo "stereo: shipped variant $id" >> "$log"
for k in auto "$W/stereo.genome" original; do
  name="stereo-$k"; [ "${k#/}" != "$k" ] && name=stereo-file
  time_cmd "$name" "$b/bin/stereo" disparity "$W/l.pgm" "$W/r.pgm" -o "$W/d.pfm" --backend gpu --kernel "$k" -v
done

# reg_deform: field of a perturbed grid on the 2 mm MNI brain
brain="$EVK_SHARED_DATA/brain/mni152_t1_2mm.nii.gz"
if [ -f "$brain" ]; then
  "$b/bin/reg_deform" grid --ref "$brain" --spacing 5 --perturb 3 -o "$W/grid.nii.gz" --backend cpu
  id=$(variant_file reg_deform paper-217)
  echo "reg_deform: shipped variant $id" >> "$log"
  for k in auto "$W/reg_deform.genome" original; do
    name="reg_deform-$k"; [ "${k#/}" != "$k" ] && name=reg_deform-file
    time_cmd "$name" "$b/bin/reg_deform" field --ref "$brain" --cpp "$W/grid.nii.gz" -o "$W/f.nii" --backend gpu --kernel "$k" -v
  done
fi

# barracuda_exact: 100 k reads on E. coli
ref="$EVK_DATA_DIR/genomes/NC_008253.fna.gz"
if [ -f "$ref" ]; then
  zcat "$ref" > "$W/ecoli.fa"
  "$b/bin/barracuda_exact" index "$W/ecoli.fa" > /dev/null
  python3 - "$W/ecoli.fa" "$W/reads.fq" <<'PY'
import random, sys
seq = "".join(l.strip() for l in open(sys.argv[1]) if not l.startswith(">"))
random.seed(5)
with open(sys.argv[2], "w") as f:
    for i in range(100000):
        p = random.randrange(len(seq) - 100); s = seq[p:p + 100]
        f.write("@r%d\n%s\n+\n%s\n" % (i, s, "I" * 100))
PY
  id=$(variant_file barracuda_exact ecoli-sized)
  echo "barracuda_exact: shipped variant $id" >> "$log"
  for k in auto "$W/barracuda_exact.genome" original; do
    name="barracuda_exact-$k"; [ "${k#/}" != "$k" ] && name=barracuda_exact-file
    time_cmd "$name" "$b/bin/barracuda_exact" map "$W/ecoli.fa" "$W/reads.fq" -o "$W/o.bam" --backend gpu --kernel "$k" -v
  done
fi
cat "$log"
rm -rf "$W"
