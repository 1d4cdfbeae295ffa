#!/usr/bin/env bash
# Ancient-DNA read mapping on the GPU host (issue 41's workload), from the bundle (`make bundle`), in
# one device call: a human-like genome cut (bc_human_genome --size SIZE), its index (ours, the same
# files as bwa index), READS simulated aDNA reads (bc_adna_reads: log-normal lengths, median 45 bp,
# deamination, 10% contaminants) and READS modern 100 bp reads (the same simulator without damage),
# then per setting
#   adna   -l 1024 -n 0.01 -o 2   (Schubert et al. 2012), the aDNA reads
#   eager  -l 1024 -n 0.04        (nf-core/eager's default), the aDNA reads
#   modern bwa's defaults, the 100 bp reads
# `barracuda_exact map` of B (this bundle; --json: stage times, reads handed back by the kernel and
# where they were searched) and, when BUNDLE_A is given, of A (an older build) on the same reads,
# then `bwa aln -t N` + `bwa samse` on the same reads and index (timed apart), and B's records
# against bwa's (bc_sam_agree). FASTQ.gz -> SAM everywhere (the SAM is what the records are compared on).
# With BARRACUDA=DIR (the BarraCUDA peer unpacked: DIR/barracuda, ../shared/peers/README.md), the
# peer too: its own index of the genome (timed), `barracuda aln` with the setting's options and
# `samse` on the same reads, and its records against bwa's (BarraCUDA's .sai is its own format);
# BARRACUDA_ARGS (default "-g -R 30", the peers README's closest to bwa 0.7.17) go to its aln;
# BARRACUDA_INDEX=PREFIX: its index of the same genome built before (`barracuda index`), else built here.
# BWA_READS=N: ours on all READS reads writes BAM (the time to compare), and bwa, ours again (SAM) and
# the agreement run on the first N reads only (a full bwa run at 10 M reads on 3.09 Gbp takes ~30 min);
# bwa's fixed cost (aln + samse of 1,000 reads) is timed too: bwa for READS reads = fixed + READS/N x
# (subset time - fixed).
# Run from the repository root. Usage: adna_device.sh BUNDLE OUTDIR [SIZE=200M|full|GENOME.fa] [READS=200000] [BUNDLE_A]
# (full: GRCh38's 3.09 Gbp)
# (GENOME.fa: a genome made before, indexed beside it or indexed here)
# OUTDIR/summary.txt: one line per run; OUTDIR/*.json: each map's --json.
set -uo pipefail
b=$(cd "${1:?usage: adna_device.sh BUNDLE OUTDIR [SIZE] [READS] [BUNDLE_A]}" && pwd)
out=${2:?OUTDIR}
size=${3:-200M}
n=${4:-200000}
a=${5:-}
[ -n "$a" ] && a=$(cd "$a" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
W=$(mktemp -d /tmp/adna.XXXXXX)
trap 'rm -rf "$W"' EXIT
. "$b/env.sh" "$W/nvrtc-cache" > /dev/null
T=$(nproc)
S="$out/summary.txt"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo "host cores: $T; B $(cat "$b/COMMIT" 2>/dev/null); A $(cat "$a/COMMIT" 2>/dev/null)"; } > "$S" 2>&1
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
if [ -f "$size" ]; then  # a genome made (and indexed) before: used in place
  ln -s "$(cd "$(dirname "$size")" && pwd)/$(basename "$size")" "$W/g.fa"
  for e in amb ann bwt pac sa; do [ -f "$size.$e" ] && ln -s "$(cd "$(dirname "$size")" && pwd)/$(basename "$size").$e" "$W/g.fa.$e"; done
fi
if [ ! -e "$W/g.fa" ]; then
  size_opt=(--size "$size")
  [ "$size" = full ] && size_opt=()
  t=$(now); bc_human_genome "${size_opt[@]}" -t "$T" --seed 1 -o "$W/g.fa" --stats "$out/genome-stats.tsv" 2> "$out/genome.log"
  echo "genome $size: exit $?, $(secs "$t") s" >> "$S"
fi
if [ ! -e "$W/g.fa.sa" ]; then
  t=$(now); barracuda_exact index --json "$W/g.fa" > "$out/index.json" 2> "$out/index.log"
  echo "index: exit $?, $(secs "$t") s" >> "$S"
fi
t=$(now); bc_adna_reads "$W/g.fa" "$n" "$W/r.fq.gz" -t "$T" --seed 1 2> "$out/reads.log"
echo "reads $n: exit $?, $(secs "$t") s" >> "$S"
t=$(now); bc_adna_reads "$W/g.fa" "$n" "$W/r100.fq.gz" -t "$T" --seed 2 --median 100 --sigma 0.02 --min-len 100 \
  --max-len 100 --deam 0 --deam-interior 0 2> "$out/reads100.log"
echo "reads $n x 100 bp: exit $?, $(secs "$t") s" >> "$S"

