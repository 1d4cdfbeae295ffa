cd /tmp
mkdir -p /tmp/ab && tar xzf $REPO/.pack/bundle-a2.tgz -C /tmp/ab
bash $REPO/bench/stereo/sgm_ab.sh /tmp/ab/bundle-a $B /tmp/res/ab $REPO/.peers/libsgm/libsgm_bench 3
export EVK_BENCH_LEFT=$(ls /tmp/sgm-ab.*/syn_L.pgm | head -1) EVK_BENCH_RIGHT=$(ls /tmp/sgm-ab.*/syn_R.pgm | head -1)
for r in 1 2; do for w in 2 3; do
  EVK_SGM_WTA=$w timeout 100 $B/bin/bench_stereo_sgm --benchmark_filter='BM_sgm_gpu_stages/(64|128|256)/(4|8)/[12]/' \
    --benchmark_out=/tmp/res/wta$w-$r.json --benchmark_out_format=json > /tmp/res/wta$w-$r.log 2>&1
done; done
python3 - <<'PY'
import json, statistics as st
d={}
for w in (2,3):
  for r in (1,2):
    try: j=json.load(open(f"/tmp/res/wta{w}-{r}.json"))
    except Exception as e: print(w,r,e); continue
    for b in j["benchmarks"]:
      n=b["name"].split("/"); d.setdefault((n[1],n[2],n[3],w),[]).append(b.get("wta_ms",float("nan")))
for key in sorted({k[:3] for k in d}, key=lambda k:(int(k[2]),int(k[0]),int(k[1]))):
  print("/".join(key), " ".join(f"wta{w} {st.median(d.get(key+(w,),[float('nan')])):.3f}" for w in (2,3)))
PY
for r in 1 2; do for cfg in "EVK_SGM_SPLIT3=1" "EVK_SGM_SPLIT3=0" "EVK_SGM_K3=8 EVK_SGM_SPLIT3=1" "EVK_SGM_K3=8 EVK_SGM_SPLIT3=0"; do
  env $cfg EVK_SGM_AGG=3 timeout 60 $B/bin/bench_stereo_sgm --benchmark_filter='BM_sgm_gpu/(128|256)/(4|8)/1/' --benchmark_counters_tabular=true 2>&1 | grep "^BM_" | awk -v c="$cfg" '{print c, $1, $2}'
done; done
