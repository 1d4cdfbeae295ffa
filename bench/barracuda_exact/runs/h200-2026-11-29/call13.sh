#!/usr/bin/env bash
# Call 13 (one H200): the index shared by a GPU's streams, the stack budget split among them; 3.09 Gbp,
# 10 M reads at the three settings: streams 4/8, batches of 1 M reads; records' md5 compared.
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
W=/tmp/w; mkdir -p $W
s=$(date +%s.%N); bc_human_genome -t $T --seed 1 -o $W/h.fa 2> /dev/null; tl "genome $(secs $s) s"
s=$(date +%s.%N); barracuda_exact index $W/h.fa > /dev/null 2>&1; tl "index full $(secs $s) s"
s=$(date +%s.%N); bc_adna_reads $W/h.fa 10000000 $W/a.fq.gz -t $T --seed 1 2> /dev/null; tl "10M aDNA reads $(secs $s) s"
( bc_adna_reads $W/h.fa 10000000 $W/m.fq.gz -t 8 --seed 2 --median 100 --sigma 0.02 --min-len 100 \
  --max-len 100 --deam 0 --deam-interior 0 2> /dev/null; echo ok > $W/m.done ) &
jl() { python3 -c "
import json,sys; j=json.load(open('$1')); s=j.get('seconds',{})
print('total %.2f' % s.get('total',0), 'later %.2f' % s.get('later_passes',0), 'kernel %.2f' % s.get('kernel',0), 'passes', [(p['reads'], round(p['seconds'],2)) for p in j.get('gpu_later_passes',[])], 'cpu', j.get('gpu_fallback_reads'), 'rss', round(j.get('peak_rss_mib',0)))" 2>&1 | cut -c1-300; }
AD="--seed-len 1024 --max-diff 0.01 --max-gap-open 2"
EG="--seed-len 1024 --max-diff 0.04"
runmap() {  # name reads options...
  local n=$1 rd=$2; shift 2
  if [ $(el) -gt 520 ]; then tl "$n skipped (time)"; return; fi
  [ $rd = m ] && while [ ! -f $W/m.done ]; do sleep 1; done
  local s=$(date +%s.%N)
  timeout 120 barracuda_exact map -v --json -t $T "$@" $W/h.fa $W/$rd.fq.gz -o $W/$n.bam > $R/$n.json 2> $R/$n.log
  echo "$n exit $? $(secs $s) s; $(jl $R/$n.json)" >> $L
  echo "  records md5 $(python3 .bundle-h/bam_hash.py $W/$n.bam 2>&1 | tail -1)" >> $L
  rm -f $W/$n.bam; pack
}
runmap ad-s4 a $AD --streams 4
runmap ad-s8 a $AD --streams 8
runmap ad-s4b a $AD --streams 4 --batch-reads 1048576
runmap ad-s8b a $AD --streams 8 --batch-reads 1048576
runmap eg-s8b a $EG --streams 8 --batch-reads 1048576
runmap mo-s8b m --streams 8 --batch-reads 1048576
runmap eg-s2 a $EG
runmap mo-s2 m
tl "done"; pack; cat $L
