#!/usr/bin/env bash
# The agreement table of barracuda_exact's inexact mapping against bwa 0.7.17 (bwa aln | samse,
# bwa aln x2 | sampe), record by record with bc_sam_agree: ART-simulated 100 and 150 bp reads of
# E. coli and C. elegans (single and paired end) and the real reads of htslib-test (C. elegans) and
# samtools-test (1000 Genomes, chr17 fragment). Runs on the CPU (our CPU backend; the GPU backend's
# records are tested identical to it). Data is generated into OUTDIR, never committed.
# Usage: agreement.sh BUILD_DIR OUTDIR [READS_PER_SET] [THREADS]   (SETS="ecoli celegans real" to choose)
# art_illumina's count is per contig: C. elegans (7 contigs in ce.fa) gets 7x READS_PER_SET reads.
set -euo pipefail
build=$(cd "${1:?usage: agreement.sh BUILD_DIR OUTDIR [READS_PER_SET] [THREADS]}" && pwd)
out=${2:?OUTDIR}
n=${3:-50000}
threads=${4:-2}
root=$(cd "$(dirname "$0")/../.." && pwd)
data=${EVK_DATA_DIR:-$root/data}
mkdir -p "$out"
out=$(cd "$out" && pwd)
bc="$build/bin/barracuda_exact"
agree="$build/bin/bc_sam_agree"
table="$out/agreement.md"
echo "| reads | records | identical (all fields) | identical FLAG/POS/CIGAR/MAPQ/tags | ties | unexplained |" > "$table"
echo "|---|---|---|---|---|---|" >> "$table"

ref() {  # NAME SOURCE: out/NAME/ref.fa indexed by us and (a copy) by bwa
  mkdir -p "$out/$1/bwa"
  case "$2" in *.gz) gzip -dc "$2" > "$out/$1/ref.fa" ;; *) cp "$2" "$out/$1/ref.fa" ;; esac
  cp "$out/$1/ref.fa" "$out/$1/bwa/ref.fa"
  "$bc" index "$out/$1/ref.fa" > /dev/null
  bwa index "$out/$1/bwa/ref.fa" 2> /dev/null
}

compare() {  # LABEL DIR READS [READS2]
  local label=$1 d=$2 r1=$3 r2=${4:-}
  local t0=$(date +%s.%N)
  "$bc" map --backend cpu -t "$threads" "$d/ref.fa" "$r1" $r2 -o "$d/ours.sam" --json > "$d/ours.json"
  local t1=$(date +%s.%N)
  bwa aln -t "$threads" "$d/bwa/ref.fa" "$r1" > "$d/1.sai" 2> /dev/null
  if [ -z "$r2" ]; then
    bwa samse "$d/bwa/ref.fa" "$d/1.sai" "$r1" > "$d/bwa.sam" 2> /dev/null
  else
    bwa aln -t "$threads" "$d/bwa/ref.fa" "$r2" > "$d/2.sai" 2> /dev/null
    bwa sampe "$d/bwa/ref.fa" "$d/1.sai" "$d/2.sai" "$r1" "$r2" > "$d/bwa.sam" 2> "$d/sampe.log"
  fi
  local t2=$(date +%s.%N)
  "$agree" --label "$label" --ref "$d/ref.fa" --list 50 "$d/ours.sam" "$d/bwa.sam" > "$d/agree.txt" || true
  head -1 "$d/agree.txt" >> "$table"
  printf '%s: ours %.1f s, bwa %.1f s (%s threads)\n' "$label" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)" "$threads" >> "$out/times.txt"
  tail -n +2 "$d/agree.txt" | sed "s/^/$label /" >> "$out/differences.txt"
}

art() {  # DIR LEN COUNT SEED [paired]
  local d=$1 len=$2 cnt=$3 seed=$4 ss=HS20
  (( len > 125 )) && ss=HS25
  if [ "${5:-}" = paired ]; then
    art_illumina -ss $ss -i "$d/ref.fa" -l "$len" -c "$cnt" -rs "$seed" -na -q -p -m $((3 * len)) -s $((len / 3)) -o "$d/p$len" > /dev/null 2>&1
  else
    art_illumina -ss $ss -i "$d/ref.fa" -l "$len" -c "$cnt" -rs "$seed" -na -q -o "$d/s$len" > /dev/null 2>&1
  fi
}

: > "$out/differences.txt"
: > "$out/times.txt"
sets=${SETS:-ecoli celegans real}
has() { [[ " $sets " == *" $1 "* ]]; }
if has ecoli && [ -f "$data/genomes/NC_008253.fna.gz" ] && command -v art_illumina > /dev/null; then
  ref ecoli "$data/genomes/NC_008253.fna.gz"
  for len in 100 150; do
    art "$out/ecoli" $len "$n" 7$len
    compare "ART E. coli ${len} bp single" "$out/ecoli" "$out/ecoli/s$len.fq"
    art "$out/ecoli" $len $((n / 2)) 8$len paired
    compare "ART E. coli ${len} bp paired" "$out/ecoli" "$out/ecoli/p${len}1.fq" "$out/ecoli/p${len}2.fq"
  done
fi
if has celegans && [ -f "$data/genomes/ce.fa" ] && command -v art_illumina > /dev/null; then
  ref celegans "$data/genomes/ce.fa"
  for len in 100 150; do
    art "$out/celegans" $len "$n" 9$len
    compare "ART C. elegans ${len} bp single" "$out/celegans" "$out/celegans/s$len.fq"
    art "$out/celegans" $len $((n / 2)) 6$len paired
    compare "ART C. elegans ${len} bp paired" "$out/celegans" "$out/celegans/p${len}1.fq" "$out/celegans/p${len}2.fq"
  done
fi
if has real && [ -f "$data/reads/ce#1000.sam" ] && [ -f "$data/genomes/ce.fa" ]; then
  [ -f "$out/celegans/ref.fa.bwt" ] || ref celegans "$data/genomes/ce.fa"
  samtools fastq "$data/reads/ce#1000.sam" > "$out/celegans/real.fq" 2> /dev/null
  compare "real C. elegans (htslib-test) single" "$out/celegans" "$out/celegans/real.fq"
fi
st="$data/samtools-test/dat"
if has real && [ -f "$st/mpileup.ref.fa" ]; then
  ref g1k "$st/mpileup.ref.fa"
  d="$out/g1k"
  for i in 1 2 3; do samtools fastq "$st/mpileup.$i.sam" 2> /dev/null; done > "$d/all.fq"
  compare "real 1000 Genomes (samtools-test) single" "$d" "$d/all.fq"
  (for i in 1 2 3; do samtools view "$st/mpileup.$i.sam"; done) | cut -f1 | sort | uniq -d > "$d/both.txt"
  for i in 1 2 3; do
    samtools view -h -N "$d/both.txt" "$st/mpileup.$i.sam" | samtools collate -O -u - | \
      samtools fastq -1 "$d/r$i.1.fq" -2 "$d/r$i.2.fq" -0 /dev/null -s /dev/null - 2> /dev/null
  done
  cat "$d"/r?.1.fq > "$d/p1.fq"
  cat "$d"/r?.2.fq > "$d/p2.fq"
  compare "real 1000 Genomes (samtools-test) paired" "$d" "$d/p1.fq" "$d/p2.fq"
fi
cat "$table"
