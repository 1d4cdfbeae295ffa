#!/usr/bin/env bash
# The inexact search on the GPU host, from the bundle (`make bundle`), one mode per device call:
#   tests  the inexact GPU tests (kernel vs CPU read by read, NVRTC builds, GI evaluation, the tool's
#          GPU path = CPU path single and paired);
#   ecoli  bench_barracuda_exact's inexact benchmarks on E. coli: 1 M art_illumina reads (simulated
#          there; READS to change), the kernel alone, the mapping stage GPU and CPU, end to end GPU and
#          CPU, `bwa aln -t N` + `bwa samse` on the same reads and index in the same run, 500 k pairs
#          end to end and `bwa aln` x2 + `bwa sampe`; then our GPU records against bwa's on those reads
#          and pairs (bc_sam_agree);
#   MBP    (a number, e.g. 500) the same single-end benchmarks on a random genome of MBP Mbp indexed
#          in-process (reads from an error model; ~3 minutes of indexing for 500).
# Run from the repository root. Usage: inexact_device.sh BUNDLE OUTDIR tests|ecoli|MBP [READS]
set -uo pipefail
b=$(cd "${1:?usage: inexact_device.sh BUNDLE OUTDIR tests|ecoli|MBP [READS]}" && pwd)
out=${2:?OUTDIR}
mode=${3:?MODE}
reads=${4:-1000000}
mkdir -p "$out"
out=$(cd "$out" && pwd)
W=$(mktemp -d /tmp/inexact-dev.XXXXXX)
. "$b/env.sh" "$W/nvrtc-cache"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$out/gpu.txt" 2>&1
echo "host cores: $(nproc)" >> "$out/gpu.txt"

case "$mode" in
tests)
  barracuda_exact_gpu_tests --gtest_filter='BarracudaInexactGpu.*' > "$out/gpu_tests.log" 2>&1
  echo "gpu tests: exit $?, $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/gpu_tests.log" | tr '\n' ' ')" | tee "$out/summary.txt"
  ;;
ecoli)
  TMPDIR=$W BC_BENCH_KEEP=1 BC_BENCH_INEXACT_READS=$reads bench_barracuda_exact \
    --benchmark_filter='Inexact.*/ecoli|BwaAlnPeer/ecoli|BwaSampePeer' \
    --benchmark_out="$out/bench_ecoli.json" --benchmark_out_format=json --benchmark_counters_tabular=true \
    > "$out/bench_ecoli.log" 2>&1
  echo "bench ecoli: exit $?" | tee "$out/summary.txt"
  set_dir=$(ls -d "$W"/bench_barracuda_inexact_ecoli_* 2> /dev/null | head -1)
  if [ -n "$set_dir" ] && [ -f "$set_dir/bwa.sam" ]; then
    barracuda_exact map --backend gpu -v --json "$set_dir/ref.fa" "$set_dir/reads.fq.gz" -o "$W/gpu.sam" \
      > "$out/map_gpu.json" 2> "$out/map_gpu.log"
    bc_sam_agree --label "1 M ART E. coli 100 bp, GPU backend vs bwa aln | samse" --list 50 "$W/gpu.sam" "$set_dir/bwa.sam" \
      > "$out/agreement.txt" 2>&1
    echo "agreement: exit $?" | tee -a "$out/summary.txt"
    head -2 "$out/agreement.txt" | tee -a "$out/summary.txt"
  fi
  if [ -n "$set_dir" ] && [ -f "$set_dir/bwa_pairs.sam" ]; then
    barracuda_exact map --backend gpu -v --json "$set_dir/ref.fa" "$set_dir/pair1.fq.gz" "$set_dir/pair2.fq.gz" \
      -o "$W/gpu_pairs.sam" > "$out/map_gpu_pairs.json" 2> "$out/map_gpu_pairs.log"
    bc_sam_agree --label "500 k ART E. coli 100 bp pairs, GPU backend vs bwa aln x2 | sampe" --list 50 "$W/gpu_pairs.sam" \
      "$set_dir/bwa_pairs.sam" > "$out/agreement_pairs.txt" 2>&1
    echo "agreement pairs: exit $?" | tee -a "$out/summary.txt"
    head -2 "$out/agreement_pairs.txt" | tee -a "$out/summary.txt"
  fi
  ;;
*[!0-9]* | "")
  echo "inexact_device.sh: mode must be tests, ecoli or a genome size in Mbp" >&2
  exit 2
  ;;
*)
  TMPDIR=$W BC_BENCH_GENOME_MBP=$mode BC_BENCH_INEXACT_READS=$reads bench_barracuda_exact \
    --benchmark_filter="Inexact.*/random$mode|BwaAlnPeer/random$mode" \
    --benchmark_out="$out/bench_random$mode.json" --benchmark_out_format=json --benchmark_counters_tabular=true \
    > "$out/bench_random$mode.log" 2>&1
  echo "bench random$mode: exit $?" | tee "$out/summary.txt"
  ;;
esac
rm -rf "$W"
