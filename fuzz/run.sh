#!/usr/bin/env bash
# libFuzzer runs of the harnesses in fuzz/ (built by `make fuzz` into BUILD_DIR/bin/).
#   bash fuzz/run.sh smoke BUILD_DIR [SECONDS]         each harness SECONDS (default 5) from its seeds
#   bash fuzz/run.sh long BUILD_DIR HARNESS RUNS [OUT] [MAX_SECONDS]
#                                                      one long run (nice -n 19), stats in OUT/HARNESS.*
#   bash fuzz/run.sh jobs BUILD_DIR HARNESS JOBS SECONDS [OUT]
#                                                      JOBS independent runs at once (seeds 1..JOBS, one
#                                                      shared corpus), SECONDS each; executions summed,
#                                                      stats in OUT/HARNESS.jobs.stats
# The repo's corpus is only read: new inputs go to a scratch corpus. A crash leaves its input as
# OUT/crash-* (smoke: in a temporary directory that is printed) and fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?smoke or long}
B=${2:?build dir}
HARNESSES="fuzz_fastx fuzz_bwa_index fuzz_nifti fuzz_netpbm fuzz_genome fuzz_checkpoint fuzz_grammar"
OPTS="-max_len=4096 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Extra seeds made at run time instead of kept as copies in the corpus: the grammar harness starts
# from every real kernel (entry renamed to the harness's "k"). Prints the folder, if any.
extra_seeds() {
  [ "$1" = fuzz_grammar ] || return 0
  local d
  d=$(mktemp -d)
  for k in kernels/original/*/*.cu tests/gi/toy_kernel.cu; do
    sed -E 's/(__global__ void )[A-Za-z_0-9]+\(/\1k(/' "$k" > "$d/$(basename "$k")"
  done
  echo "$d"
}

case $mode in
smoke)
  secs=${3:-5}
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  fail=0
  for h in $HARNESSES; do
    mkdir -p "$work/$h"
    extra=$(extra_seeds "$h")
    if "$B/bin/$h" $OPTS -max_total_time="$secs" -artifact_prefix="$work/$h-" "$work/$h" "fuzz/corpus/$h" $extra \
         > "$work/$h.log" 2>&1; then
      echo "fuzz smoke $h: ok ($(grep -o 'stat::number_of_executed_units: [0-9]*' "$work/$h.log" | grep -o '[0-9]*$') runs)"
    else
      echo "fuzz smoke $h: FAILED"; tail -40 "$work/$h.log"; fail=1
      trap - EXIT; echo "inputs and logs kept in $work"
    fi
  done
  exit $fail ;;
long)
  h=${3:?harness}
  runs=${4:?runs}
  out=${5:-fuzz-runs}
  cap=${6:-0}
  mkdir -p "$out/$h.corpus"
  # nice 19 on a busy machine: a unit can wait seconds for a CPU, so the hang limit is a minute
  OPTS=${OPTS/-timeout=10/-timeout=60}
  t0=$(date +%s)
  set +e
  extra=$(extra_seeds "$h")
  nice -n 19 "$B/bin/$h" $OPTS -runs="$runs" -max_total_time="$cap" -artifact_prefix="$out/$h-" "$out/$h.corpus" "fuzz/corpus/$h" $extra \
    > "$out/$h.log" 2>&1
  rc=$?
  set -e
  t1=$(date +%s)
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$out/$h.log" | grep -o '[0-9]*$' || echo 0)
  eps=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$out/$h.log" | grep -o '[0-9]*$' || echo 0)
  last=$(grep -E '^#[0-9]+' "$out/$h.log" | tail -1)
  cov=$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*' || echo ?)
  ft=$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*' || echo ?)
  crashes=$(ls "$out" | grep -cE "^$h-(crash|leak|oom|timeout)-" || true)  # not slow-unit-* (inputs over 10 s)
  printf '%s\texit=%s\texecutions=%s\texec_per_s=%s\tcov=%s\tft=%s\twall_s=%s\tcorpus=%s\tcrashes=%s\n' \
    "$h" "$rc" "$execs" "$eps" "$cov" "$ft" "$((t1 - t0))" "$(ls "$out/$h.corpus" | wc -l)" "$crashes" \
    | tee "$out/$h.stats"
  exit $rc ;;
jobs)
  h=${3:?harness}
  n=${4:?jobs}
  secs=${5:?seconds}
  out=${6:-fuzz-runs}
  mkdir -p "$out/$h.corpus"
  OPTS=${OPTS/-timeout=10/-timeout=60}
  extra=$(extra_seeds "$h")
  t0=$(date +%s)
  set +e
  for j in $(seq 1 "$n"); do
    "$B/bin/$h" $OPTS -seed="$j" -max_total_time="$secs" -artifact_prefix="$out/$h-" "$out/$h.corpus" "fuzz/corpus/$h" $extra \
      > "$out/$h.job$j.log" 2>&1 &
  done
  rc=0
  for j in $(seq 1 "$n"); do wait -n || rc=1; done
  set -e
  t1=$(date +%s)
  # awk, not grep: no job reaching its final stats (e.g. a harness that cannot start) must still
  # print the stats line (grep's exit 1 would end the script under pipefail)
  execs=$(cat "$out/$h".job*.log | awk '/stat::number_of_executed_units:/ {s += $NF} END {print s + 0}')
  done_jobs=$(cat "$out/$h".job*.log | grep -c 'stat::number_of_executed_units' || true)
  crashes=$(ls "$out" | grep -cE "^$h-(crash|leak|oom|timeout)-" || true)  # not slow-unit-* (inputs over 10 s)
  printf '%s\texit=%s\tjobs=%s\tjobs_finished=%s\texecutions=%s\twall_s=%s\tcorpus=%s\tcrashes=%s\n' \
    "$h" "$rc" "$n" "$done_jobs" "$execs" "$((t1 - t0))" "$(ls "$out/$h.corpus" | wc -l)" "$crashes" \
    | tee "$out/$h.jobs.stats"
  exit $rc ;;
*) echo "usage: $0 smoke|long|jobs ..." >&2; exit 2 ;;
esac
