# call 9 (H100, final code): the speed table once more and two more rounds of our host-to-host benchmarks
cd /tmp
SGM_VS_PARTS='speed' bash $REPO/bench/stereo/sgm_vs_libsgm.sh $B /tmp/res/sgm-vs $REPO/.peers/libsgm/libsgm_bench
echo "sgm-vs done at $(( $(date +%s) - T0 )) s"
export EVK_BENCH_LEFT=/tmp/syn_L.pgm EVK_BENCH_RIGHT=/tmp/syn_R.pgm
$REPO/.peers/libsgm/libsgm_bench --synthetic 1920x1080 --disp 128 --paths 8 --reps 3 --no-host --save-pair /tmp/syn > /dev/null 2>&1
for r in 2 3; do
  timeout 60 bench_stereo_sgm --benchmark_filter='BM_sgm_gpu_host' --benchmark_out=/tmp/res/host-r$r.json --benchmark_out_format=json > /dev/null 2>&1
  echo "host round $r: exit $?"
done
python3 $REPO/bench/stereo/sgm_host_rounds.py /tmp/res/sgm-vs /tmp/res/host-r2.json /tmp/res/host-r3.json > /tmp/res/host-rounds.txt 2>&1
