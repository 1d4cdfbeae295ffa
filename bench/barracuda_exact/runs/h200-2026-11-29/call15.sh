#!/usr/bin/env bash
# Call 15 (one H200): GPU tests of main since 6730b95 (read-ahead, index load, stream plan, batch cuts);
# 3.09 Gbp genome, 10 M reads at the three settings with map's defaults and --trace (each batch's
# stages); records' md5 against call 14's; a few batch-size variants where time is left.
set -uo pipefail
R=$OUT/r; mkdir -p $R
B=$PWD/bundle; . $B/env.sh /tmp/nv1 > /dev/null
{ nvidia-smi; nproc; lscpu | head -20; git log -1 --format=%H; } > $R/nvidia-smi.txt 2>&1
T=$(nproc); t0=$(date +%s); L=$R/0-timeline.txt
tl() { echo "$1 at $(( $(date +%s) - t0 )) s" >> $L; }
el() { echo $(( $(date +%s) - t0 )); }
pack() { tar czf $OUT/r.tgz -C $OUT r 2>/dev/null; }
secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}'; }
run_tests() {  # binary limit filter
  timeout $2 $B/bin/$1 --gtest_filter="$3" > $R/$1.log 2>&1; local rc=$?
  tl "$1 exit $rc $(grep -E '^\[  (PASSED|FAILED) ' $R/$1.log | tr '\n' ' ') $(grep -E '^\[  FAILED  \] [A-Za-z]' $R/$1.log | head -5 | tr '\n' ' ')"
  pack
}
W=/tmp/w; mkdir -p $W
( bc_human_genome -t 8 --seed 1 -o $W/h.fa 2> /dev/null; echo ok > $W/gen.done ) &
gen=$!
run_tests barracuda_exact_pipeline_gpu_tests 150 '*'
run_tests barracuda_exact_gpu_tests 120 'BarracudaAlnSecondPassGpu.*:BarracudaAdnaMapGpu.*:BarracudaInexactGpu.*'
wait $gen
s=$(date +%s.%N); barracuda_exact index $W/h.fa > /dev/null 2>&1; tl "index full $(secs $s) s"
s=$(date +%s.%N); bc_adna_reads $W/h.fa 10000000 $W/a.fq.gz -t $T --seed 1 2> /dev/null; tl "10M aDNA reads $(secs $s) s"
( bc_adna_reads $W/h.fa 10000000 $W/m.fq.gz -t 8 --seed 2 --median 100 --sigma 0.02 --min-len 100 \
  --max-len 100 --deam 0 --deam-interior 0 2> /dev/null; echo ok > $W/m.done ) &
jl() { python3 -c "
import json,sys; j=json.load(open('$1')); s=j.get('seconds',{})
print('total %.2f' % s.get('total',0), 'index %.2f' % s.get('index',0), 'inflate %.2f' % s.get('inflate',0), 'later %.2f' % s.get('later_passes',0), 'kernel %.2f' % s.get('kernel',0), 'passes', [(p['reads'], round(p['seconds'],2)) for p in j.get('gpu_later_passes',[])], 'cpu', j.get('gpu_fallback_reads'), 'rss', round(j.get('peak_rss_mib',0)))" 2>&1 | cut -c1-300; }
AD="--seed-len 1024 --max-diff 0.01 --max-gap-open 2"
EG="--seed-len 1024 --max-diff 0.04"
full() {  # name reads-file md5 extra-options...
  local n=$1 rd=$2 md5=$3; shift 3
  s=$(date +%s.%N)
  timeout 150 barracuda_exact map -v --json -t $T "$@" --trace $R/trace-$n.tsv $W/h.fa $W/$rd.fq.gz -o $W/$n.bam > $R/full-$n.json 2> $R/full-$n.log
  echo "full-$n exit $? $(secs $s) s; $(jl $R/full-$n.json)" >> $L
  echo "  records md5 $(python3 .bundle-h/bam_hash.py $W/$n.bam 2>&1 | tail -1) (call 14: $md5)" >> $L
  rm -f $W/$n.bam; pack
}
full adna a e328aa02a15e $AD
full eager a 6df1a7552255 $EG
while [ ! -f $W/m.done ]; do sleep 1; done
full modern m 3f410e5003ad
[ $(el) -lt 420 ] && full eager-b512k a 6df1a7552255 $EG --batch-reads 524288
[ $(el) -lt 450 ] && full modern-b512k m 3f410e5003ad --batch-reads 524288
[ $(el) -lt 480 ] && full modern-s6 m 3f410e5003ad --streams 6
tl "done"; pack; cat $L
