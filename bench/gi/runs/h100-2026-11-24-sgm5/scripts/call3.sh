cd /tmp
mkdir -p /tmp/ab && tar xzf $REPO/.pack/bundle-a.tgz -C /tmp/ab
for f in agg3_new wta_new wta_old; do cuobjdump -sass $REPO/.pack/$f.cubin > /tmp/res/$f.sass 2>&1; done
SGM_AB_FILTER='BM_sgm_gpu/(64|128|256)/(4|8)/[012]/|BM_sgm_gpu_stages/(64|128|256)/(4|8)/1/' \
  bash $REPO/bench/stereo/sgm_ab.sh /tmp/ab/bundle-a $B /tmp/res/ab $REPO/.peers/libsgm/libsgm_bench 3
