#!/usr/bin/env bash
# `barracuda_exact map` end to end, FASTQ.gz -> BAM, on READS (default 10 M) simulated 100 bp E. coli
# reads made on the GPU host (bc_simreads: gzip FASTQ, 50% exact, else 1-4 substitutions, 2% with a
# 1-3 base indel, both strands), from the bundle (`make bundle`), in one device call (~4-5 minutes on
# a 16-core H100 host):
#   exact   --exact, GPU backend then CPU backend (their BAMs compared byte for byte);
#   inexact bwa aln + samse (the default mode), GPU backend then CPU backend (BAMs compared);
#   peer    bwa aln -t N + bwa samse on the first PEER reads (default 1 M), timed apart, and our GPU
#           records on the same reads against bwa's (bc_sam_agree);
#   stages  bench_barracuda_exact's BM_InexactSamseStage (the host's work per read after the search,
#           positions on the host or from the GPU) and BM_InexactMapStage/gpu on 1 M reads;
#   pairs   PAIRS (default 2.5 M) simulated pairs (bc_simreads --pairs: fragments of 300 +- 30 bp,
#           the ends on opposite strands, the same error model) mapped as bwa aln + sampe, GPU backend
#           then CPU backend (their BAMs' records compared: decompressed, headers skipped);
# each with --json: every stage's busy seconds and reads/s (inflate, scan, parse, search/match,
# kernel, transfer, position lookup, samse, format, write) and the peak RSS. summary.txt: one line per
# run (reads/s end to end, GPU/CPU ratio, the busiest stages) and where the limit is.
# Run from the repository root. Usage: pipeline_10m.sh BUNDLE OUTDIR [READS] [PEER] [PAIRS]
set -uo pipefail
b=$(cd "${1:?usage: pipeline_10m.sh BUNDLE OUTDIR [READS] [PEER] [PAIRS]}" && pwd)
out=${2:?OUTDIR}
N=${3:-10000000}
PEER=${4:-1000000}
PAIRS=${5:-2500000}
mkdir -p "$out"
out=$(cd "$out" && pwd)
W=$(mktemp -d /tmp/bc-10m.XXXXXX)
trap 'rm -rf "$W"' EXIT
. "$b/env.sh" "$W/nvrtc-cache"
T=$(nproc)
summary="$out/summary.txt"
{ nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,memory.total --format=csv
  echo "host cores: $T; $(grep -m1 'model name' /proc/cpuinfo)"; free -g | head -2; } > "$summary" 2>&1
