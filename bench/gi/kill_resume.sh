#!/usr/bin/env bash
# GI under SIGKILL on the GPU: `gi run` on the toy problem (the bundle's gi_gpu_tests doubles as a
# toy GI tool) is killed with SIGKILL at random points 10 times and resumed each time, next to an
# uninterrupted run with the same seed. Checks, per kill: no checkpointed generation is lost (the
# checkpoint never goes back; only the generation in progress is redone) and the checkpoint still
# loads; at the end: the killed run completed every generation, its logs hold each generation
# exactly once, no worker process is left, GPU memory is back at its baseline, and the first
# generation (fixed by the seed alone) and the training case seeds equal the uninterrupted run's.
# Fitness is measured time, so two runs with the same seed may part after the first generation
# even without kills; whether the final best genome is the same is reported, not required (the
# exact equality under kills is tests/gi/kill_resume_test.cpp, with a deterministic evaluator).
# Usage (repository root): bash bench/gi/kill_resume.sh BUNDLE OUTDIR [POP] [GENERATIONS] [KILLS]
set -uo pipefail
b=$(cd "${1:?usage: kill_resume.sh BUNDLE OUTDIR [POP] [GENERATIONS] [KILLS]}" && pwd)
out=${2:?OUTDIR}
pop=${3:-24}
gens=${4:-8}
kills=${5:-10}
mkdir -p "$out"
out=$(cd "$out" && pwd)
W=$(mktemp -d /tmp/gi-kill.XXXXXX)
. "$b/env.sh" "$W/nvrtc-cache"
tool="$b/bin/gi_gpu_tests"
log="$out/kill_resume.txt"
: > "$log"
say() { echo "$*" | tee -a "$log"; }
fail=0
check() { if ! eval "$1"; then say "FAIL: $2"; fail=1; else say "ok: $2"; fi; }
gen_of() { grep -o '"next_generation": *[0-9]*' "$1/checkpoint.json" 2>/dev/null | grep -o '[0-9]*$' || echo 0; }
mem() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 2>/dev/null | head -1; }
workers() { pgrep -f "exe gi worker" | wc -l; }

base_mem=$(mem)
say "GPU memory before: ${base_mem} MiB; workers before: $(workers)"
t0=$(date +%s)
"$tool" gi run --pop "$pop" --generations "$gens" --seed 7 --out "$W/full" --json > "$out/full.json" 2> "$out/full.log"
say "uninterrupted run: exit $? in $(( $(date +%s) - t0 )) s"

run_dir="$W/killed"
RANDOM=7
k=0
while [ "$k" -lt "$kills" ]; do
  before=$(gen_of "$run_dir")
  if [ -f "$run_dir/checkpoint.json" ]; then args=(--resume "$run_dir"); else args=(--pop "$pop" --generations "$gens" --seed 7 --out "$run_dir"); fi
  "$tool" gi run "${args[@]}" --json >> "$out/killed.json" 2>> "$out/killed.log" &
  pid=$!
  # kill after 1..12 s, polling the checkpoint: the last generation seen checkpointed must survive
  wait_ds=$(( 10 + RANDOM % 110 ))
  seen=$before
  for ((i = 0; i < wait_ds; i++)); do
    sleep 0.1
    kill -0 "$pid" 2> /dev/null || break
    g=$(gen_of "$run_dir"); [ "$g" -gt "$seen" ] && seen=$g
  done
  if ! kill -0 "$pid" 2> /dev/null; then
    wait "$pid"; say "run finished before kill $((k + 1)) (exit $?)"; break
  fi
  kill -9 "$pid"
  wait "$pid" 2> /dev/null
  k=$((k + 1))
  after=$(gen_of "$run_dir")
  say "kill $k after ${wait_ds}00 ms: checkpoint $before -> seen $seen -> after kill $after"
  check "[ $after -ge $seen ] && [ $after -ge $before ]" "kill $k lost no checkpointed generation"
  if [ -f "$run_dir/checkpoint.json" ]; then
    check "python3 -c 'import json,sys; json.load(open(sys.argv[1]))' '$run_dir/checkpoint.json'" "kill $k: checkpoint is whole JSON"
  fi
  sleep 1  # the orphaned workers see their pipe close and exit
