#!/usr/bin/env python3
"""Host-to-host SGM against libSGM over several rounds of our benchmark.

Usage: sgm_host_rounds.py SGM_VS_OUTDIR [MORE_BENCH_JSON ...]
SGM_VS_OUTDIR is an output folder of sgm_vs_libsgm.sh (its bench_sgm_synthetic.json is round 1 and
its libsgm_speed.jsonl holds libSGM's host-to-host medians); each further file is a
bench_stereo_sgm --benchmark_filter=BM_sgm_gpu_host JSON from the same GPU run. Prints per setting
our rounds, their median and the ratio libSGM / ours, pageable and pinned, and the lowest ratio."""
import json
import os
import statistics
import sys


def ours(path):
    r = {}
    for b in json.load(open(path))["benchmarks"]:
        name = b["name"].split("/iter")[0]
        if name.startswith("BM_sgm_gpu_host/"):
            r[name] = b["median_ms"]
    return r


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    vs = sys.argv[1]
    rounds = [ours(os.path.join(vs, "bench_sgm_synthetic.json"))] + [ours(f) for f in sys.argv[2:]]
    lib = {}
    for line in open(os.path.join(vs, "libsgm_speed.jsonl")):
        j = json.loads(line)
        if j.get("pair") == "synthetic":
            lib[(j["r"]["disp"], j["r"]["paths"], j["setting"])] = j["r"]
    names = ["dense", "default", "subpixel"]
    print("Host to host, 1920x1080: ours in %d round(s), their median; libSGM from the table's run; ratio = "
          "libSGM / ours" % len(rounds))
    print("disp paths setting   | pageable: ours per round -> median, libSGM, ratio | pinned: the same")
    worst = None
    for d in (64, 128, 256):
        for p in (4, 8):
            for si, s in enumerate(names):
                cols = []
                for pin in (0, 1):
                    key = "BM_sgm_gpu_host/%d/%d/%d/%d" % (d, p, si, pin)
                    v = [r[key] for r in rounds if key in r]
                    l = lib.get((d, p, s), {}).get("host_pinned_median_ms" if pin else "host_median_ms")
                    if not v or not l:
                        cols.append("-")
                        continue
                    m = statistics.median(v)
                    worst = l / m if worst is None else min(worst, l / m)
                    cols.append("%s -> %.3f, %.3f, %.2fx" % (" ".join("%.3f" % x for x in v), m, l, l / m))
                print("%4d %5d %-9s | %s | %s" % (d, p, s, cols[0], cols[1]))
    if worst is not None:
        print("lowest ratio: %.2fx (target >= 1.75x)" % worst)


if __name__ == "__main__":
    main()