json_line() {  # FILE: the --json fields that matter here, one line
  python3 - "$1" <<'PY' 2>&1
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    print("no json:", e); sys.exit()
s = j.get("seconds", {})
keys = [k for k in j if "pass" in k or "fallback" in k or k in ("reads", "mapped")]
print(" ".join(f"{k}={j[k]}" for k in keys), "| seconds:", " ".join(f"{k}={v:.2f}" for k, v in s.items() if isinstance(v, (int, float)) and v >= 0.01))
PY
}
# The BarraCUDA peer on one setting: aln (GPU) + samse, timed apart, its records against bwa's.
peer_run() {  # NAME READS BWA_OPTIONS
  local name=$1 reads=$2 opt=$3 t ta ts pidx=${BARRACUDA_INDEX:-$W/peer/g.fa}
  if [ ! -e "$pidx.sa" ]; then
    pidx=$W/peer/g.fa
    mkdir -p "$W/peer" && ln -sf "$W/g.fa" "$W/peer/g.fa"
    t=$(now); (ulimit -s unlimited; "$BARRACUDA/barracuda" index "$W/peer/g.fa" > /dev/null 2> "$out/peer-index.log")
    echo "BarraCUDA index: exit $?, $(secs "$t") s" >> "$S"
  fi
  t=$(now)
  # shellcheck disable=SC2086
  (ulimit -s unlimited; "$BARRACUDA/barracuda" aln ${BARRACUDA_ARGS:--g -R 30} $opt "$pidx" "$reads" > "$W/$name.peer.sai" 2> "$out/$name-peer-aln.log")
  local rc=$?
  ta=$(secs "$t")
  t=$(now)
  (ulimit -s unlimited; "$BARRACUDA/barracuda" samse "$pidx" "$W/$name.peer.sai" "$reads" > "$W/$name.peer.sam" 2> "$out/$name-peer-samse.log")
  ts=$(secs "$t")
  echo "$name BarraCUDA aln: exit $rc, $ta s, samse $ts s" >> "$S"
  bc_sam_agree --label "$name-peer" --ref "$W/g.fa" --list 10 "$W/$name.peer.sam" "$W/$name.bwa.sam" > "$out/$name-peer-agree.txt" 2>&1
  echo "$name agreement (BarraCUDA vs bwa): exit $?, $(head -1 "$out/$name-peer-agree.txt")" >> "$S"
}
for setting in "adna:r:--seed-len 1024 --max-diff 0.01 --max-gap-open 2:-l 1024 -n 0.01 -o 2" \
               "eager:r:--seed-len 1024 --max-diff 0.04:-l 1024 -n 0.04" "modern:r100: : "; do
  name=${setting%%:*}
  rest=${setting#*:}
  reads=$W/${rest%%:*}.fq.gz
  rest=${rest#*:}
  ours=${rest%%:*}
  bwa_opt=${rest#*:}
  for who in B A; do
    dir=$b
    if [ "$who" = A ]; then [ -n "$a" ] || continue; dir=$a; fi
    o=$W/$name.$who.sam
    [ -n "${BWA_READS:-}" ] && o=$W/$name.$who.bam  # all reads to BAM; records compared on the subset
    t=$(now)
    # shellcheck disable=SC2086
    "$dir/bin/barracuda_exact" map --json -t "$T" $ours "$W/g.fa" "$reads" -o "$o" \
      > "$out/$name-$who.json" 2> "$out/$name-$who.log"
    rc=$?
    el=$(secs "$t")
    echo "$name ours $who: exit $rc, $el s, $(awk -v s="$el" -v n="$n" 'BEGIN { printf "%.0f", n / s }') reads/s; $(json_line "$out/$name-$who.json")" >> "$S"
  done
  if [ -n "${BWA_READS:-}" ]; then  # bwa (and ours again) on the first BWA_READS reads only
    zcat "$reads" | head -n $((4 * BWA_READS)) | gzip -1 > "$W/$name.sub.fq.gz"
    reads=$W/$name.sub.fq.gz
    t=$(now)
    # shellcheck disable=SC2086
    "$b/bin/barracuda_exact" map --json -t "$T" $ours "$W/g.fa" "$reads" -o "$W/$name.B.sam" \
      > "$out/$name-B-sub.json" 2> "$out/$name-B-sub.log"
    echo "$name ours B on the first $BWA_READS reads: exit $?, $(secs "$t") s" >> "$S"
    # bwa's fixed cost (the index loads of aln and samse): aln + samse of 1,000 reads, counted once
    # when bwa's time for all reads is estimated from the subset
    zcat "$reads" | head -n 4000 | gzip -1 > "$W/$name.1k.fq.gz"
    t=$(now)
    # shellcheck disable=SC2086
    bwa aln -t "$T" $bwa_opt "$W/g.fa" "$W/$name.1k.fq.gz" > "$W/$name.1k.sai" 2> /dev/null &&
      bwa samse "$W/g.fa" "$W/$name.1k.sai" "$W/$name.1k.fq.gz" > /dev/null 2>&1
    echo "$name bwa fixed cost (aln + samse of 1,000 reads): $(secs "$t") s" >> "$S"
  fi
  t=$(now)
  # shellcheck disable=SC2086
  bwa aln -t "$T" $bwa_opt "$W/g.fa" "$reads" > "$W/$name.sai" 2> "$out/$name-bwa-aln.log"
  ta=$(secs "$t")
  t=$(now)
  bwa samse "$W/g.fa" "$W/$name.sai" "$reads" > "$W/$name.bwa.sam" 2> "$out/$name-bwa-samse.log"
  ts=$(secs "$t")
  echo "$name bwa aln -t $T: $ta s, samse $ts s" >> "$S"
  bc_sam_agree --label "$name" --ref "$W/g.fa" --list 10 "$W/$name.B.sam" "$W/$name.bwa.sam" > "$out/$name-agree.txt" 2>&1
  echo "$name agreement (B vs bwa): exit $?, $(head -1 "$out/$name-agree.txt")" >> "$S"
  [ -n "${BARRACUDA:-}" ] && [ -x "$BARRACUDA/barracuda" ] && peer_run "$name" "$reads" "$bwa_opt"
done
cat "$S"
