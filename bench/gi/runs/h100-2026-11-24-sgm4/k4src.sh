cd /tmp
lib=$REPO/.peers/libsgm/libsgm_bench
$lib --synthetic 1920x1080 --disp 128 --paths 8 --reps 3 --no-host --save-pair /tmp/syn > /dev/null 2>&1
for s in L R; do
  hdr=$(head -c 100 /tmp/syn_$s.pgm | head -n 3 | wc -c)
  { printf 'P5\n1920 %d\n255\n' 9; tail -c +$((hdr + 1)) /tmp/syn_$s.pgm | head -c $((1920 * 9)); } > /tmp/c9_$s.pgm
done
for set in 64/4/1 128/8/1; do
EVK_BENCH_LEFT=/tmp/c9_L.pgm EVK_BENCH_RIGHT=/tmp/c9_R.pgm EVK_SGM_AGG=4 EVK_SGM_ROWS4=9 timeout 120 ncu --clock-control none \
  --kernel-name regex:sgm_aggregate4 --launch-count 1 --section SourceCounters --section WarpStateStats --page source --print-source sass --csv \
  $B/bin/bench_stereo_sgm --benchmark_filter="BM_sgm_gpu_stages/$set/" > /tmp/res/src-${set//\//_}.csv 2>&1
EVK_BENCH_LEFT=/tmp/c9_L.pgm EVK_BENCH_RIGHT=/tmp/c9_R.pgm EVK_SGM_AGG=4 EVK_SGM_ROWS4=9 timeout 120 ncu --clock-control none \
  --kernel-name regex:sgm_aggregate4 --launch-count 1 --section WarpStateStats --section SchedulerStats --section InstructionStats \
  $B/bin/bench_stereo_sgm --benchmark_filter="BM_sgm_gpu_stages/$set/" > /tmp/res/ws-${set//\//_}.txt 2>&1
done
ls -la /tmp/res
