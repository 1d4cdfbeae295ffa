cd /tmp
mkdir -p /tmp/ab && tar xzf $REPO/.pack/bundle-a.tgz -C /tmp/ab
for v in old new; do cuobjdump -sass $REPO/.pack/agg3_$v.cubin > /tmp/res/agg3_$v.sass 2>&1; done
bash $REPO/bench/stereo/sgm_ab.sh /tmp/ab/bundle-a $B /tmp/res/ab $REPO/.peers/libsgm/libsgm_bench 3
