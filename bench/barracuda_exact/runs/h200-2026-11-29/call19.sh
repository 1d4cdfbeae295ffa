#!/usr/bin/env bash
# Call 19 (one H200): the warp kernel's state in 8.2 KB of shared memory (25 warps an SM, was 17) and
# CUDA started while the index loads (build A = the working tree), against main (bce6c39) and against
# A without the 16,383-entry later pass (build C), same run: GPU tests of A; 3.09 Gbp genome, 10 M
# reads; eager (-l 1024 -n 0.04) main/A/C twice, aDNA A/C, modern main/A (BAM level 1, the default);
# records' md5 against calls 14-16; bwa on 200 k of eager, modern (and aDNA if time); the rig bench
# with its frames in /tmp and in /dev/shm.
set -uo pipefail
R=$OUT/r; mkdir -p $R
mkdir -p /tmp/hb; [ -d /tmp/hb/bundle ] || tar xzf .bundle-h/b.tgz -C /tmp/hb
B=/tmp/hb/bundle; . $B/env.sh /tmp/nv1 > /dev/null
V=/tmp/hb/v; mkdir -p $V
gunzip -c .bundle-h/barracuda_exact_main.gz > $V/main; gunzip -c .bundle-h/barracuda_exact_c.gz > $V/c; chmod +x $V/*
cp $B/bin/barracuda_exact $V/a
{ nvidia-smi; nproc; } > $R/nvidia-smi.txt 2>&1
T=$(nproc); t0=$(date +%s); L=$R/0-timeline.txt
tl() { echo "$1 at $(( $(date +%s) - t0 )) s" >> $L; }
el() { echo $(( $(date +%s) - t0 )); }
pack() { tar czf $OUT/r.tgz -C $OUT r 2>/dev/null; }
secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}'; }
W=/tmp/w; mkdir -p $W
s=$(date +%s.%N); bc_human_genome -t $T --seed 1 -o $W/h.fa 2> /dev/null; tl "genome $(secs $s) s"
s=$(date +%s.%N); barracuda_exact index $W/h.fa > /dev/null 2>&1; tl "index full $(secs $s) s"
( bc_adna_reads $W/h.fa 10000000 $W/a.fq.gz -t 8 --seed 1 2> /dev/null; echo ok > $W/a.done
  bc_adna_reads $W/h.fa 10000000 $W/m.fq.gz -t 8 --seed 2 --median 100 --sigma 0.02 --min-len 100 \
  --max-len 100 --deam 0 --deam-interior 0 2> /dev/null; echo ok > $W/m.done ) &
run_tests() {  # binary limit filter
  timeout $2 $B/bin/$1 --gtest_filter="$3" > $R/$1.log 2>&1
  tl "$1 exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $R/$1.log | tr '\n' ' ')"
}
run_tests barracuda_exact_gpu_tests 150 'BarracudaAlnSecondPassGpu.*:BarracudaAdnaMapGpu.*:BarracudaInexactGpu.*'
run_tests barracuda_exact_pipeline_gpu_tests 100 '*'
pack
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
  echo "  records md5 $(python3 .bundle-h/bam_hash.py $W/$n.bam 2>&1 | tail -1) (calls 14-16: $md5); size $(stat -c %s $W/$n.bam)" >> $L
  rm -f $W/$n.bam; pack
}
agree() {  # name reads-file ours-options bwa-options
  local n=$1 rd=$2 ours=$3 bo=$4
  zcat $W/$rd.fq.gz | head -800000 | gzip -1 > $W/$n.200k.fq.gz
  s=$(date +%s.%N)
  # shellcheck disable=SC2086
  $V/a map -t $T $ours $W/h.fa $W/$n.200k.fq.gz -o $W/$n.200k.sam 2> /dev/null; echo "$n ours(A) 200k exit $? $(secs $s) s" >> $L
  s=$(date +%s.%N); timeout 100 bwa aln -t $T $bo $W/h.fa $W/$n.200k.fq.gz > $W/b.sai 2> /dev/null; echo "$n bwa aln -t $T 200k exit $? $(secs $s) s" >> $L
  s=$(date +%s.%N); bwa samse $W/h.fa $W/b.sai $W/$n.200k.fq.gz > $W/b.sam 2> /dev/null; echo "$n bwa samse 200k $(secs $s) s" >> $L
  bc_sam_agree --label $n --ref $W/h.fa --list 5 $W/$n.200k.sam $W/b.sam > $R/agree-$n.txt 2>&1; head -3 $R/agree-$n.txt | tail -1 >> $L
  pack
}
while [ ! -f $W/a.done ]; do sleep 1; done; tl "aDNA reads"
full eager-main main a 6df1a7552255 $EG
full eager-a a a 6df1a7552255 $EG
full eager-c c a 6df1a7552255 $EG
full eager-main2 main a 6df1a7552255 $EG
full eager-a2 a a 6df1a7552255 $EG
full eager-c2 c a 6df1a7552255 $EG
while [ ! -f $W/m.done ]; do sleep 1; done
full modern-main main m 3f410e5003ad
full modern-a a m 3f410e5003ad
agree eager a "$EG" "-l 1024 -n 0.04"
agree modern m "" ""
zcat $W/a.fq.gz | head -4000 | gzip -1 > $W/k.fq.gz
s=$(date +%s.%N); bwa aln -t $T -l 1024 -n 0.01 -o 2 $W/h.fa $W/k.fq.gz > $W/k.sai 2> /dev/null; echo "bwa aln 1000 reads $(secs $s) s" >> $L
s=$(date +%s.%N); bwa samse $W/h.fa $W/k.sai $W/k.fq.gz > $W/k.sam 2> /dev/null; echo "bwa samse 1000 reads $(secs $s) s" >> $L
F='BM_rig_files/1920/1080/128/(0|1)/'
mount | grep -E " /tmp | / | /dev/shm " > $R/mounts.txt 2>&1
timeout 40 bench_stereo_rig --benchmark_filter="$F" --benchmark_counters_tabular=true > $R/rig-tmp.log 2>&1; tl "rig /tmp exit $?"
TMPDIR=/dev/shm timeout 40 bench_stereo_rig --benchmark_filter="$F" --benchmark_counters_tabular=true > $R/rig-shm.log 2>&1; tl "rig /dev/shm exit $?"
pack
[ $(el) -lt 440 ] && full adna-a a a e328aa02a15e $AD
[ $(el) -lt 495 ] && full adna-c c a e328aa02a15e $AD
[ $(el) -lt 490 ] && agree adna a "$AD" "-l 1024 -n 0.01 -o 2"
tl "done"; pack; cat $L; grep -h "BM_rig" $R/rig-*.log