done
say "kills: $k"
if [ -f "$run_dir/checkpoint.json" ]; then
  "$tool" gi run --resume "$run_dir" --json >> "$out/killed.json" 2>> "$out/killed.log"
else
  "$tool" gi run --pop "$pop" --generations "$gens" --seed 7 --out "$run_dir" --json >> "$out/killed.json" 2>> "$out/killed.log"
fi
say "final resume: exit $?"
check "[ -f '$run_dir/best.genome' ]" "the killed run completed (best.genome written)"
check "[ \$(grep -c . '$run_dir/generations.jsonl') -eq $gens ]" "generations.jsonl holds $gens generations"
python3 - "$W/full" "$run_dir" "$pop" >> "$log" 2>&1 <<'PY'
import json, sys, collections
full, killed, pop = sys.argv[1], sys.argv[2], int(sys.argv[3])
def cands(d):
    by = collections.defaultdict(list)
    for l in open(d + "/candidates.jsonl"):
        j = json.loads(l); by[j["generation"]].append(j["genome"])
    return by
def gens(d):
    return [json.loads(l) for l in open(d + "/generations.jsonl") if l.strip()]
cf, ck = cands(full), cands(killed)
ok = True
ngen = len(gens(killed))
if sorted(ck) != list(range(ngen)):
    print("FAIL: candidates.jsonl covers generations %s, expected 0..%d" % (sorted(ck), ngen - 1)); ok = False
for g, c in sorted(ck.items()):
    if not (0 < len(c) <= pop) or len(set(c)) != len(c):
        print("FAIL: generation %d logged %d candidates (%d distinct): a generation logged twice or cut" % (g, len(c), len(set(c)))); ok = False
print("info: candidates per generation, killed run %s, uninterrupted %s" % ([len(ck[g]) for g in sorted(ck)], [len(cf[g]) for g in sorted(cf)]))
print(("ok" if sorted(ck[0]) == sorted(cf[0]) else "FAIL") + ": generation 0 (fixed by the seed) equals the uninterrupted run's")
ok &= sorted(ck[0]) == sorted(cf[0])
gf, gk = gens(full), gens(killed)
seeds_ok = [x["case_seed"] for x in gf] == [x["case_seed"] for x in gk]
print(("ok" if seeds_ok else "FAIL") + ": training case seeds per generation equal")
ok &= seeds_ok
same = [a["best_genome"] == b["best_genome"] for a, b in zip(gf, gk)]
print("info: per-generation best genome equal to the uninterrupted run's: %s" % same)
bf = json.load(open(full + "/checkpoint.json"))["best"]; bk = json.load(open(killed + "/checkpoint.json"))["best"]
print("info: final best: uninterrupted %.4fx [%s], killed+resumed %.4fx [%s]" % (bf["speedup"], bf["genome"], bk["speedup"], bk["genome"]))
sys.exit(0 if ok else 1)
PY
check "[ $? -eq 0 ]" "logs and the seed-determined parts equal the uninterrupted run's"
for i in $(seq 30); do [ "$(workers)" -eq 0 ] && break; sleep 1; done
check "[ $(workers) -eq 0 ]" "no worker process left"
used=$(mem)
for i in $(seq 30); do [ "$used" -le $(( base_mem + 64 )) ] && break; sleep 1; used=$(mem); done
check "[ $used -le $(( base_mem + 64 )) ]" "GPU memory back at its baseline ($base_mem MiB before, $used MiB after)"
cp -r "$run_dir" "$out/killed-run" 2> /dev/null; cp -r "$W/full" "$out/full-run" 2> /dev/null
rm -rf "$W"
say "result: $([ $fail -eq 0 ] && echo PASS || echo FAIL)"
exit $fail
