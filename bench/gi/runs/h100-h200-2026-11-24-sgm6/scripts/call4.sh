# call 4 (H100, final code): A/B against 19a2261 device-resident (default settings + stages), full table
cd /tmp
mkdir -p /tmp/ab && tar xzf $REPO/.pack/bundle-a.tgz -C /tmp/ab && mv /tmp/ab/bundle /tmp/ab/bundle-a
bash $REPO/bench/stereo/sgm_ab.sh /tmp/ab/bundle-a $B /tmp/res/ab $REPO/.peers/libsgm/libsgm_bench 3
echo "ab done at $(( $(date +%s) - T0 )) s"
SGM_VS_PARTS='speed pairs' bash $REPO/bench/stereo/sgm_vs_libsgm.sh $B /tmp/res/sgm-vs $REPO/.peers/libsgm/libsgm_bench
echo "sgm-vs done at $(( $(date +%s) - T0 )) s"
