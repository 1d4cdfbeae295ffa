#!/usr/bin/env bash
# barracuda_exact demo: index E. coli, simulate 100 bp reads (art_illumina, seeded; else the lambda
# reads shipped in data/), map them as bwa aln + samse does (GPU when usable, else CPU) to BAM, then
# exactly (--exact, the exact kernel) with the reads without an exact hit kept aside; print the summaries.
set -euo pipefail
OUT=${EVK_DEMO_OUT:-build/demo}/barracuda_exact
mkdir -p "$OUT"
G=data/genomes/NC_008253.fna.gz
if [ ! -f "$G" ]; then echo "barracuda_exact demo: $G missing (run scripts/fetch-data.sh)"; exit 0; fi
gzip -dc "$G" > "$OUT/ecoli.fa"
barracuda_exact index "$OUT/ecoli.fa"
if command -v art_illumina > /dev/null; then
  art_illumina -ss HS25 -i "$OUT/ecoli.fa" -l 100 -f 5 -rs 2015 -na -q -o "$OUT/sim" > /dev/null 2>&1
  gzip -f "$OUT/sim.fq"
  READS="$OUT/sim.fq.gz"
else
  gzip -dc data/genomes/lambda_virus.fa.gz > "$OUT/ecoli.fa"  # fall back to lambda + its reads
  barracuda_exact index "$OUT/ecoli.fa"
  READS=data/reads/lambda_reads_1.fq.gz
fi
barracuda_exact map "$OUT/ecoli.fa" "$READS" -o "$OUT/mapped.bam" --verbose
barracuda_exact map --exact "$OUT/ecoli.fa" "$READS" -o "$OUT/exact.bam" --unmatched "$OUT/unmatched.fq.gz" --verbose
echo "barracuda_exact demo: $OUT/mapped.bam, $OUT/exact.bam, $OUT/unmatched.fq.gz"
