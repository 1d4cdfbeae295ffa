cd /tmp
mkdir -p /tmp/ab && tar xzf $REPO/.pack/bundle-a2.tgz -C /tmp/ab
bash $REPO/bench/stereo/sgm_ab.sh /tmp/ab/bundle-a $B /tmp/res/ab $REPO/.peers/libsgm/libsgm_bench 3
export EVK_BENCH_LEFT=$(ls /tmp/sgm-ab.*/syn_L.pgm | head -1) EVK_BENCH_RIGHT=$(ls /tmp/sgm-ab.*/syn_R.pgm | head -1)
for r in 1 2; do for b in -1 5 6 7; do
  EVK_SGM_BLOCKS3=$b timeout 100 $B/bin/bench_stereo_sgm --benchmark_filter='BM_sgm_gpu(_stages)?/(64|128|256)/(4|8)/1/' \
    --benchmark_out=/tmp/res/b3_$b-$r.json --benchmark_out_format=json > /tmp/res/b3_$b-$r.log 2>&1
  echo "blocks3 $b round $r: $?"
done; done
python3 - <<'PY'
import json, statistics as st
d={}
for b in (-1,5,6,7):
  for r in (1,2):
    try: j=json.load(open(f"/tmp/res/b3_{b}-{r}.json"))
    except Exception as e: print(b,r,e); continue
    for x in j["benchmarks"]:
      n=x["name"].split("/")
      if n[0]=="BM_sgm_gpu": d.setdefault((n[1],n[2],b,"total"),[]).append(x["median_ms"])
      else: d.setdefault((n[1],n[2],b,"agg"),[]).append(x["aggregate_ms"])
for k in sorted({k[:2] for k in d}, key=lambda k:(int(k[0]),int(k[1]))):
  print("/".join(k), " | ".join(f"b{b} {st.median(d.get(k+(b,'total'),[float('nan')])):.3f} agg {st.median(d.get(k+(b,'agg'),[float('nan')])):.3f}" for b in (-1,5,6,7)))
PY
