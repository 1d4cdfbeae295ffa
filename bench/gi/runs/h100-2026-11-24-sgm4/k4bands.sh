cd /tmp
lib=$REPO/.peers/libsgm/libsgm_bench
$lib --synthetic 1920x1080 --disp 128 --paths 8 --reps 3 --no-host --save-pair /tmp/syn > /dev/null 2>&1
crop() { # crop H rows of a 1920-wide P5 PGM
  for s in L R; do
    hdr=$(head -c 100 /tmp/syn_$s.pgm | head -n 3 | wc -c)
    { printf 'P5\n1920 %d\n255\n' $1; tail -c +$((hdr + 1)) /tmp/syn_$s.pgm | head -c $((1920 * $1)); } > /tmp/c$1_$s.pgm
  done
}
for h in 9 18 90 1080; do
  crop $h
  for r in 9 1; do
    [ $h = 1080 ] && [ $r = 9 ] && continue
    EVK_BENCH_LEFT=/tmp/c${h}_L.pgm EVK_BENCH_RIGHT=/tmp/c${h}_R.pgm EVK_SGM_AGG=4 EVK_SGM_ROWS4=$r timeout 60 \
      $B/bin/bench_stereo_sgm --benchmark_filter='BM_sgm_gpu_stages/(128/8|64/4)/1/' --benchmark_counters_tabular=true 2>&1 \
      | grep "^BM_sgm_gpu_stages" | awk -v h=$h -v r=$r '{print "h", h, "rows", r, $1, "pass1", $7, "pass2", $8}'
  done
done > /tmp/res/bands.txt
