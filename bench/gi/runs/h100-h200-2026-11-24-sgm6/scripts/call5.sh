# call 5 (H200, final code): full table, then GI from the SGM seed (kernel 1)
cd /tmp
SGM_VS_PARTS='speed pairs' bash $REPO/bench/stereo/sgm_vs_libsgm.sh $B /tmp/res/sgm-vs $REPO/.peers/libsgm/libsgm_bench
echo "sgm-vs done at $(( $(date +%s) - T0 )) s"
G=/tmp/res/gi-sgm
timeout ${GI_S:-230} stereo gi --seed-kernel sgm run --class middlebury --pop 40 --generations 8 --seed 1 --out $G > /tmp/res/gi-run.log 2>&1
echo "gi run: exit $? at $(( $(date +%s) - T0 )) s"
B1=$G/best.genome
[ -f $B1 ] || B1=$(ls -t $G/*.genome 2>/dev/null | head -1)
if [ -n "$B1" ] && [ -f "$B1" ]; then
  cp $B1 /tmp/res/gi-best.genome
  timeout 60 stereo gi --seed-kernel sgm validate $B1 --cases 5 > /tmp/res/gi-validate.log 2>&1
  echo "gi validate: exit $?"
fi
ls -la $G > /tmp/res/gi-files.txt
tar czf /tmp/res/gi-sgm-state.tgz -C /tmp/res gi-sgm 2>/dev/null
rm -rf $G/candidates.jsonl
