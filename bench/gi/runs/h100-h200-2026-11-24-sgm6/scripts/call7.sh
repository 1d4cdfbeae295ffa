# call 7 (H200 or H100, final code): full table, GI from the SGM seed resumed from call 5's checkpoint, validate
cd /tmp
SGM_VS_PARTS='speed pairs' bash $REPO/bench/stereo/sgm_vs_libsgm.sh $B /tmp/res/sgm-vs $REPO/.peers/libsgm/libsgm_bench
echo "sgm-vs done at $(( $(date +%s) - T0 )) s"
tar xzf $REPO/.pack/gi-sgm-state.tgz -C /tmp/res
G=/tmp/res/gi-sgm
timeout ${GI_S:-200} stereo gi --seed-kernel sgm run --resume $G > /tmp/res/gi-run.log 2>&1
echo "gi run: exit $? at $(( $(date +%s) - T0 )) s"
B1=$G/best.genome
if [ -f $B1 ]; then
  timeout 90 stereo gi --seed-kernel sgm validate $B1 --cases 5 > /tmp/res/gi-validate.log 2>&1
  echo "gi validate: exit $?"
fi
ls -la $G > /tmp/res/gi-files.txt
tar czf /tmp/res/gi-sgm-state.tgz -C /tmp/res gi-sgm 2>/dev/null
rm -f $G/candidates.jsonl
# two more rounds of our host-to-host benchmarks (their spread; libSGM's from the table's run)
export EVK_BENCH_LEFT=/tmp/syn_L.pgm EVK_BENCH_RIGHT=/tmp/syn_R.pgm
$REPO/.peers/libsgm/libsgm_bench --synthetic 1920x1080 --disp 128 --paths 8 --reps 3 --no-host --save-pair /tmp/syn > /dev/null 2>&1
for r in 2 3; do
  timeout 60 bench_stereo_sgm --benchmark_filter='BM_sgm_gpu_host' --benchmark_out=/tmp/res/host-r$r.json --benchmark_out_format=json > /dev/null 2>&1
  echo "host round $r: exit $?"
done
