#!/usr/bin/env bash
# Two builds of our SGM side by side with libSGM on one GPU, in one run: A (the build before a
# change) and B (after), at 1920x1080 on libSGM's synthetic pair (saved once, fed to all three),
# 64/128/256 disparities x 4/8 paths, the default setting (BM_sgm_gpu/D/P/1, device-resident) and
# its stage breakdown (BM_sgm_gpu_stages/D/P/1). Rounds alternate A, B, libSGM so clock and thermal
# drift hit all three alike; per setting the summary gives the median over rounds of each run's
# median, B/A and libSGM/B; settings 0 (dense) and 2 (sub-pixel) too where SGM_AB_FILTER runs them
# (ours only: libSGM is run at its defaults).
# Usage: sgm_ab.sh BUNDLE_A BUNDLE_B OUTDIR LIBSGM_BENCH [ROUNDS]
#   SGM_AB_FILTER: the benchmark regex (default the six default settings and their stages)
#   SGM_AB_ARGS_A / SGM_AB_ARGS_B: bench_stereo_sgm flags for A's / B's runs (e.g. --sgm-k3=8)
set -uo pipefail
a=$(cd "${1:?usage: sgm_ab.sh BUNDLE_A BUNDLE_B OUTDIR LIBSGM_BENCH [ROUNDS]}" && pwd)
b=$(cd "${2:?BUNDLE_B}" && pwd)
out=${3:?OUTDIR}
lib=${4:?LIBSGM_BENCH}
rounds=${5:-3}
filter=${SGM_AB_FILTER:-BM_sgm_gpu(_stages)?/(64|128|256)/(4|8)/1/}
mkdir -p "$out"
out=$(cd "$out" && pwd)
W=$(mktemp -d /tmp/sgm-ab.XXXXXX)
log="$out/ab-summary.txt"
{ echo "A $(cat "$a/COMMIT" 2>/dev/null) ${SGM_AB_ARGS_A:-}"; echo "B $(cat "$b/COMMIT" 2>/dev/null) ${SGM_AB_ARGS_B:-}"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader; } > "$log"
"$lib" --synthetic 1920x1080 --disp 128 --paths 8 --reps 3 --no-host --save-pair "$W/syn" > /dev/null 2>> "$log"
export EVK_BENCH_LEFT="$W/syn_L.pgm" EVK_BENCH_RIGHT="$W/syn_R.pgm"
run_ours() {  # NAME BUNDLE FLAGS ROUND
  ( . "$2/env.sh" "$W/nvrtc-$1" > /dev/null
    # shellcheck disable=SC2086
    timeout 200 bench_stereo_sgm $3 --benchmark_filter="$filter" --benchmark_out="$out/$1-$4.json" \
      --benchmark_out_format=json > "$out/$1-$4.log" 2>&1
    echo "$1 round $4: exit $?" >> "$log" )
}
for r in $(seq 1 "$rounds"); do
  run_ours A "$a" "${SGM_AB_ARGS_A:-}" "$r"
  run_ours B "$b" "${SGM_AB_ARGS_B:-}" "$r"
  : > "$out/lib-$r.jsonl"
  for d in 64 128 256; do
    for p in 4 8; do
      line=$(timeout 60 "$lib" "$W/syn_L.pgm" "$W/syn_R.pgm" --disp $d --paths $p --reps 50 2>> "$log")
      echo "{\"d\":$d,\"p\":$p,\"r\":$line}" >> "$out/lib-$r.jsonl"
    done
  done
done
python3 - "$out" "$rounds" >> "$log" 2>&1 <<'PY'
import json, sys, statistics as st
out, rounds = sys.argv[1], int(sys.argv[2])
ours = {"A": {}, "B": {}}
for who in ours:
    for r in range(1, rounds + 1):
        try:
            j = json.load(open(f"{out}/{who}-{r}.json"))
        except Exception as e:
            print(who, r, "unreadable:", e); continue
        for bm in j["benchmarks"]:
            name = bm["name"].split("/")
            key = (name[0], int(name[1]), int(name[2]), int(name[3]))
            ours[who].setdefault(key, []).append(bm)
lib = {}
for r in range(1, rounds + 1):
    for line in open(f"{out}/lib-{r}.jsonl"):
        try:
            j = json.loads(line)
            lib.setdefault((j["d"], j["p"]), []).append(j["r"]["median_ms"])
        except Exception:
            pass
def med(who, bmname, d, p, field, s=1):
    v = [b[field] for b in ours[who].get((bmname, d, p, s), []) if field in b]
    return st.median(v) if v else float("nan")
print("setting  libSGM_ms  A_ms  B_ms  B/A  lib/A  lib/B | A agg wta  B agg wta (stage medians, ms)")
for d in (64, 128, 256):
    for p in (4, 8):
        l = st.median(lib[(d, p)]) if (d, p) in lib else float("nan")
        A = med("A", "BM_sgm_gpu", d, p, "median_ms"); B = med("B", "BM_sgm_gpu", d, p, "median_ms")
        print(f"{d}/{p}  {l:.3f}  {A:.3f}  {B:.3f}  {B/A:.3f}  {l/A:.3f}  {l/B:.3f} | "
              f"{med('A','BM_sgm_gpu_stages',d,p,'aggregate_ms'):.3f} {med('A','BM_sgm_gpu_stages',d,p,'wta_ms'):.3f}  "
              f"{med('B','BM_sgm_gpu_stages',d,p,'aggregate_ms'):.3f} {med('B','BM_sgm_gpu_stages',d,p,'wta_ms'):.3f}")
for s, sname in ((0, "dense"), (2, "subpixel")):
    for d in (64, 128, 256):
        for p in (4, 8):
            A = med("A", "BM_sgm_gpu", d, p, "median_ms", s); B = med("B", "BM_sgm_gpu", d, p, "median_ms", s)
            if A == A or B == B:
                print(f"{sname} {d}/{p}  A {A:.3f}  B {B:.3f}  B/A {B/A:.3f} | wta A {med('A','BM_sgm_gpu_stages',d,p,'wta_ms',s):.3f} "
                      f"B {med('B','BM_sgm_gpu_stages',d,p,'wta_ms',s):.3f}")
PY
cat "$log"
