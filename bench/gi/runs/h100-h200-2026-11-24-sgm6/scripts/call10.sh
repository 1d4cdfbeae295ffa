# call 10 (H100, the review commit): the speed table (device-resident and host to host, libSGM in the run)
cd /tmp
SGM_VS_PARTS='speed' bash $REPO/bench/stereo/sgm_vs_libsgm.sh $B /tmp/res/sgm-vs $REPO/.peers/libsgm/libsgm_bench
echo "sgm-vs done at $(( $(date +%s) - T0 )) s"
