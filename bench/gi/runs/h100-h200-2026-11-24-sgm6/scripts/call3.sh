# call 3: full speed table (device-resident + host to host at all 18 settings), then GI from the SGM seed
cd /tmp
SGM_VS_PARTS='speed pairs' bash $REPO/bench/stereo/sgm_vs_libsgm.sh $B /tmp/res/sgm-vs $REPO/.peers/libsgm/libsgm_bench
echo "sgm-vs done at $(( $(date +%s) - T0 )) s"
if [ "${GI:-1}" = 1 ]; then
  G=/tmp/res/gi-sgm
  timeout ${GI_S:-180} stereo gi --seed-kernel sgm run --class middlebury --pop 40 --generations 8 --seed 1 --out $G > /tmp/res/gi-run.log 2>&1
  echo "gi run: exit $?"
  if [ -f $G/best.genome ]; then
    timeout 60 stereo gi --seed-kernel sgm validate $G/best.genome --cases 5 > /tmp/res/gi-validate.log 2>&1
    echo "gi validate: exit $?"
  fi
  rm -rf $G/checkpoint* $G/*.cubin 2>/dev/null
fi
