cd /tmp
lib=$REPO/.peers/libsgm/libsgm_bench
$lib --synthetic 1920x1080 --disp 128 --paths 8 --reps 3 --no-host --save-pair /tmp/syn > /dev/null 2>&1
export EVK_BENCH_LEFT=/tmp/syn_L.pgm EVK_BENCH_RIGHT=/tmp/syn_R.pgm
for d in 64 128; do for p in 4 8; do
  echo "lib $d $p $(timeout 60 $lib /tmp/syn_L.pgm /tmp/syn_R.pgm --disp $d --paths $p --reps 50 2>/dev/null | grep -o '"median_ms":[0-9.]*')"
done; done > /tmp/res/lib.txt
for rep in 1 2; do
for K in 8 16 32; do
  env EVK_SGM_K=$K timeout 100 $B/bin/bench_stereo_sgm --benchmark_filter='BM_sgm_gpu(_stages)?/(64|128|256)/(4|8)/1/' \
    --benchmark_counters_tabular=true 2>&1 | grep "^BM_" | awk -v K=$K '{print "K", K, $1, $2}' >> /tmp/res/ksweep.txt
done; done
