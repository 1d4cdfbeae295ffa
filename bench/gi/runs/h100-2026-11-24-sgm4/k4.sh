cd /tmp
lib=$REPO/.peers/libsgm/libsgm_bench
$lib --synthetic 1920x1080 --disp 128 --paths 8 --reps 3 --no-host --save-pair /tmp/syn > /dev/null 2>&1
export EVK_BENCH_LEFT=/tmp/syn_L.pgm EVK_BENCH_RIGHT=/tmp/syn_R.pgm
for d in 64 128 256; do for p in 4 8; do
  echo "lib $d $p $(timeout 60 $lib /tmp/syn_L.pgm /tmp/syn_R.pgm --disp $d --paths $p --reps 50 2>/dev/null)"
done; done > /tmp/res/lib.txt
for agg in 3 4; do
  env EVK_SGM_AGG=$agg timeout 150 $B/bin/bench_stereo_sgm --benchmark_filter='BM_sgm_gpu(_stages)?/(64|128|256)/(4|8)/1/' \
    --benchmark_counters_tabular=true > /tmp/res/agg$agg.txt 2>&1
  echo "agg $agg: $?"
done
