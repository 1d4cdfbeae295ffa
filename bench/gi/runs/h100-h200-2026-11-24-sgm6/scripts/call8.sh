# call 8 (H200): stereo video end to end (kernel 3), then GI from the SGM seed on the padded cases, validate
cd /tmp
SGM_VS_PARTS='video' bash $REPO/bench/stereo/sgm_vs_libsgm.sh $B /tmp/res/video $REPO/.peers/libsgm/libsgm_bench
echo "video done at $(( $(date +%s) - T0 )) s"
G=/tmp/res/gi-sgm2
timeout ${GI_S:-320} stereo gi --seed-kernel sgm run --class middlebury --pop 40 --generations 8 --seed 1 --out $G > /tmp/res/gi-run.log 2>&1
echo "gi run: exit $? at $(( $(date +%s) - T0 )) s"
if [ -f $G/best.genome ]; then
  timeout 80 stereo gi --seed-kernel sgm validate $G/best.genome --cases 5 > /tmp/res/gi-validate.log 2>&1
  echo "gi validate: exit $?"
  stereo gi --seed-kernel sgm apply $G/best.genome -o /tmp/res/gi-best.cu > /dev/null 2>&1
fi
tar czf /tmp/res/gi-sgm2-state.tgz -C /tmp/res gi-sgm2 2>/dev/null
rm -f $G/candidates.jsonl
