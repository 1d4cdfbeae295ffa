#!/usr/bin/env bash
# One device session for barracuda_exact's genetic improvement, from an OpenCV-free GPU bundle:
# the GPU tests, then `gi run` (pop x generations), `gi minimize`, `gi tune` of the original (the
# pre-tuned baseline) and `gi validate` on hold-out cases, everything packed into OUTDIR/gi.tar.gz
# after each step (so a time-out still returns what was done).
# Usage (copy into the bundle root): gi_run.sh OUTDIR [POP] [GENERATIONS] [BUDGET_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: gi_run.sh OUTDIR [POP] [GENERATIONS] [BUDGET_S]}
pop=${2:-60}
gens=${3:-10}
budget=${4:-430}
W=$(mktemp -d /tmp/bc-gi.XXXXXX)
mkdir -p "$out"
. "$here/env.sh" "$W/nvrtc-cache"
t0=$SECONDS
left() { echo $((budget - (SECONDS - t0))); }
step() { echo "[$((SECONDS - t0)) s] $*" >> "$W/steps.log"; }
pack() { tar czf "$out/gi.tar.gz" -C "$W" --exclude nvrtc-cache . 2>/dev/null; }
cd "$W"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > gpu.txt 2>&1
step "GPU tests"
timeout 120 "$here/run.sh" "$W/t" --tests-only > tests.out 2>&1
step "GPU tests rc=$?"
pack
bc=barracuda_exact
step "gi run --pop $pop --generations $gens --seed 1"
timeout $(( $(left) - 150 )) $bc gi run --pop "$pop" --generations "$gens" --seed 1 --out R --json > run.json 2> run.log
step "gi run rc=$?"
pack
[ -f R/best.genome ] || { step "no best.genome"; pack; exit 1; }
step "gi minimize"
timeout 70 $bc gi minimize R/best.genome -o min.genome --json > minimize.json 2> minimize.log
step "gi minimize rc=$?"
[ -f min.genome ] || cp R/best.genome min.genome
pack
step "gi tune (original)"
timeout $(( $(left) - 45 > 20 ? $(left) - 45 : 20 )) $bc gi tune -o pretuned.genome --json > tune.json 2> tune.log
step "gi tune rc=$?"
pack
pre=()
[ -f pretuned.genome ] && pre=(--pretuned pretuned.genome)
step "gi validate min.genome"
timeout $(( $(left) > 15 ? $(left) : 15 )) $bc gi validate min.genome "${pre[@]}" --cases 10 --json > validate.json 2> validate.log
step "gi validate rc=$?"
pack
if [ "$(left)" -gt 30 ]; then
  step "gi validate R/best.genome"
  timeout $(( $(left) - 5 )) $bc gi validate R/best.genome "${pre[@]}" --cases 10 --json > validate_best.json 2> validate_best.log
  step "gi validate best rc=$?"
fi
pack
