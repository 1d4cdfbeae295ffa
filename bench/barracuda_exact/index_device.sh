#!/usr/bin/env bash
# `barracuda_exact index` on the GPU host (issue 36), from the bundle (`make bundle`), in one device
# call. Per SIZE (bc_human_genome --size SIZE --seed 1; `full` = GRCh38's 3.09 Gbp), each a genome
# made here, the whole command timed (FASTA in, five files out) and its --json kept:
#   gpu    `index` with the suffixes sorted on GPU 0 (--check: every adjacent pair of rows compared
#          base by base, reported apart from the timed run when CHECK=both)
#   cpu    `index --backend cpu` (libdivsufsort), when the SIZE is followed by :cpu
#   bwa    `bwa index -a bwtsw` (Debian's 0.7.17, one thread), when the SIZE is followed by :bwa
#   pac    `bwa fa2pac` (-f: bwa index's final .pac/.ann/.amb, minutes even at 3.1 Gbp), when followed by :pac
#   2gpu   `index --devices all` (every GPU of the host sharing the sort), when followed by :2gpu
# and the five files of gpu against cpu's and bwa's with cmp (byte for byte).
# Run from the repository root. Usage: index_device.sh BUNDLE OUTDIR SIZE[:cpu][:bwa][:pac][:2gpu]...
# CHECK=both (default): a timed run without --check, then one with it; CHECK=only: one run, with it;
# CHECK=none: the timed run only.
# OUTDIR/summary.txt: one line per run; OUTDIR/<size>-<who>.json: each --json.
set -uo pipefail
b=$(cd "${1:?usage: index_device.sh BUNDLE OUTDIR SIZE[:cpu][:bwa]...}" && pwd)
out=${2:?OUTDIR}
shift 2
mkdir -p "$out"
out=$(cd "$out" && pwd)
W=$(mktemp -d /tmp/index.XXXXXX)
trap 'rm -rf "$W"' EXIT
. "$b/env.sh" "$W/nvrtc-cache" > /dev/null
T=$(nproc)
S="$out/summary.txt"
CHECK=${CHECK:-both}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo "host cores: $T, memory: $(free -g | awk '/Mem:/ {print $2}') GB; bundle $(cat "$b/COMMIT" 2>/dev/null)"; } > "$S" 2>&1
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
json_line() {  # FILE: stage seconds, GPU memory, batches, check
  python3 - "$1" <<'PY' 2>&1
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    print("no json:", e); sys.exit()
s = " ".join(f"{k}={v:.1f}" for k, v in j.get("seconds", {}).items())
g = " ".join(f"gpu{d['device']}={d['peak_bytes'] / 2**30:.1f}GiB/{d['batches']}batches" for d in j.get("gpus", []))
print(f"backend={j.get('backend')} {s} host={j.get('peak_host_bytes', 0) / 2**30:.1f}GiB {g}",
      j.get("gpu_sort", ""), j.get("check", ""), j.get("fallback", ""))
PY
}
same() {  # DIR_A DIR_B [EXTENSIONS]: the five files (or those named) byte for byte
  local bad="" e
  for e in ${3:-bwt sa pac ann amb}; do cmp -s "$1/g.fa.$e" "$2/g.fa.$e" || bad="$bad .$e"; done
  [ -z "$bad" ] && echo "identical" || echo "DIFFER:$bad"
}
run_index() {  # SIZE WHO DIR ARGS...: one timed `index`
  local size=$1 who=$2 dir=$3
  shift 3
  mkdir -p "$dir" && ln -sf "$W/$size.fa" "$dir/g.fa"
  local t
  t=$(now)
  barracuda_exact index --json -v "$@" "$dir/g.fa" > "$out/$size-$who.json" 2> "$out/$size-$who.log"
  local rc=$?
  echo "$size $who: exit $rc, $(secs "$t") s; $(json_line "$out/$size-$who.json")" >> "$S"
}
for spec in "$@"; do
  size=${spec%%:*}
  t=$(now)
  if [ "$size" = full ]; then
    bc_human_genome -t "$T" --seed 1 -o "$W/$size.fa" 2> "$out/$size-genome.log"
  else
    bc_human_genome --size "$size" -t "$T" --seed 1 -o "$W/$size.fa" 2> "$out/$size-genome.log"
  fi
  echo "genome $size: exit $?, $(secs "$t") s, $(stat -c %s "$W/$size.fa") bytes" >> "$S"
  if [ "$CHECK" = only ]; then
    run_index "$size" gpu "$W/$size-gpu" --backend gpu --check
  elif [ "$CHECK" = none ]; then
    run_index "$size" gpu "$W/$size-gpu" --backend gpu
  else
    run_index "$size" gpu "$W/$size-gpu" --backend gpu
    run_index "$size" gpu-check "$W/$size-check" --backend gpu --check
    echo "$size gpu-check vs gpu: $(same "$W/$size-check" "$W/$size-gpu")" >> "$S"
    rm -f "$W/$size-check"/g.fa.*
  fi
  case "$spec" in *:bwa*)
    mkdir -p "$W/$size-bwa" && ln -sf "$W/$size.fa" "$W/$size-bwa/g.fa"
    t=$(now)
    bwa index -a bwtsw "$W/$size-bwa/g.fa" > /dev/null 2> "$out/$size-bwa.log"
    echo "$size bwa index: exit $?, $(secs "$t") s" >> "$S"
    echo "$size gpu vs bwa: $(same "$W/$size-gpu" "$W/$size-bwa")" >> "$S"
    rm -rf "$W/$size-bwa";;
  esac
  case "$spec" in *:pac*)
    mkdir -p "$W/$size-pac"
    t=$(now)
    bwa fa2pac -f "$W/$size.fa" "$W/$size-pac/g.fa" > /dev/null 2> "$out/$size-pac.log"
    echo "$size bwa fa2pac: exit $?, $(secs "$t") s" >> "$S"
    echo "$size gpu vs bwa fa2pac: $(same "$W/$size-gpu" "$W/$size-pac" "pac ann amb")" >> "$S"
    rm -rf "$W/$size-pac";;
  esac
  case "$spec" in *:2gpu*)
    run_index "$size" 2gpu "$W/$size-2gpu" --backend gpu --devices all
    echo "$size 2gpu vs gpu: $(same "$W/$size-gpu" "$W/$size-2gpu")" >> "$S"
    rm -rf "$W/$size-2gpu";;
  esac
  case "$spec" in *:cpu*)
    run_index "$size" cpu "$W/$size-cpu" --backend cpu
    echo "$size gpu vs cpu: $(same "$W/$size-gpu" "$W/$size-cpu")" >> "$S"
    rm -rf "$W/$size-cpu";;
  esac
  rm -rf "$W/$size-gpu" "$W/$size.fa"
done
cat "$S"
