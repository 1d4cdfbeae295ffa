cd /tmp
mkdir -p /tmp/ab && tar xzf $REPO/.pack/bundle-a3.tgz -C /tmp/ab
bash $REPO/bench/stereo/sgm_ab.sh /tmp/ab/bundle-a $B /tmp/res/ab $REPO/.peers/libsgm/libsgm_bench 2
