#!/usr/bin/env bash
# Our SGM against fixstars libSGM on one GPU, in one run, from an OpenCV-free bundle (`make bundle`):
#   speed     1920x1080 (libSGM's synthetic texture, saved once and fed to both), 64/128/256
#             disparities, 4/8 paths, three settings (dense / libSGM's defaults / + sub-pixel),
#             device-resident and host-to-host; Tsukuba, Venus (64) and aloe (256) at the default
#             setting. Ratio = libSGM ms / our ms (> 1: we are faster).
#   accuracy  bad-1 / bad-2 (%) non-occluded (aloe: all known pixels), dense and with the LR check:
#             ours SSD, ours SGM, libSGM (64 disparities; aloe 256; 8 paths; sub-pixel).
# libSGM is the prebuilt peer of ../shared/peers/libsgm, carried in the ignored folder .peers/:
#   mkdir -p .peers/libsgm && cp ../shared/peers/libsgm/libsgm_bench .peers/libsgm/
# Run from the repository root (the device tool's working copy) with carry ["bundle", ".peers"].
# Ours three times: the default (the tuning policy's kernels, "new"; kernel 3,
# aggregate_vec.cu, at every row), the seed aggregation kernel (--sgm-agg=1, "old") and kernel 3
# with its own default lanes (--sgm-agg=3, "k3"), so one run gives them beside libSGM at every
# setting, plus the per-stage breakdown of each and a kernel x lane-width sweep with the fastest per
# setting (what the policy table in sgm_policy.cpp should hold).
# Usage: sgm_vs_libsgm.sh BUNDLE OUTDIR [LIBSGM_BENCH]
#   SGM_VS_PARTS (default "speed tuning video ssd pairs accuracy"): the parts to run; "speed tuning"
#   alone took about 90 s on an H100; "speed4k" (not in the default) times libSGM's synthetic texture
#   at 3840x2160, default setting, 128/256 disparities x 4/8 paths, both sides, rows "4K" of the table,
#   and ours per stage there; "tuning4k" (with speed4k) sweeps kernel 3's lanes at 4K as "tuning" does.
set -uo pipefail
parts=${SGM_VS_PARTS:-speed tuning video ssd pairs accuracy}
want() { case " $parts " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
b=$(cd "${1:?usage: sgm_vs_libsgm.sh BUNDLE OUTDIR [LIBSGM_BENCH]}" && pwd)
out=${2:?OUTDIR}
lib=${3:-${LIBSGM_BENCH:-.peers/libsgm/libsgm_bench}}
mkdir -p "$out"
out=$(cd "$out" && pwd)
W=$(mktemp -d /tmp/sgm-vs.XXXXXX)
. "$b/env.sh" "$W/nvrtc-cache"
log="$out/summary.txt"
: > "$log"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv >> "$log" 2>&1 || true
echo "host cores: $(nproc)" >> "$log"
if [ ! -x "$lib" ]; then
  echo "libsgm_bench not found at $lib (copy ../shared/peers/libsgm/libsgm_bench to .peers/libsgm/)" | tee -a "$log"
  lib=""
fi
SH="$EVK_SHARED_DATA/stereo"
PD="$EVK_DATA_DIR/stereo"

# ---- speed: synthetic 1920x1080 ------------------------------------------------------------------
settings=(dense default subpixel)
libflags=("--lr -1 --uniq 1.0" "" "--subpixel")
if [ -n "$lib" ]; then
  "$lib" --synthetic 1920x1080 --disp 128 --paths 8 --reps 3 --no-host --save-pair "$W/syn" \
    > /dev/null 2>> "$log"
  : > "$out/libsgm_speed.jsonl"
fi
if [ -n "$lib" ] && want speed; then
  for d in 64 128 256; do
    for p in 4 8; do
      for s in 0 1 2; do
        # shellcheck disable=SC2086
        line=$(timeout 60 "$lib" "$W/syn_L.pgm" "$W/syn_R.pgm" --disp $d --paths $p ${libflags[$s]} --reps 50 2>> "$log")
        echo "{\"setting\":\"${settings[$s]}\",\"pair\":\"synthetic\",\"r\":$line}" >> "$out/libsgm_speed.jsonl"
      done
    done
  done
fi
if [ -f "$W/syn_L.pgm" ]; then
  export EVK_BENCH_LEFT="$W/syn_L.pgm" EVK_BENCH_RIGHT="$W/syn_R.pgm"
fi
if want speed; then
  # new (the policy's choice) in full: device-resident, stages, host to host, stream engine
  timeout 300 bench_stereo_sgm --benchmark_filter='BM_sgm_gpu' --benchmark_out="$out/bench_sgm_synthetic.json" \
    --benchmark_out_format=json --benchmark_counters_tabular=true > "$out/bench_sgm_synthetic.log" 2>&1
  echo "bench_stereo_sgm (synthetic, policy): exit $?" >> "$log"
  # old: the seed aggregation kernel with its own defaults (K 8 up to 64, 16 beyond; direct loads)
  timeout 200 bench_stereo_sgm --sgm-agg=1 --benchmark_filter='BM_sgm_gpu(_stages)?/' \
    --benchmark_out="$out/bench_sgm_synthetic_agg1.json" --benchmark_out_format=json \
    --benchmark_counters_tabular=true > "$out/bench_sgm_synthetic_agg1.log" 2>&1
  echo "bench_stereo_sgm (synthetic, seed kernel): exit $?" >> "$log"
  # k3: the third kernel (aggregate_vec.cu) with its default lanes, side by side in the same run
  timeout 200 bench_stereo_sgm --sgm-agg=3 --benchmark_filter='BM_sgm_gpu(_stages)?/' \
    --benchmark_out="$out/bench_sgm_synthetic_agg3.json" --benchmark_out_format=json \
    --benchmark_counters_tabular=true > "$out/bench_sgm_synthetic_agg3.log" 2>&1
  echo "bench_stereo_sgm (synthetic, kernel 3): exit $?" >> "$log"
fi

# ---- tuning sweep: kernel x disparities per lane (x the seed's census loads); same results ----------
# sweep DIR FILTER CONFIG...: each config "KERNEL LOADS K" timed over FILTER's settings into DIR
sweep() {
  local dir=$1 filter=$2; shift 2
  mkdir -p "$dir"
  for cfg in "$@"; do
    read -r agg loads k <<< "$cfg"
    # kernel 3: k is its lanes' K (--sgm-k3); the layout (wta) keeps its default K; 3s: kernel 3
    # with its horizontal directions at K/2 on twice the lanes (--sgm-split3=1)
    split=0
    if [ "$agg" = 3s ]; then agg=3; split=1; fi
    if [ "$agg" = 3 ]; then kv="--sgm-k3=$k"; else kv="--sgm-k=$k"; fi
    lv=(); [ "$loads" != - ] && lv=(--sgm-loads="$loads")
    tag=agg$agg; [ $split = 1 ] && tag=agg3s
    timeout 150 bench_stereo_sgm --sgm-agg="$agg" --sgm-split3="$split" "$kv" "${lv[@]}" \
      --benchmark_filter="$filter" --benchmark_out="$dir/${tag}_${loads}_k$k.json" \
      --benchmark_out_format=json > "$W/tune.log" 2>&1
    echo "tuning $(basename "$dir") $tag loads $loads K $k: exit $?" >> "$log"
  done
}
if want tuning; then
  sweep "$out/tuning" 'BM_sgm_gpu/(64|128|256)/(4|8)/1/' "1 direct 8" "1 direct 16" "1 direct 32" "1 prefetch 8" \
    "1 prefetch 16" "1 prefetch 32" "1 staged 8" "1 staged 16" "1 staged 32" "2 - 8" "2 - 16" "2 - 32" "3 - 4" \
    "3 - 8" "3 - 16" "3s - 8" "3s - 16"
fi

# ---- video: end to end from PGM files (30 frames of the synthetic pair) -----------------------------
if [ -f "$W/syn_L.pgm" ] && want video; then
  mkdir -p "$W/vid/l" "$W/vid/r" "$W/vid/out"
  for i in $(seq -w 0 29); do
    cp "$W/syn_L.pgm" "$W/vid/l/f$i.pgm"
    cp "$W/syn_R.pgm" "$W/vid/r/f$i.pgm"
  done
  : > "$out/video.txt"
  for fmt in pfm png; do
    for streams in 1 3; do
      echo "== 1920x1080, 128 disparities, 8 paths, default setting, --streams $streams --format $fmt" >> "$out/video.txt"
      timeout 120 stereo video "$W/vid/l" "$W/vid/r" -o "$W/vid/out" --method sgm --max-disparity 127 --backend gpu \
        --median 3 --uniqueness 5 --lr-check 1 --streams $streams --format $fmt >> "$out/video.txt" 2>&1
      rm -f "$W/vid/out"/*
    done
  done
fi

# ---- SSD: Stam's kernel (original, ROWSperTHREAD 40 and 5) and the expert kernel at 1920x1080 ----
if want ssd; then
  timeout 180 bench_stereo --benchmark_filter='BM_gpu_(original|expert)/(2|3)' --benchmark_counters_tabular=true \
    --benchmark_out="$out/bench_ssd.json" --benchmark_out_format=json > "$out/bench_ssd.log" 2>&1
  echo "bench_stereo (SSD kernels): exit $?" >> "$log"
fi

# ---- speed: the real pairs at the default setting -----------------------------------------------
pairs=("Tsukuba $SH/Tsukuba/imL.pgm $SH/Tsukuba/imR.pgm 64" "Venus $SH/Venus/imL.pgm $SH/Venus/imR.pgm 64"
       "aloe $PD/aloeL.pgm $PD/aloeR.pgm 256")
want pairs || pairs=()
for pr in "${pairs[@]}"; do
  read -r name L R d <<< "$pr"
  [ -f "$L" ] || { echo "$name: $L absent" >> "$log"; continue; }
  if [ -n "$lib" ]; then
    line=$(timeout 60 "$lib" "$L" "$R" --disp "$d" --paths 8 --reps 50 2>> "$log")
    echo "{\"setting\":\"default\",\"pair\":\"$name\",\"r\":$line}" >> "$out/libsgm_speed.jsonl"
  fi
  EVK_BENCH_LEFT=$L EVK_BENCH_RIGHT=$R timeout 120 bench_stereo_sgm --benchmark_filter="BM_sgm_gpu/$d/8/1/" \
    --benchmark_out="$out/bench_sgm_$name.json" --benchmark_out_format=json > "$out/bench_sgm_$name.log" 2>&1
  echo "bench_stereo_sgm ($name): exit $?" >> "$log"
done

# ---- speed at 3840x2160: libSGM's synthetic texture at 4K, default setting, 128/256 x 4/8 ----------
if [ -n "$lib" ] && want speed4k; then
  "$lib" --synthetic 3840x2160 --disp 128 --paths 8 --reps 3 --no-host --save-pair "$W/syn4k" > /dev/null 2>> "$log"
  for d in 128 256; do
    for p in 4 8; do
      line=$(timeout 120 "$lib" "$W/syn4k_L.pgm" "$W/syn4k_R.pgm" --disp $d --paths $p --reps 30 2>> "$log")
      echo "{\"setting\":\"default\",\"pair\":\"4K\",\"r\":$line}" >> "$out/libsgm_speed.jsonl"
    done
  done
  EVK_BENCH_LEFT=$W/syn4k_L.pgm EVK_BENCH_RIGHT=$W/syn4k_R.pgm timeout 300 bench_stereo_sgm \
    --benchmark_filter='BM_sgm_gpu/(128|256)/(4|8)/1/' --benchmark_out="$out/bench_sgm_4K.json" \
    --benchmark_out_format=json > "$out/bench_sgm_4K.log" 2>&1
  echo "bench_stereo_sgm (4K): exit $?" >> "$log"
  # per stage at 4K (where the time goes), then kernel 3's lanes swept there (the policy was tuned at 1080p)
  EVK_BENCH_LEFT=$W/syn4k_L.pgm EVK_BENCH_RIGHT=$W/syn4k_R.pgm timeout 200 bench_stereo_sgm \
    --benchmark_filter='BM_sgm_gpu_stages/(128|256)/(4|8)/1/' --benchmark_out="$out/bench_sgm_4K_stages.json" \
    --benchmark_out_format=json --benchmark_counters_tabular=true > "$out/bench_sgm_4K_stages.log" 2>&1
  echo "bench_stereo_sgm (4K stages): exit $?" >> "$log"
  if want tuning4k; then
    EVK_BENCH_LEFT=$W/syn4k_L.pgm EVK_BENCH_RIGHT=$W/syn4k_R.pgm \
      sweep "$out/tuning4k" 'BM_sgm_gpu/(128|256)/(4|8)/1/' "3 - 4" "3 - 8" "3 - 16" "3s - 8" "3s - 16"
  fi
fi

# ---- accuracy ---------------------------------------------------------------------------------------
acc="$out/accuracy.tsv"
printf 'pair\tmethod\tmode\tbad1\tbad2\tinvalid\n' > "$acc"
evalq() {  # MAP GT SCALE [MASK] -> "bad1 bad2 invalid"
  stereo eval "$1" "$2" --gt-scale "$3" ${4:+--mask "$4"} --json 2>> "$log" |
    python3 -c 'import json,sys; j=json.load(sys.stdin); print("%.2f\t%.2f\t%.2f" % (j["bad_1.0_percent"], j["bad_2.0_percent"], j["invalid_percent"]))'
}
accpairs=("Tsukuba $SH/Tsukuba 63 16 mask" "Venus $SH/Venus 63 8 mask" "aloe $PD 255 1 none")
want accuracy || accpairs=()
for pr in "${accpairs[@]}"; do
  read -r name dir maxd scale _ <<< "$pr"
  if [ "$name" = aloe ]; then L=$dir/aloeL.pgm; R=$dir/aloeR.pgm; GT=$dir/aloeGT.pgm; MASK=""
  else L=$dir/imL.pgm; R=$dir/imR.pgm; GT=$dir/groundtruth.pgm; MASK=$dir/nonocc.pgm; fi
  [ -f "$L" ] && [ -f "$GT" ] || { echo "$name: inputs or ground truth absent" >> "$log"; continue; }
  run() {  # METHOD MODE ARGS...
    local method=$1 mode=$2; shift 2
    if stereo disparity "$L" "$R" -o "$W/d.pfm" --backend gpu --max-disparity "$maxd" "$@" > /dev/null 2>> "$log"; then
      printf '%s\t%s\t%s\t%s\n' "$name" "$method" "$mode" "$(evalq "$W/d.pfm" "$GT" "$scale" "$MASK")" >> "$acc"
    fi
  }
  run "ours SSD 11x11" dense --method ssd
  run "ours SSD 11x11" lr --method ssd --lr-check 1
  run "ours SGM" dense --method sgm --subpixel parabola --median 3
  run "ours SGM" lr --method sgm --subpixel parabola --median 3 --uniqueness 5 --lr-check 1
  run "ours SGM" lr-no-uniq --method sgm --subpixel parabola --median 3 --lr-check 1
  run "ours SSD expert" dense --method ssd --kernel expert
  if [ -n "$lib" ]; then
    for mode in dense lr; do
      flags="--lr -1"
      [ $mode = lr ] && flags="--lr 1"
      # shellcheck disable=SC2086
      if "$lib" "$L" "$R" --disp $((maxd + 1)) --paths 8 --subpixel $flags --reps 3 --no-host --out "$W/l.pfm" \
           > /dev/null 2>> "$log"; then
        printf '%s\t%s\t%s\t%s\n' "$name" "libSGM" "$mode" "$(evalq "$W/l.pfm" "$GT" "$scale" "$MASK")" >> "$acc"
      fi
    done
  fi
done

# ---- tables ---------------------------------------------------------------------------------------
python3 - "$out" > "$out/ratios.txt" 2>> "$log" <<'PY'
import glob, json, sys, os
out = sys.argv[1]
lib = {}
lp = os.path.join(out, "libsgm_speed.jsonl")
for line in (open(lp) if os.path.exists(lp) else []):
    try:
        j = json.loads(line)
    except ValueError:
        continue
    r = j["r"]
    lib[(j["pair"], r["disp"], r["paths"], j["setting"])] = r
names = ["dense", "default", "subpixel"]

def load(path):
    """(kind, args...) -> benchmark entry of a Google Benchmark JSON file."""
    res = {}
    if not os.path.exists(path):
        return res
    try:
        doc = json.load(open(path))
    except ValueError:
        return res
    for bm in doc.get("benchmarks", []):
        if bm.get("error_occurred"):
            continue
        parts = bm["name"].split("/")
        args = tuple(int(p) for p in parts[1:] if p.isdigit())
        res[(parts[0],) + args] = bm
    return res

new = {"synthetic": load(os.path.join(out, "bench_sgm_synthetic.json"))}
old = {"synthetic": load(os.path.join(out, "bench_sgm_synthetic_agg1.json"))}
k3 = {"synthetic": load(os.path.join(out, "bench_sgm_synthetic_agg3.json"))}
for pair in ("Tsukuba", "Venus", "aloe", "4K"):
    new[pair] = load(os.path.join(out, "bench_sgm_%s.json" % pair))
f3 = lambda v: "%.3f" % v if v else "-"
rt = lambda a, b: "%.2fx" % (a / b) if (a and b) else "-"
def ms(res, pair, key):
    bm = res.get(pair, {}).get(key)
    return bm["median_ms"] if bm else None

print("Device-resident, median ms. old = the seed aggregation kernel, new = the policy's choice,")
print("k3 = the third kernel (aggregate_vec.cu, default lanes)")
print("ratio = libSGM / ours (> 1: we are faster; the target is >= 1.75x at every setting)")
print("%-10s %4s %5s %-9s %8s %8s %8s %8s %8s %8s %8s %8s %-14s %s" % ("pair", "disp", "paths", "setting", "libSGM", "old", "new",
      "k3", "lib/old", "lib/new", "lib/k3", "new/old", "new kernel", "target (best of ours)"))
keys = sorted(set(lib) | {("synthetic", k[1], k[2], names[k[3]]) for k in new["synthetic"] if k[0] == "BM_sgm_gpu"},
              key=lambda k: (k[0] != "synthetic", k))
for (pair, d, p, s) in keys:
    key = ("BM_sgm_gpu", d, p, names.index(s))
    l = lib.get((pair, d, p, s), {}).get("median_ms")
    o, n, t3 = ms(old, pair, key), ms(new, pair, key), ms(k3, pair, key)
    label = new.get(pair, {}).get(key, {}).get("label", "")
    kern = " ".join(w for w in label.split() if w.startswith("agg") or w.startswith("K") or w == "split")
    best = min(v for v in (n, t3) if v) if (n or t3) else None
    met = "-" if not (l and best) else ("met" if l / best >= 1.75 else "NOT met")
    print("%-10s %4d %5d %-9s %8s %8s %8s %8s %8s %8s %8s %8s %-14s %s" % (pair, d, p, s, f3(l), f3(o), f3(n), f3(t3),
          rt(l, o), rt(l, n), rt(l, t3), rt(o, n), kern, met))
print()
print("Host to host, median ms (1920x1080, new; ours: SgmPipeline::process, the wta in row bands with")
print("their post-processing and downloads overlapped, pageable buffers staged by host threads)")
print("%4s %5s %-9s %9s %9s %7s   %9s %9s %7s  %s" % ("disp", "paths", "setting", "lib page", "ours pg", "ratio", "lib pin",
      "ours pin", "ratio", "target"))
for d in (64, 128, 256):
    for p in (4, 8):
        for si, sname in enumerate(names):
            r = lib.get(("synthetic", d, p, sname), {})
            op = ms(new, "synthetic", ("BM_sgm_gpu_host", d, p, si, 0))
            oq = ms(new, "synthetic", ("BM_sgm_gpu_host", d, p, si, 1))
            if not (op or oq):
                continue
            lp_, lq = r.get("host_median_ms"), r.get("host_pinned_median_ms")
            met = "-" if not (lp_ and op and lq and oq) else (
                "met" if min(lp_ / op, lq / oq) >= 1.75 else "NOT met")
            print("%4d %5d %-9s %9s %9s %7s   %9s %9s %7s  %s" % (d, p, sname, f3(lp_), f3(op), rt(lp_, op), f3(lq), f3(oq),
                  rt(lq, oq), met))
print()
print("Stages, median ms each alone (L2 flushed): census, aggregation (all directions in one launch; then")
print("each direction alone), wta (+ uniqueness, right map; setting 2 adds the sub-pixel fit), median, LR;")
print("path-volume traffic in bytes per pixel and disparity (written + read) and GB/s")
for tag, res in (("new", new["synthetic"]), ("k3", k3["synthetic"]), ("old", old["synthetic"])):
    for key in sorted(k for k in res if k[0] == "BM_sgm_gpu_stages"):
        bm = res[key]
        _, d, p, s = key
        dirs = " ".join("%.3f" % bm["agg_dir%d_ms" % i] for i in range(p) if ("agg_dir%d_ms" % i) in bm)
        print("%s %4d/%d %-8s census %.3f | aggregate %.3f [%s] | wta %.3f | median %.3f | lr %.3f | %.0f B/px/d, agg %.0f GB/s, wta %.0f GB/s  (%s)" % (
            tag, d, p, names[s], bm["census_ms"], bm["aggregate_ms"], dirs, bm["wta_ms"], bm.get("median_ms", 0),
            bm.get("lr_ms", 0), bm.get("path_bytes_per_px_d", 0), bm["aggregate_GBps"], bm["wta_GBps"], bm.get("label", "")))
    for d in (64, 128, 256):
        for p in (4, 8):
            a, b = res.get(("BM_sgm_gpu_stages", d, p, 1)), res.get(("BM_sgm_gpu_stages", d, p, 2))
            if a and b:
                print("%s %4d/%d sub-pixel fit: %.3f ms (wta setting 2 - setting 1)" % (tag, d, p, b["wta_ms"] - a["wta_ms"]))
print()
sweep = {}
for path in sorted(glob.glob(os.path.join(out, "tuning", "*.json"))):
    cfg = os.path.basename(path)[:-5]
    for key, bm in load(path).items():
        if key[0] == "BM_sgm_gpu":
            sweep.setdefault((key[1], key[2]), {})[cfg] = bm["median_ms"]
if sweep:
    cfgs = sorted({c for v in sweep.values() for c in v})
    print("Tuning sweep, default setting, median ms (agg<kernel>_<loads>_k<K>)")
    print("%4s %5s " % ("disp", "paths") + " ".join("%16s" % c for c in cfgs) + "   fastest")
    for (d, p) in sorted(sweep):
        row = sweep[(d, p)]
        best = min(row, key=row.get)
        print("%4d %5d " % (d, p) + " ".join("%16s" % f3(row.get(c)) for c in cfgs) + "   " + best)
    print()
    print("Policy rows for sgm_policy.cpp (kPolicy: {max disparities, paths, kernel, K, staged loads}):")
    for (d, p) in sorted(sweep):
        row = sweep[(d, p)]
        best = min(row, key=row.get)
        agg, loads, k = best.split("_")[0][3:], best.split("_")[1], best.split("_k")[1]
        note = "  (prefetched loads: not a kPolicy column yet)" if loads == "prefetch" else ""
        if agg in ("3", "3s"):  # kernel 3: k is its lanes' K; the layout (wta) K is 16
            print("    {%d, %d, 3, 16, false, %s, %s},  // %.3f ms" % (d, p, k, "true" if agg == "3s" else "false", row[best]))
        else:
            print("    {%d, %d, %s, %s, %s, 0},  // %.3f ms%s" % (d, p, agg, k, "true" if loads == "staged" else "false", row[best], note))
PY
column -t -s $'\t' "$acc" > "$out/accuracy.txt" 2> /dev/null || cp "$acc" "$out/accuracy.txt"
{ echo; cat "$out/ratios.txt"; echo; echo "SSD kernels"; grep -E "^BM_gpu" "$out/bench_ssd.log" 2> /dev/null
  echo; echo "Video end to end"; cat "$out/video.txt" 2> /dev/null
  echo; echo "Accuracy (%)"; cat "$out/accuracy.txt"; } >> "$log"
cat "$log"
rm -rf "$W"
