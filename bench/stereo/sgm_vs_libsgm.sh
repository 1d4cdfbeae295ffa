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
# Usage: sgm_vs_libsgm.sh BUNDLE OUTDIR [LIBSGM_BENCH]
set -uo pipefail
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
timeout 300 bench_stereo_sgm --benchmark_filter='BM_sgm_gpu' --benchmark_out="$out/bench_sgm_synthetic.json" \
  --benchmark_out_format=json --benchmark_counters_tabular=true > "$out/bench_sgm_synthetic.log" 2>&1
echo "bench_stereo_sgm (synthetic): exit $?" >> "$log"

# ---- tuning sweep: disparities per lane and census loads (same results, speed only) -----------------
: > "$out/tuning.txt"
for loads in staged direct; do
  for k in 8 16 32; do
    EVK_SGM_K=$k EVK_SGM_LOADS=$loads timeout 120 bench_stereo_sgm --benchmark_filter='BM_sgm_gpu/(64|128|256)/8/1/' \
      --benchmark_format=console > "$W/tune.log" 2>&1
    sed -n "s/^BM_sgm_gpu\/\([0-9]*\)\/8\/1\/[^ ]* *\([0-9.]*\) us.*/$loads K $k: \1 disparities \2 us/p" "$W/tune.log" >> "$out/tuning.txt"
  done
done

# ---- video: end to end from PGM files (30 frames of the synthetic pair) -----------------------------
if [ -f "$W/syn_L.pgm" ]; then
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
timeout 180 bench_stereo --benchmark_filter='BM_gpu_(original|expert)/(2|3)' --benchmark_counters_tabular=true \
  --benchmark_out="$out/bench_ssd.json" --benchmark_out_format=json > "$out/bench_ssd.log" 2>&1
echo "bench_stereo (SSD kernels): exit $?" >> "$log"

# ---- speed: the real pairs at the default setting -----------------------------------------------
pairs=("Tsukuba $SH/Tsukuba/imL.pgm $SH/Tsukuba/imR.pgm 64" "Venus $SH/Venus/imL.pgm $SH/Venus/imR.pgm 64"
       "aloe $PD/aloeL.pgm $PD/aloeR.pgm 256")
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

# ---- accuracy ---------------------------------------------------------------------------------------
acc="$out/accuracy.tsv"
printf 'pair\tmethod\tmode\tbad1\tbad2\tinvalid\n' > "$acc"
evalq() {  # MAP GT SCALE [MASK] -> "bad1 bad2 invalid"
  stereo eval "$1" "$2" --gt-scale "$3" ${4:+--mask "$4"} --json 2>> "$log" |
    python3 -c 'import json,sys; j=json.load(sys.stdin); print("%.2f\t%.2f\t%.2f" % (j["bad_1.0_percent"], j["bad_2.0_percent"], j["invalid_percent"]))'
}
accpairs=("Tsukuba $SH/Tsukuba 63 16 mask" "Venus $SH/Venus 63 8 mask" "aloe $PD 255 1 none")
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
import json, sys, os
out = sys.argv[1]
lib = {}
for line in open(os.path.join(out, "libsgm_speed.jsonl")) if os.path.exists(os.path.join(out, "libsgm_speed.jsonl")) else []:
    try:
        j = json.loads(line)
    except ValueError:
        continue
    r = j["r"]
    lib[(j["pair"], r["disp"], r["paths"], j["setting"])] = r
names = ["dense", "default", "subpixel"]
ours = {}
def load(pair, path):
    if not os.path.exists(path):
        return
    for bm in json.load(open(path)).get("benchmarks", []):
        parts = bm["name"].split("/")
        if bm.get("error_occurred"):
            continue
        kind = parts[0]
        if kind == "BM_sgm_gpu":
            d, p, s = int(parts[1]), int(parts[2]), names[int(parts[3])]
            ours[(pair, d, p, s, "device")] = bm["median_ms"]
        elif kind == "BM_sgm_gpu_host":
            d, p, s, pinned = int(parts[1]), int(parts[2]), names[int(parts[3])], int(parts[4])
            ours[(pair, d, p, s, "pinned" if pinned else "pageable")] = bm["median_ms"]
        elif kind == "BM_sgm_gpu_stages":
            d, p = int(parts[1]), int(parts[2])
            ours[(pair, d, p, "stages")] = bm
load("synthetic", os.path.join(out, "bench_sgm_synthetic.json"))
for pair in ("Tsukuba", "Venus", "aloe"):
    load(pair, os.path.join(out, "bench_sgm_%s.json" % pair))
print("Device-resident, median ms (ratio = libSGM / ours)")
print("%-10s %4s %5s %-9s %9s %9s %7s %7s" % ("pair", "disp", "paths", "setting", "libSGM", "ours", "ratio", "fps"))
for (pair, d, p, s), r in sorted(lib.items(), key=lambda kv: (kv[0][0] != "synthetic", kv[0])):
    o = ours.get((pair, d, p, s, "device"))
    l = r.get("median_ms")
    print("%-10s %4d %5d %-9s %9.3f %9s %7s %7s" % (pair, d, p, s, l or float("nan"),
          "%.3f" % o if o else "-", "%.2fx" % (l / o) if (o and l) else "-", "%.0f" % (1000 / o) if o else "-"))
print()
print("Host to host, median ms (1920x1080, default setting, 8 paths)")
print("%4s %9s %9s %7s   %9s %9s %7s" % ("disp", "lib page", "ours pg", "ratio", "lib pin", "ours pin", "ratio"))
for d in (64, 128, 256):
    r = lib.get(("synthetic", d, 8, "default"), {})
    op, oq = ours.get(("synthetic", d, 8, "default", "pageable")), ours.get(("synthetic", d, 8, "default", "pinned"))
    lp, lq = r.get("host_median_ms"), r.get("host_pinned_median_ms")
    f = lambda v: "%.3f" % v if v else "-"
    g = lambda a, b: "%.2fx" % (a / b) if (a and b) else "-"
    print("%4d %9s %9s %7s   %9s %9s %7s" % (d, f(lp), f(op), g(lp, op), f(lq), f(oq), g(lq, oq)))
print()
print("Our stages, median ms (default setting): census, aggregate, wta, post; GB/s of the path volumes")
for k, bm in sorted((k, v) for k, v in ours.items() if len(k) == 4):
    print("%-10s %4d %d paths: %.3f %.3f %.3f %.3f   aggregate %.0f GB/s, wta %.0f GB/s" % (
        k[0], k[1], k[2], bm["census_ms"], bm["aggregate_ms"], bm["wta_ms"], bm["post_ms"], bm["aggregate_GBps"], bm["wta_GBps"]))
PY
column -t -s $'\t' "$acc" > "$out/accuracy.txt" 2> /dev/null || cp "$acc" "$out/accuracy.txt"
{ echo; cat "$out/ratios.txt"; echo; echo "SSD kernels"; grep -E "^BM_gpu" "$out/bench_ssd.log"
  echo; echo "Tuning sweep (BM_sgm_gpu median)"; cat "$out/tuning.txt"
  echo; echo "Video end to end"; cat "$out/video.txt" 2> /dev/null
  echo; echo "Accuracy (%)"; cat "$out/accuracy.txt"; } >> "$log"
cat "$log"
rm -rf "$W"
