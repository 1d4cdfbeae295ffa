#!/usr/bin/env bash
# Call 12 (one H200): GPU tests (gi budget/energy; the kernel clean-up in alt/clean), then the 3.09 Gbp
# genome, 10 M aDNA reads: streams 2/4/8 and batches of 1 M reads, BAMs compared with streams 2.
set -uo pipefail
R=$OUT/r; mkdir -p $R
S=/tmp/hb; mkdir -p $S; [ -d $S/s ] || tar xzf .bundle-h/b.tgz -C $S
B=$S/s; . $B/env.sh /tmp/nv1 > /dev/null
{ nvidia-smi; nproc; cat $B/COMMIT; } > $R/nvidia-smi.txt 2>&1
T=$(nproc); t0=$(date +%s); L=$OUT/0-timeline.txt
tl() { echo "$1 at $(( $(date +%s) - t0 )) s" >> $L; }
el() { echo $(( $(date +%s) - t0 )); }
pack() { tar czf $OUT/r.tgz -C $OUT r 2>/dev/null; }
secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}'; }
run_tests() {  # dir binary limit filter
  timeout $3 $1/$2 --gtest_filter="$4" > $R/$2.log 2>&1; local rc=$?
  tl "$2 exit $rc $(grep -E '^\[  (PASSED|FAILED) ' $R/$2.log | tr '\n' ' ') $(grep -E '^\[  FAILED  \] [A-Za-z]' $R/$2.log | head -5 | tr '\n' ' ')"
  pack
}
W=/tmp/w; mkdir -p $W
( bc_human_genome -t 8 --seed 1 -o $W/h.fa 2> /dev/null; echo ok > $W/gen.done ) &
gen=$!
EVK_BIN_DIR=$B/alt/clean run_tests $B/alt/clean barracuda_exact_gpu_tests 170 'BarracudaAlnSecondPassGpu.*:BarracudaAdnaMapGpu.*:BarracudaInexactGpu.*'
EVK_BIN_DIR=$B/alt/clean run_tests $B/alt/clean barracuda_exact_pipeline_gpu_tests 100 'BarracudaPipelineGpu.Inexact*'
run_tests $B/bin gi_gpu_tests 150 'GiCli.EvolveKeepsToAShortBudget:GiEnergyCli.*'
wait $gen
s=$(date +%s.%N); barracuda_exact index $W/h.fa > /dev/null 2>&1; tl "index full $(secs $s) s"
s=$(date +%s.%N); bc_adna_reads $W/h.fa 10000000 $W/a.fq.gz -t $T --seed 1 2> /dev/null; tl "10M aDNA reads $(secs $s) s"
jl() { python3 -c "
import json,sys; j=json.load(open('$1')); s=j.get('seconds',{})
print('total %.2f' % s.get('total',0), 'later %.2f' % s.get('later_passes',0), 'kernel %.2f' % s.get('kernel',0), 'passes', [(p['reads'], round(p['seconds'],2)) for p in j.get('gpu_later_passes',[])], 'cpu', j.get('gpu_fallback_reads'), 'rss', round(j.get('peak_rss_mib',0)))" 2>&1 | cut -c1-400; }
AD="--seed-len 1024 --max-diff 0.01 --max-gap-open 2"
EG="--seed-len 1024 --max-diff 0.04"
runmap() {  # name options...
  local n=$1; shift
  if [ $(el) -gt 470 ]; then tl "$n skipped (time)"; return; fi
  local s=$(date +%s.%N)
  timeout 150 barracuda_exact map -v --json -t $T "$@" $W/h.fa $W/a.fq.gz -o $W/$n.bam > $R/$n.json 2> $R/$n.log
  echo "$n exit $? $(secs $s) s; $(jl $R/$n.json)" >> $L
  [ -f $W/s2.bam ] && [ $n != s2 ] && { cmp -s $W/s2.bam $W/$n.bam && echo "  $n.bam = s2.bam" >> $L || echo "  $n.bam DIFFERS from s2.bam" >> $L; }
  [ $n != s2 ] && rm -f $W/$n.bam
  pack
}
runmap s2 $AD
runmap s4 $AD --streams 4
runmap s8 $AD --streams 8
runmap b1m $AD --batch-reads 1048576
runmap e8 $EG --streams 8
tl "done"; pack; cat $L
