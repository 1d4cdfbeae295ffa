#!/usr/bin/env bash
# Call 16 (one H200): BAM blocks compressed on the task pool (io/bgzf_blocks.hpp) and --trace; the
# pipeline GPU tests; 3.09 Gbp genome, 10 M reads at the three settings, batches of 1 M (the default)
# and 512 k, each with --trace; records' md5 against calls 14/15; bwa aln -t 16 + samse on 200 k of
# each setting in the same run, agreement; bwa's fixed cost.
set -uo pipefail
R=$OUT/r; mkdir -p $R
mkdir -p /tmp/hb; [ -d /tmp/hb/bundle ] || tar xzf .bundle-h/b.tgz -C /tmp/hb
B=/tmp/hb/bundle; . $B/env.sh /tmp/nv1 > /dev/null
{ nvidia-smi; nproc; git log -1 --format=%H; } > $R/nvidia-smi.txt 2>&1
T=$(nproc); t0=$(date +%s); L=$R/0-timeline.txt
tl() { echo "$1 at $(( $(date +%s) - t0 )) s" >> $L; }
el() { echo $(( $(date +%s) - t0 )); }
pack() { tar czf $OUT/r.tgz -C $OUT r 2>/dev/null; }
secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}'; }
W=/tmp/w; mkdir -p $W
( bc_human_genome -t 8 --seed 1 -o $W/h.fa 2> /dev/null; echo ok > $W/gen.done ) &
gen=$!
timeout 150 $B/bin/barracuda_exact_pipeline_gpu_tests > $R/pipeline_gpu_tests.log 2>&1
tl "barracuda_exact_pipeline_gpu_tests exit $? $(grep -E '^\[  (PASSED|FAILED) ' $R/pipeline_gpu_tests.log | tr '\n' ' ')"
wait $gen
s=$(date +%s.%N); barracuda_exact index $W/h.fa > /dev/null 2>&1; tl "index full $(secs $s) s"
s=$(date +%s.%N); bc_adna_reads $W/h.fa 10000000 $W/a.fq.gz -t $T --seed 1 2> /dev/null; tl "10M aDNA reads $(secs $s) s"
( bc_adna_reads $W/h.fa 10000000 $W/m.fq.gz -t 8 --seed 2 --median 100 --sigma 0.02 --min-len 100 \
  --max-len 100 --deam 0 --deam-interior 0 2> /dev/null; echo ok > $W/m.done ) &
jl() { python3 -c "
import json,sys; j=json.load(open('$1')); s=j.get('seconds',{})
print('total %.2f' % s.get('total',0), 'index %.2f' % s.get('index',0), 'write %.2f' % s.get('write',0), 'later %.2f' % s.get('later_passes',0), 'kernel %.2f' % s.get('kernel',0), 'passes', [(p['reads'], round(p['seconds'],2)) for p in j.get('gpu_later_passes',[])], 'cpu', j.get('gpu_fallback_reads'), 'rss', round(j.get('peak_rss_mib',0)))" 2>&1 | cut -c1-300; }
AD="--seed-len 1024 --max-diff 0.01 --max-gap-open 2"
EG="--seed-len 1024 --max-diff 0.04"
full() {  # name reads-file md5 extra-options...
  local n=$1 rd=$2 md5=$3; shift 3
  s=$(date +%s.%N)
  timeout 150 barracuda_exact map -v --json -t $T "$@" --trace $R/trace-$n.tsv $W/h.fa $W/$rd.fq.gz -o $W/$n.bam > $R/full-$n.json 2> $R/full-$n.log
  echo "full-$n exit $? $(secs $s) s; $(jl $R/full-$n.json)" >> $L
  echo "  records md5 $(python3 .bundle-h/bam_hash.py $W/$n.bam 2>&1 | tail -1) (calls 14/15: $md5)" >> $L
  rm -f $W/$n.bam; pack
}
agree() {  # name reads-file ours-options bwa-options
  local n=$1 rd=$2 ours=$3 bo=$4
  zcat $W/$rd.fq.gz | head -800000 | gzip -1 > $W/$n.200k.fq.gz
  s=$(date +%s.%N)
  # shellcheck disable=SC2086
  barracuda_exact map -t $T $ours $W/h.fa $W/$n.200k.fq.gz -o $W/$n.200k.sam 2> /dev/null; echo "$n ours 200k exit $? $(secs $s) s" >> $L
  s=$(date +%s.%N); timeout 100 bwa aln -t $T $bo $W/h.fa $W/$n.200k.fq.gz > $W/b.sai 2> /dev/null; echo "$n bwa aln -t $T 200k exit $? $(secs $s) s" >> $L
  s=$(date +%s.%N); bwa samse $W/h.fa $W/b.sai $W/$n.200k.fq.gz > $W/b.sam 2> /dev/null; echo "$n bwa samse 200k $(secs $s) s" >> $L
  bc_sam_agree --label $n --ref $W/h.fa --list 5 $W/$n.200k.sam $W/b.sam > $R/agree-$n.txt 2>&1; head -3 $R/agree-$n.txt | tail -1 >> $L
  pack
}
full adna a e328aa02a15e $AD
full adna-b512k a e328aa02a15e $AD --batch-reads 524288
full eager a 6df1a7552255 $EG
full eager-b512k a 6df1a7552255 $EG --batch-reads 524288
while [ ! -f $W/m.done ]; do sleep 1; done
full modern m 3f410e5003ad
full modern-b512k m 3f410e5003ad --batch-reads 524288
agree adna a "$AD" "-l 1024 -n 0.01 -o 2"
agree eager a "$EG" "-l 1024 -n 0.04"
agree modern m "" ""
zcat $W/a.fq.gz | head -4000 | gzip -1 > $W/k.fq.gz
s=$(date +%s.%N); bwa aln -t $T -l 1024 -n 0.01 -o 2 $W/h.fa $W/k.fq.gz > $W/k.sai 2> /dev/null; echo "bwa aln 1000 reads $(secs $s) s" >> $L
s=$(date +%s.%N); bwa samse $W/h.fa $W/k.sai $W/k.fq.gz > $W/k.sam 2> /dev/null; echo "bwa samse 1000 reads $(secs $s) s" >> $L
tl "done"; pack; cat $L
