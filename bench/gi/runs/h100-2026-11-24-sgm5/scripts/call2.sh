cd /tmp
mkdir -p /tmp/ab && tar xzf $REPO/.pack/bundle-a.tgz -C /tmp/ab
cuobjdump -sass $REPO/.pack/agg3_new.cubin > /tmp/res/agg3_new.sass 2>&1
bash $REPO/bench/stereo/sgm_ab.sh /tmp/ab/bundle-a $B /tmp/res/ab $REPO/.peers/libsgm/libsgm_bench 3
export EVK_BENCH_LEFT=$(ls /tmp/sgm-ab.*/syn_L.pgm | head -1) EVK_BENCH_RIGHT=$(ls /tmp/sgm-ab.*/syn_R.pgm | head -1)
for k3 in 4 8 16; do for sp in 0 1; do
  EVK_SGM_AGG=3 EVK_SGM_K3=$k3 EVK_SGM_SPLIT3=$sp timeout 100 $B/bin/bench_stereo_sgm --benchmark_filter='BM_sgm_gpu/(64|128|256)/(4|8)/1/' \
    --benchmark_counters_tabular=true 2>&1 | grep "^BM_" | awk -v k=$k3 -v s=$sp '{print "k3", k, "split", s, $1, $2}' >> /tmp/res/sweep.txt
done; done
