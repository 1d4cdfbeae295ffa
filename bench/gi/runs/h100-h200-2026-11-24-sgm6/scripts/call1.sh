# call 1 (H100): GPU tests, host-to-host A/B (19a2261 vs this build), band sweep, full speed table
cd /tmp
mkdir -p /tmp/ab && tar xzf $REPO/.pack/bundle-a.tgz -C /tmp/ab && mv /tmp/ab/bundle /tmp/ab/bundle-a
SGM_AB_FILTER='BM_sgm_gpu_host/(64|128|256)/(4|8)/1/' bash $REPO/bench/stereo/sgm_ab.sh /tmp/ab/bundle-a $B /tmp/res/ab-host $REPO/.peers/libsgm/libsgm_bench 3
mkdir -p /tmp/res/bands
$REPO/.peers/libsgm/libsgm_bench --synthetic 1920x1080 --disp 128 --paths 8 --reps 3 --no-host --save-pair /tmp/syn > /dev/null 2>&1
export EVK_BENCH_LEFT=/tmp/syn_L.pgm EVK_BENCH_RIGHT=/tmp/syn_R.pgm
for r in 1 2; do for nb in 1 2 3 4 8 0; do
  EVK_SGM_BANDS=$nb timeout 60 bench_stereo_sgm --benchmark_filter='BM_sgm_gpu_host/(128|256)/(4|8)/1/' \
    --benchmark_out=/tmp/res/bands/b$nb-r$r.json --benchmark_out_format=json > /dev/null 2>&1
  echo "bands $nb round $r: exit $?"
done; done
unset EVK_BENCH_LEFT EVK_BENCH_RIGHT
SGM_VS_PARTS='speed pairs' bash $REPO/bench/stereo/sgm_vs_libsgm.sh $B /tmp/res/sgm-vs $REPO/.peers/libsgm/libsgm_bench
rm -f /tmp/res/sgm-vs/*.jsonl.tmp
