#!/usr/bin/env bash
# Call 21 (one H200): (1) stereo with the reader's 16->8-bit copy and the depth table (working tree):
# stereo_gpu_tests; the rig benchmark as on main (bundle) and new, same run, 1080p/128 and 4K/256;
# (2) the warp kernel's records ahead (WARP_STEPS 32 = build A, 16, 8): eager twice each, records'
# md5 against calls 14-20; aDNA for A and the best if one gains.
set -uo pipefail
R=$OUT/r; mkdir -p $R
mkdir -p /tmp/hb; [ -d /tmp/hb/bundle ] || tar xzf .bundle-h/b.tgz -C /tmp/hb
B=/tmp/hb/bundle; . $B/env.sh /tmp/nv1 > /dev/null
N=/tmp/hb/new; mkdir -p $N; tar xzf .bundle-h/stereo_new.tgz -C $N
V=/tmp/hb/v; mkdir -p $V
for v in ws16 ws8; do gunzip -c .bundle-h/barracuda_exact_$v.gz > $V/$v; done; cp $B/bin/barracuda_exact $V/a; chmod +x $V/*
T=$(nproc); t0=$(date +%s); L=$R/0-timeline.txt
tl() { echo "$1 at $(( $(date +%s) - t0 )) s" >> $L; }
el() { echo $(( $(date +%s) - t0 )); }
pack() { tar czf $OUT/r.tgz -C $OUT r 2>/dev/null; }
secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}'; }
timeout 150 $N/stereo_gpu_tests > $R/stereo_gpu_tests.log 2>&1
tl "stereo_gpu_tests (new) exit $? $(grep -E '^\[  (PASSED|FAILED) ' $R/stereo_gpu_tests.log | tr '\n' ' ')"
F1='BM_rig_files/1920/1080/128/(0|1)/'
F4='BM_rig_files/3840/2160/256/(0|1)/'
rig() {  # name binary filter
  timeout ${4:-60} $2 --benchmark_filter="$3" --benchmark_counters_tabular=true > $R/rig-$1.log 2>&1; tl "rig $1 exit $?"
}
rig main-1080p $B/bin/bench_stereo_rig "$F1"
rig new-1080p $N/bench_stereo_rig "$F1"
rig main-4k $B/bin/bench_stereo_rig "$F4" 120
rig new-4k $N/bench_stereo_rig "$F4" 120
rig new-1080p-2 $N/bench_stereo_rig "$F1"
pack
W=/tmp/w; mkdir -p $W
s=$(date +%s.%N); bc_human_genome -t $T --seed 1 -o $W/h.fa 2> /dev/null; tl "genome $(secs $s) s"
s=$(date +%s.%N); barracuda_exact index $W/h.fa > /dev/null 2>&1; tl "index full $(secs $s) s"
s=$(date +%s.%N); bc_adna_reads $W/h.fa 10000000 $W/a.fq.gz -t $T --seed 1 2> /dev/null; tl "10M aDNA reads $(secs $s) s"
jl() { python3 -c "
import json,sys; j=json.load(open('$1')); s=j.get('seconds',{})
print('total %.2f' % s.get('total',0), 'later %.2f' % s.get('later_passes',0), 'kernel %.2f' % s.get('kernel',0), 'passes', [(p['reads'], round(p['seconds'],2)) for p in j.get('gpu_later_passes',[])], 'cpu', j.get('gpu_fallback_reads'), 'rss', round(j.get('peak_rss_mib',0)))" 2>&1 | cut -c1-300; }
AD="--seed-len 1024 --max-diff 0.01 --max-gap-open 2"
EG="--seed-len 1024 --max-diff 0.04"
full() {  # name build reads-file md5 extra-options...
  local n=$1 v=$2 rd=$3 md5=$4; shift 4
  s=$(date +%s.%N)
  timeout 150 $V/$v map -v --json -t $T "$@" --trace $R/trace-$n.tsv $W/h.fa $W/$rd.fq.gz -o $W/$n.bam > $R/full-$n.json 2> $R/full-$n.log
  echo "full-$n exit $? $(secs $s) s; $(jl $R/full-$n.json)" >> $L
  echo "  records md5 $(python3 .bundle-h/bam_hash.py $W/$n.bam 2>&1 | tail -1) (calls 14-20: $md5)" >> $L
  rm -f $W/$n.bam; pack
}
full eager-a a a 6df1a7552255 $EG
full eager-ws16 ws16 a 6df1a7552255 $EG
full eager-ws8 ws8 a 6df1a7552255 $EG
[ $(el) -lt 440 ] && full eager-a2 a a 6df1a7552255 $EG
[ $(el) -lt 470 ] && full eager-ws16-2 ws16 a 6df1a7552255 $EG
[ $(el) -lt 500 ] && full eager-ws8-2 ws8 a 6df1a7552255 $EG
best=$(python3 - "$R" <<'PY'
import json, sys
r = sys.argv[1]
t = {}
for v, names in {'a': ['a', 'a2'], 'ws16': ['ws16', 'ws16-2'], 'ws8': ['ws8', 'ws8-2']}.items():
    try:
        t[v] = sum(json.load(open(f'{r}/full-eager-{n}.json'))['seconds']['total'] for n in names) / 2
    except Exception:
        t[v] = 1e9
b = min(t, key=t.get)
print(b if b != 'a' and t[b] < 0.97 * t['a'] else 'none')
PY
)
tl "best variant: $best"
[ $(el) -lt 450 ] && full adna-a a a e328aa02a15e $AD
[ "$best" != none ] && [ $(el) -lt 490 ] && full adna-$best $best a e328aa02a15e $AD
tl "done"; pack; cat $L; grep -h "BM_rig" $R/rig-*.log