now() { date +%s.%N; }
# step NAME CAP_S CMD...: stdout to OUT/NAME.json (the --json runs) or NAME.out, stderr to NAME.log
step() {
  local name=$1 cap=$2
  shift 2
  local t0 rc
  t0=$(now)
  timeout "$cap" "$@" > "$out/$name.out" 2> "$out/$name.log"
  rc=$?
  [ -s "$out/$name.out" ] && grep -q '^{' "$out/$name.out" && mv "$out/$name.out" "$out/$name.json"
  printf '%-16s exit %3d, %7.1f s\n' "$name" "$rc" "$(awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }')" >> "$summary"
  return $rc
}
ref="$EVK_DATA_DIR/genomes/NC_008253.fna.gz"
[ -f "$ref" ] || { echo "no E. coli genome in the bundle ($ref)" | tee -a "$summary"; exit 1; }
gzip -dc "$ref" > "$W/ecoli.fa"
step index 120 barracuda_exact index --json "$W/ecoli.fa"
step simulate 300 bc_simreads "$W/ecoli.fa" "$N" "$W/reads.fq.gz" 100 1 "$T"
step simulate_peer 120 bc_simreads "$W/ecoli.fa" "$PEER" "$W/peer.fq.gz" 100 1 "$T"
ls -l "$W"/*.fq.gz >> "$summary"
map() {  # NAME CAP ARGS...
  local name=$1 cap=$2
  shift 2
  step "$name" "$cap" barracuda_exact map -v --json -t 0 "$@"
}
map exact_gpu 240 --exact --backend gpu -l 6 "$W/ecoli.fa" "$W/reads.fq.gz" -o "$W/exact_gpu.bam"
map exact_cpu 240 --exact --backend cpu -l 6 "$W/ecoli.fa" "$W/reads.fq.gz" -o "$W/exact_cpu.bam"
ls -l "$W"/exact_*.bam >> "$summary"
# what compression costs: the same GPU run at level 1 and with uncompressed BGZF blocks (-u)
map exact_gpu_l1 240 --exact --backend gpu -l 1 "$W/ecoli.fa" "$W/reads.fq.gz" -o "$W/exact_gpu_l1.bam"
map exact_gpu_u 240 --exact --backend gpu -u "$W/ecoli.fa" "$W/reads.fq.gz" -o "$W/exact_gpu_u.bam"
map exact_cpu_l1 240 --exact --backend cpu -l 1 "$W/ecoli.fa" "$W/reads.fq.gz" -o "$W/exact_cpu_l1.bam"
ls -l "$W"/exact_*_l1.bam "$W"/exact_gpu_u.bam >> "$summary"
rm -f "$W"/exact_*_l1.bam "$W"/exact_gpu_u.bam
# the same reads as BGZF (blocks inflated in parallel, where plain gzip is one thread's work)
step split_bgzf 120 barracuda_exact split -n 1 -p "$W/bgzf" "$W/reads.fq.gz"
map exact_gpu_l1_bgzf 240 --exact --backend gpu -l 1 "$W/ecoli.fa" "$W/bgzf0.fq.gz" -o "$W/exact_gpu_l1_bgzf.bam"
rm -f "$W/exact_gpu_l1_bgzf.bam" "$W/bgzf0.fq.gz"
cmp -s "$W/exact_gpu.bam" "$W/exact_cpu.bam" && echo "exact: GPU and CPU BAMs identical" >> "$summary" ||
  echo "exact: GPU and CPU BAMs DIFFER" >> "$summary"
rm -f "$W"/exact_*.bam
map inexact_gpu 240 --backend gpu -l 6 "$W/ecoli.fa" "$W/reads.fq.gz" -o "$W/inexact_gpu.bam"
map inexact_cpu 300 --backend cpu -l 6 "$W/ecoli.fa" "$W/reads.fq.gz" -o "$W/inexact_cpu.bam"
map inexact_gpu_l1 240 --backend gpu -l 1 "$W/ecoli.fa" "$W/reads.fq.gz" -o "$W/inexact_gpu_l1.bam"
rm -f "$W/inexact_gpu_l1.bam"
cmp -s "$W/inexact_gpu.bam" "$W/inexact_cpu.bam" && echo "inexact: GPU and CPU BAMs identical" >> "$summary" ||
  echo "inexact: GPU and CPU BAMs DIFFER (or a run failed)" >> "$summary"
rm -f "$W"/inexact_*.bam
# GPU vs CPU backend records: the timed BAMs differ in their @PG line (the command line names the
# backend), so the records are compared as SAM on the PEER reads, headers left out
for mode in exact inexact; do
  flag=$([ $mode = exact ] && echo --exact)
  barracuda_exact map $flag -t 0 --backend gpu "$W/ecoli.fa" "$W/peer.fq.gz" -o "$W/g.sam" 2> /dev/null
  barracuda_exact map $flag -t 0 --backend cpu "$W/ecoli.fa" "$W/peer.fq.gz" -o "$W/c.sam" 2> /dev/null
  if cmp -s <(grep -v '^@' "$W/g.sam") <(grep -v '^@' "$W/c.sam") && [ -s "$W/g.sam" ]; then
    echo "$mode: GPU and CPU records identical on $(grep -vc '^@' "$W/g.sam") SAM records" >> "$summary"
  else
    echo "$mode: GPU and CPU records DIFFER on the peer reads" >> "$summary"
  fi
  rm -f "$W/g.sam" "$W/c.sam"
done
# the peer: bwa's own index (bwa index writes the same file names as ours: another folder)
mkdir -p "$W/bwa" && cp "$W/ecoli.fa" "$W/bwa/ecoli.fa"
step bwa_index 120 bwa index "$W/bwa/ecoli.fa"
step bwa_aln 240 sh -c "bwa aln -t $T '$W/bwa/ecoli.fa' '$W/peer.fq.gz' > '$W/peer.sai'"
step bwa_samse 240 sh -c "bwa samse '$W/bwa/ecoli.fa' '$W/peer.sai' '$W/peer.fq.gz' > '$W/bwa.sam'"
map inexact_gpu_peer 120 --backend gpu "$W/ecoli.fa" "$W/peer.fq.gz" -o "$W/ours.sam"
bc_sam_agree --label "$PEER simulated E. coli 100 bp reads, GPU backend vs bwa aln | samse" --list 20 "$W/ours.sam" "$W/bwa.sam" \
  > "$out/agreement.txt" 2>&1
echo "agreement with bwa: exit $?; $(head -2 "$out/agreement.txt" | tr '\n' ' ')" >> "$summary"
# the host side of inexact mapping alone, on 1 M reads (art_illumina in the bundle, else an error
# model): samse + BAM records with positions on the host or given by the GPU, and the GPU search
step samse_stage 240 env BC_BENCH_INEXACT_READS=1000000 TMPDIR="$W" bench_barracuda_exact \
  --benchmark_filter='InexactSamseStage/ecoli|InexactMapStage/ecoli/gpu' --benchmark_counters_tabular=true \
  --benchmark_out="$out/samse_stage.json" --benchmark_out_format=json
grep -E '^BM_' "$out/samse_stage.out" 2> /dev/null | cut -c1-220 >> "$summary"
# pairs (bwa aln + sampe through the streaming pipeline), GPU then CPU backend
step simulate_pairs 300 bc_simreads --pairs "$W/pairs_2.fq.gz" "$W/ecoli.fa" "$PAIRS" "$W/pairs_1.fq.gz" 100 2 "$T"
map pairs_gpu 300 --backend gpu "$W/ecoli.fa" "$W/pairs_1.fq.gz" "$W/pairs_2.fq.gz" -o "$W/pairs_gpu.bam"
map pairs_cpu 400 --backend cpu "$W/ecoli.fa" "$W/pairs_1.fq.gz" "$W/pairs_2.fq.gz" -o "$W/pairs_cpu.bam"
# the records compared: the BAMs decompressed, each without its header (whose @PG names the backend;
# htslib flushes the header's BGZF blocks, so the records' bytes do not depend on it)
bam_header_len() {  # bytes of a BAM's header (magic, text, references) once decompressed
  { gzip -dc "$1" 2> /dev/null || true; } | python3 -c '
import struct, sys
f = sys.stdin.buffer
h = f.read(8)
n = 8 + struct.unpack("<i", h[4:8])[0]
f.read(n - 8)
(nref,) = struct.unpack("<i", f.read(4))
n += 4
for _ in range(nref):
    (l,) = struct.unpack("<i", f.read(4))
    f.read(l + 4)
    n += 8 + l
print(n)'
}
if [ -s "$W/pairs_gpu.bam" ] && [ -s "$W/pairs_cpu.bam" ] && h1=$(bam_header_len "$W/pairs_gpu.bam") &&
   h2=$(bam_header_len "$W/pairs_cpu.bam") && cmp -s -i "$h1:$h2" <(gzip -dc "$W/pairs_gpu.bam") <(gzip -dc "$W/pairs_cpu.bam"); then
  echo "pairs: GPU and CPU BAM records identical (headers of $h1 and $h2 bytes skipped)" >> "$summary"
else
  echo "pairs: GPU and CPU BAM records DIFFER (or a run failed)" >> "$summary"
fi
rm -f "$W"/pairs_*.bam
# the figures
if command -v python3 > /dev/null; then
  python3 - "$out" "$N" "$PEER" >> "$summary" <<'PY'
import json, os, re, sys
out, n, peer = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def load(name):
    try:
        return json.load(open(os.path.join(out, name + ".json")))
    except Exception:
        return None
def step_s(name):
    m = re.search(r"^%s +exit +(\d+), +([0-9.]+) s" % name, open(os.path.join(out, "summary.txt")).read(), re.M)
    return (int(m.group(1)), float(m.group(2))) if m else (None, None)
print("\nend to end, FASTQ.gz -> BAM (reads/s; stages: busy seconds, summed over lanes for search/match)")
rate = {}
for name in ["exact_gpu", "exact_cpu", "exact_gpu_l1", "exact_gpu_u", "exact_cpu_l1", "exact_gpu_l1_bgzf", "inexact_gpu", "inexact_cpu",
             "inexact_gpu_l1", "inexact_gpu_peer", "pairs_gpu", "pairs_cpu"]:
    j = load(name)
    if not j:
        print("%-16s no result" % name)
        continue
    sec = j["seconds"]
    r = j["reads"] / sec["total"] if sec["total"] else 0
    rate[name] = r
    busy = sorted(((v, k) for k, v in sec.items() if k not in ("total", "index")), reverse=True)[:5]
    print("%-16s %9d reads %7.2f s %10.0f reads/s  rss %6.0f MiB  cores used %4.1f of %d  %s" % (
        name, j["reads"], sec["total"], r, j.get("peak_rss_mib", 0), j.get("cpu_seconds", 0) / sec["total"] if sec["total"] else 0,
        j.get("threads", 0), ", ".join("%s %.2f" % (k, v) for v, k in busy)))
for mode in ["exact", "inexact", "exact_l1", "pairs"]:
    g = rate.get(mode + "_gpu") if mode != "exact_l1" else rate.get("exact_gpu_l1")
    c = rate.get(mode + "_cpu") if mode != "exact_l1" else rate.get("exact_cpu_l1")
    if g and c:
        print("%s: GPU %.2f M reads/s, CPU backend %.2f M reads/s: GPU/CPU %.1fx" % (mode, g / 1e6, c / 1e6, g / c))
rc1, a = step_s("bwa_aln")
rc2, s = step_s("bwa_samse")
if a and s:
    print("bwa aln -t N: %.0f reads/s; + samse: %.0f reads/s end to end (FASTQ.gz -> SAM) on %d reads; "
          "ours (GPU, same reads): %.0f reads/s" % (peer / a, peer / (a + s), peer, rate.get("inexact_gpu_peer", 0)))
j = load("inexact_gpu")
if j:
    sec, t, cores = j["seconds"], j["seconds"]["total"], j["threads"]
    host = ("inflate", "scan", "parse", "sam", "format", "write")
    used = sum(sec.get(k, 0) for k in host)
    print("inexact GPU: host stages %s; their busy seconds are %.0f%% of %d threads x %.1f s; GPU lanes: search %.2f "
          "(kernel %.2f, transfer %.2f, CPU fallback %.2f, position lookup %.2f)" % (
              ", ".join("%s %.2f" % (k, sec.get(k, 0)) for k in host), 100 * used / (cores * t) if t else 0, cores, t,
              sec.get("search", 0), sec.get("kernel", 0), sec.get("transfer", 0), sec.get("fallback", 0),
              sec.get("position_lookup", 0)))
j = load("pairs_gpu")
if j:
    sec, t, cores = j["seconds"], j["seconds"]["total"], j["threads"]
    host = ("inflate", "scan", "parse", "sam", "format", "write")
    print("pairs GPU (%d pairs, %d reads, %d proper-pair reads, %d rescued): host stages %s; GPU lanes: search %.2f "
          "(kernel %.2f, transfer %.2f, CPU fallback %.2f, position lookup %.2f); sampe %.2f s in the ordered stage" % (
              j["pairs"], j["reads"], j["proper_pairs_reads"], j["mate_rescued"],
              ", ".join("%s %.2f" % (k, sec.get(k, 0)) for k in host), sec.get("search", 0), sec.get("kernel", 0),
              sec.get("transfer", 0), sec.get("fallback", 0), sec.get("position_lookup", 0), sec.get("sam", 0)))
PY
else
  grep -h '"end_to_end"' "$out"/*.json >> "$summary"
fi
cat "$summary"
