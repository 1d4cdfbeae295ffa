#!/usr/bin/env bash
# The map pipeline on a GPU host, from an OpenCV-free bundle (`make bundle`), in one device call:
#   1. barracuda_exact_pipeline_gpu_tests (streams and every GPU of the host against the CPU backend)
#      and barracuda_exact_gpu_tests without the long kernel-space sweep and the inexact kernel's tests
#      (the exact kernel's own suite; the inexact ones: inexact_device.sh tests);
#   2. bench_barracuda_exact: the kernel at its default, then `map` end to end FASTQ.gz -> BAM on
#      READS reads (GPU, every GPU, GPU with BAM level 1, CPU backend; BGZF and gzip input), each
#      stage alone with its core cost, and bwa aln -n 0 -o 0 -t N + samse on the same reads; the
#      summary (where the limit is) ends bench.log.
# Logs, JSON and summary.txt go to OUTDIR. Run from the repository root (the device tool's copy);
# MODE tests (~2 min), bench (~5 min for 10 M reads) or all (both; over 10 minutes on one call):
#   bash bench/barracuda_exact/pipeline_gpu.sh bundle "$OUT" tests
#   bash bench/barracuda_exact/pipeline_gpu.sh bundle "$OUT" bench [READS] [STAGE_READS]
set -uo pipefail
b=$(cd "${1:?usage: pipeline_gpu.sh BUNDLE OUTDIR tests|bench|all [READS] [STAGE_READS]}" && pwd)
out=${2:?OUTDIR}
mode=${3:-all}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export BC_BENCH_READS=${4:-10000000} BC_BENCH_STAGE_READS=${5:-2000000}
W=$(mktemp -d /tmp/bc-pipe.XXXXXX)
export TMPDIR=$W  # the benchmark's data set and BAMs (a few GB for 10 M reads)
. "$b/env.sh" "$W/nvrtc-cache"
summary="$out/summary.txt"
{ nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,memory.total --format=csv
  echo "host cores: $(nproc); $(grep -m1 'model name' /proc/cpuinfo)"; free -g | head -2; } > "$summary" 2>&1
run() {  # NAME CAP_S CMD...
  local name=$1 cap=$2
  shift 2
  local t0=$(date +%s)
  timeout "$cap" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc in $(( $(date +%s) - t0 )) s" >> "$summary"
  grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/$name.log" >> "$summary" 2>/dev/null
  return $rc
}
if [ "$mode" != bench ]; then
  run pipeline_gpu_tests 240 barracuda_exact_pipeline_gpu_tests --gtest_output="json:$out/pipeline_gpu_tests.json"
  run gpu_tests 240 barracuda_exact_gpu_tests --gtest_filter='-*KernelSpace*:BarracudaInexactGpu.*' --gtest_output="json:$out/gpu_tests.json"
fi
if [ "$mode" != tests ]; then
  run bench 560 bench_barracuda_exact --benchmark_filter='BM_Kernel/ecoli/default|BM_EndToEnd|BM_Stage|BM_BwaPeer' \
    --benchmark_counters_tabular=true --benchmark_out="$out/bench.json" --benchmark_out_format=json
  sed -n '/^pipeline summary/,$p' "$out/bench.log" >> "$summary"
fi
rm -rf "$W"
cat "$summary"
