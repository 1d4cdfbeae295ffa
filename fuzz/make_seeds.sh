#!/usr/bin/env bash
# Regenerates the seed corpora in fuzz/corpus/<harness>/ (small files made here, no copied data):
#   bash fuzz/make_seeds.sh [FUZZ_BUILD_DIR]     (the harness binaries write the index/NIfTI seeds)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-fuzz}
C=fuzz/corpus
rm -rf "$C"
mkdir -p "$C"/{fuzz_fastx,fuzz_bwa_index,fuzz_nifti,fuzz_netpbm,fuzz_genome,fuzz_checkpoint,fuzz_grammar}

# FASTA/FASTQ: plain, gzip, CRLF, lowercase, IUPAC, multi-line, FASTA reads and references
f=$C/fuzz_fastx
printf '@r1 c\nACGTACGTTGCA\n+\nIIIIIIIIIII#\n@r2/1\nacgtNNacgt\n+r2\n!!!!!~~~~~\n@r3\n\n+\n\n' > $f/reads.fq
printf '@r1\r\nACGTAC\r\n+\r\nIIIIII\r\n@r2\r\nTTTTGG\r\n+\r\nIIIIII\r\n' > $f/crlf.fq
printf '>c1 first\nACGTRYKMSWBDHVN-acgt\nACGTACGT\n>c2\nGGGGCCCC\n' > $f/ref.fa
printf '>r1\nACGTACGTAC\n>r2\nTTGACCA.\n' > $f/reads.fa
printf '@r1\nACGT\nACGT\n+\nIIII\nIIII\n' > $f/multiline.fq
printf '@r1\nACGTACGT\n+\nIIIIIIII\n' | gzip -9n > $f/reads.fq.gz
printf '>c1\nACGTACGTACGTAAAC\n' | gzip -9n > $f/ref.fa.gz

# bwa index files and NIfTI files: written by the harnesses themselves
EVK_FUZZ_WRITE_SEEDS=$C/fuzz_bwa_index "$B"/bin/fuzz_bwa_index
EVK_FUZZ_WRITE_SEEDS=$C/fuzz_nifti "$B"/bin/fuzz_nifti

# Netpbm and PFM
f=$C/fuzz_netpbm
{ printf 'P5\n# comment\n4 3\n255\n'; printf '\001\002\003\004\005\006\007\010\011\012\013\014'; } > $f/grey.pgm
{ printf 'P5\n2 2\n65535\n'; printf '\001\002\003\004\005\006\007\010'; } > $f/grey16.pgm
{ printf 'P6\n2 2\n255\n'; printf '\001\002\003\004\005\006\007\010\011\012\013\014'; } > $f/colour.ppm
printf 'P2\n3 2\n15\n0 1 2\n13 14 15\n' > $f/ascii.pgm
printf 'P3\n2 1\n255\n255 0 0  0 255 0\n' > $f/ascii.ppm
python3 - "$f" <<'PY'
import struct, sys
d = sys.argv[1]
open(d + '/grey.pfm', 'wb').write(b'Pf\n3 2\n-1.0\n' + struct.pack('<6f', 1, 2.5, float('inf'), 0, -1, 7))
open(d + '/colour.pfm', 'wb').write(b'PF\n1 2\n1.0\n' + struct.pack('>6f', 1, 2, 3, 4, 5, 6))
PY

# genome files (the headers tools write, and genomes of each grammar)
f=$C/fuzz_genome
printf '# evokernels genome v1\n# kernel: stereo\n# cc: 9.0\n# device: NVIDIA H200\nBLOCK_W=128\n' > $f/config.genome
printf '# kernel: reg_deform\n\n' > $f/empty.genome
printf '# kernel: barracuda_exact\n# cc: sm_90\nnvrtc:maxrregcount=64 nvrtc:ptxas-O=2\n' > $f/options.genome
for t in stereo reg_deform barracuda_exact; do
  for g in bench/gi/runs/h200-2026-11-22/$t/*.genome; do cp "$g" "$f/$t-$(basename "$g")"; done
done

# checkpoint.json / generations.jsonl
f=$C/fuzz_checkpoint
g=$(grep -v '^#' bench/gi/runs/h200-2026-11-22/stereo/best.genome | head -1)
# a readable std::mt19937_64 state (312 words and the index) that fits the harness's 4 KiB max_len
rng="$(printf '0 %.0s' $(seq 312))312"
cat > $f/checkpoint.json <<JSON
{"version": 1, "next_generation": 2, "rng": "$rng",
 "population": [{"genome": "$g", "status": "ok", "fitness": 0.5, "time_ms": 0.5, "ticks": 1000.0, "sms": 132,
                 "penalty": 0.0, "summary": "0 bad"},
                {"genome": "", "status": "crash", "fitness": null, "time_ms": 0.0, "ticks": 0.0, "sms": 0,
                 "penalty": 0.0, "summary": "worker process died"}],
 "tabu": {"genotype": ["00ff", "1a2b3c4d5e6f7a8b"], "phenotype": ["01"], "code": []},
 "best": {"genome": "$g", "speedup": 1.5, "ms": 0.5, "ref_ms": 0.75},
 "history": [{"generation": 0, "case_seed": 1048576, "ref_ms": 0.75, "best_ms": 0.5, "best_speedup": 1.5,
              "evaluated": 2, "correct": 1, "best_genome": "$g"},
             {"generation": 1, "case_seed": 1048577, "ref_ms": 0.75, "best_ms": 0.5, "best_speedup": 1.5,
              "evaluated": 2, "correct": 1, "best_genome": "$g"}]}
JSON
printf '{"generation": 0, "case_seed": 1048576, "ref_ms": 0.75, "best_ms": 0.5, "best_genome": "BLOCK_W=128"}\n{"generation": 1}\n' > $f/generations.jsonl

# kernel sources for the grammar reader (ours, with the entry renamed to the harness's "k")
f=$C/fuzz_grammar
# (the real kernels are added at run time by fuzz/run.sh, not copied here)
printf '__global__ void k(int* a, int n) {\n//@gi begin\n  int i = threadIdx.x;\n  for (int j = 0; j < n; j++) {\n    a[i] += j;\n  }\n  if (i < n) a[i] = 0;\n//@gi end\n}\n' > $f/tiny.cu
du -sh "$C"; find "$C" -type f | wc -l
