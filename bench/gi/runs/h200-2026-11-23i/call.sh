# session 7, H200 call: (A) barracuda_exact side by side with the pruned genome; (B) stereo on the H200:
# pre-tune the original per class here, then validate the shipped genomes and the H100 search's genomes
. /tmp/bundle/env.sh /tmp/nvc-h > /dev/null
T0=$(date +%s)
timeout 100 bash $REPO/.pack/sbs.sh barracuda_exact "ecoli large" "kernels/evolved/barracuda_exact/sm90-h200-ecoli.genome .pack/h200-bc-pruned.genome"
echo "A done at $(( $(date +%s) - T0 )) s"
S=/tmp/gs/stereo; mkdir -p /tmp/res/h200-stereo
for c in paper middlebury kitti 1080p; do
  mv $S/pretuned-$c.genome $S/h100-pretuned-$c.genome 2>/dev/null
  t0=$(date +%s)
  ( cd /tmp/res/h200-stereo && timeout 110 stereo gi tune --class $c -o $S/pretuned-$c.genome --json > tune-$c.json 2> tune-$c.log )
  echo "tune $c rc $? in $(( $(date +%s) - t0 )) s"; cp $S/pretuned-$c.genome /tmp/res/h200-stereo/ 2>/dev/null
done
echo "tunes done at $(( $(date +%s) - T0 )) s"
timeout 200 bash $REPO/.pack/sbs.sh stereo "paper middlebury kitti 1080p" "kernels/evolved/stereo/sm90-h100-kitti-tuned.genome kernels/evolved/stereo/sm90-h200-320x240.genome"
echo "B done at $(( $(date +%s) - T0 )) s"
for c in ecoli large; do
  t0=$(date +%s)
  ( cd /tmp/res && timeout 80 barracuda_exact gi tune $REPO/.pack/h200-bc-pruned.genome --class $c -o /tmp/res/pruned-$c.genome --json > pruned-tune-$c.json 2> pruned-tune-$c.log )
  echo "pruned tune $c rc $? in $(( $(date +%s) - t0 )) s"
  [ -s /tmp/res/pruned-$c.genome ] && timeout 60 barracuda_exact gi validate /tmp/res/pruned-$c.genome --class $c --pretuned $c=/tmp/gs/barracuda_exact/pretuned-$c.genome --cases 10 --json > /tmp/res/pruned-val-$c.json 2>&1 && grep -o '"validated": "[^"]*"' /tmp/res/pruned-val-$c.json
done
echo "C done at $(( $(date +%s) - T0 )) s"
