#!/usr/bin/env bash
# Call 20 (one H200): (1) why the rig benchmark reads slowly on this host: fresh pages against reused
# ones (memdiag, memdiag2: the probes in bench/stereo/runs/h200-2026-11-29/call20), the rig benchmark as built and
# with glibc keeping freed memory (valid tunables: mmap threshold at its 32 MiB maximum, no trimming);
# (2) the later passes' room: builds A (working tree: warp state 8.2 KB, CUDA started during the
# index load), E (A + stacks up to 32 GiB a stream, three quarters of the free memory), F (A + the
# first later pass at 65,535 entries), EF; eager twice for A and EF, once for E and F; aDNA A and EF;
# bwa on 200 k eager and aDNA reads.
set -uo pipefail
R=$OUT/r; mkdir -p $R
mkdir -p /tmp/hb; [ -d /tmp/hb/bundle ] || tar xzf .bundle-h/b.tgz -C /tmp/hb
B=/tmp/hb/bundle; . $B/env.sh /tmp/nv1 > /dev/null
V=/tmp/hb/v; mkdir -p $V
for v in e f ef; do gunzip -c .bundle-h/barracuda_exact_$v.gz > $V/$v; done; cp $B/bin/barracuda_exact $V/a; chmod +x $V/*
T=$(nproc); t0=$(date +%s); L=$R/0-timeline.txt
tl() { echo "$1 at $(( $(date +%s) - t0 )) s" >> $L; }
el() { echo $(( $(date +%s) - t0 )); }
pack() { tar czf $OUT/r.tgz -C $OUT r 2>/dev/null; }
secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}'; }
{ ./.bundle-h/memdiag; ./.bundle-h/memdiag2 /tmp; ./.bundle-h/memdiag2 /dev/shm; uname -r; ldd --version | head -1; cat /proc/sys/vm/overcommit_memory; grep -E "MemTotal|MemFree" /proc/meminfo; } > $R/memdiag.txt 2>&1
tl "memdiag"
F='BM_rig_files/1920/1080/128/(0|1)/'
timeout 40 bench_stereo_rig --benchmark_filter="$F" --benchmark_counters_tabular=true > $R/rig-default.log 2>&1; tl "rig default exit $?"
GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=17179869184 \
  timeout 40 bench_stereo_rig --benchmark_filter="$F" --benchmark_counters_tabular=true > $R/rig-keep.log 2>&1; tl "rig keep exit $?"
timeout 40 bench_stereo_rig --benchmark_filter="$F" --benchmark_counters_tabular=true > $R/rig-default2.log 2>&1; tl "rig default2 exit $?"
pack
W=/tmp/w; mkdir -p $W
s=$(date +%s.%N); bc_human_genome -t $T --seed 1 -o $W/h.fa 2> /dev/null; tl "genome $(secs $s) s"
s=$(date +%s.%N); barracuda_exact index $W/h.fa > /dev/null 2>&1; tl "index full $(secs $s) s"
s=$(date +%s.%N); bc_adna_reads $W/h.fa 10000000 $W/a.fq.gz -t $T --seed 1 2> /dev/null; tl "10M aDNA reads $(secs $s) s"
jl() { python3 -c "
import json,sys; j=json.load(open('$1')); s=j.get('seconds',{})
print('total %.2f' % s.get('total',0), 'index %.2f' % s.get('index',0), 'write %.2f' % s.get('write',0), 'later %.2f' % s.get('later_passes',0), 'kernel %.2f' % s.get('kernel',0), 'passes', [(p['reads'], round(p['seconds'],2)) for p in j.get('gpu_later_passes',[])], 'cpu', j.get('gpu_fallback_reads'), 'rss', round(j.get('peak_rss_mib',0)))" 2>&1 | cut -c1-300; }
AD="--seed-len 1024 --max-diff 0.01 --max-gap-open 2"
EG="--seed-len 1024 --max-diff 0.04"
full() {  # name build reads-file md5 extra-options...
  local n=$1 v=$2 rd=$3 md5=$4; shift 4
  s=$(date +%s.%N)
  timeout 150 $V/$v map -v --json -t $T "$@" --trace $R/trace-$n.tsv $W/h.fa $W/$rd.fq.gz -o $W/$n.bam > $R/full-$n.json 2> $R/full-$n.log
  echo "full-$n exit $? $(secs $s) s; $(jl $R/full-$n.json)" >> $L
  echo "  records md5 $(python3 .bundle-h/bam_hash.py $W/$n.bam 2>&1 | tail -1) (calls 14-19: $md5)" >> $L
  rm -f $W/$n.bam; pack
}
bwa200() {  # name bwa-options
  local n=$1 bo=$2
  zcat $W/a.fq.gz | head -800000 | gzip -1 > $W/$n.200k.fq.gz
  s=$(date +%s.%N); timeout 100 bwa aln -t $T $bo $W/h.fa $W/$n.200k.fq.gz > $W/b.sai 2> /dev/null; echo "$n bwa aln -t $T 200k exit $? $(secs $s) s" >> $L
  s=$(date +%s.%N); bwa samse $W/h.fa $W/b.sai $W/$n.200k.fq.gz > $W/b.sam 2> /dev/null; echo "$n bwa samse 200k $(secs $s) s" >> $L
  pack
}
full eager-a a a 6df1a7552255 $EG
full eager-ef ef a 6df1a7552255 $EG
full eager-e e a 6df1a7552255 $EG
full eager-f f a 6df1a7552255 $EG
full eager-a2 a a 6df1a7552255 $EG
full eager-ef2 ef a 6df1a7552255 $EG
bwa200 eager "-l 1024 -n 0.04"
[ $(el) -lt 430 ] && full adna-a a a e328aa02a15e $AD
[ $(el) -lt 495 ] && full adna-ef ef a e328aa02a15e $AD
[ $(el) -lt 520 ] && bwa200 adna "-l 1024 -n 0.01 -o 2"
zcat $W/a.fq.gz | head -4000 | gzip -1 > $W/k.fq.gz
s=$(date +%s.%N); bwa aln -t $T -l 1024 -n 0.01 -o 2 $W/h.fa $W/k.fq.gz > $W/k.sai 2> /dev/null; echo "bwa aln 1000 reads $(secs $s) s" >> $L
s=$(date +%s.%N); bwa samse $W/h.fa $W/k.sai $W/k.fq.gz > $W/k.sam 2> /dev/null; echo "bwa samse 1000 reads $(secs $s) s" >> $L
tl "done"; pack; cat $L; cat $R/memdiag.txt; grep -h "BM_rig" $R/rig-*.log
