cd /tmp
lib=$REPO/.peers/libsgm/libsgm_bench
$lib --synthetic 1920x1080 --disp 128 --paths 8 --reps 3 --no-host --save-pair /tmp/syn > /dev/null 2>&1
export EVK_BENCH_LEFT=/tmp/syn_L.pgm EVK_BENCH_RIGHT=/tmp/syn_R.pgm
for set in 128/8/1 64/4/1; do
  EVK_SGM_AGG=4 timeout 120 ncu --clock-control none --kernel-name regex:sgm_aggregate4 --launch-skip 0 --launch-count 1 \
    --section SchedulerStats --section WarpStateStats --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section SourceCounters --section MemoryWorkloadAnalysis \
    $B/bin/bench_stereo_sgm --benchmark_filter="BM_sgm_gpu_stages/${set}/" > /tmp/res/ncu4-${set//\//_}.txt 2>&1
  echo "ncu $set: $?"
done
for r in 1 3 6 12; do
  env EVK_SGM_AGG=4 EVK_SGM_ROWS4=$r timeout 60 $B/bin/bench_stereo_sgm --benchmark_filter='BM_sgm_gpu_stages/(64/4|128/8)/1/' \
    --benchmark_counters_tabular=true > /tmp/res/rows$r.txt 2>&1
  echo "rows $r: $?"
done
