#!/usr/bin/env bash
# One device session for the GI engine's speed work: the engine's GPU tests (worker isolation, ticks,
# loop-guard deadline), then a pop-300 run of one real app for as many generations as fit, with its
# generation log (per-generation time split) and per-candidate log (event time + per-SM ticks),
# packed into OUTDIR/gi.tar.gz after each step.
# Usage (copy into the bundle root): gi_speed.sh OUTDIR [TOOL] [POP] [GENERATIONS] [BUDGET_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: gi_speed.sh OUTDIR [TOOL] [POP] [GENERATIONS] [BUDGET_S]}
tool=${2:-reg_deform}
pop=${3:-300}
gens=${4:-8}
budget=${5:-400}
W=$(mktemp -d /tmp/gi-speed.XXXXXX)
mkdir -p "$out"
. "$here/env.sh" "$W/nvrtc-cache"
t0=$SECONDS
left() { echo $((budget - (SECONDS - t0))); }
step() { echo "[$((SECONDS - t0)) s] $*" >> "$W/steps.log"; }
pack() { tar czf "$out/gi.tar.gz" -C "$W" --exclude nvrtc-cache . 2>/dev/null; }
cd "$W"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > gpu.txt 2>&1
nproc > cpus.txt
step "gi GPU tests"
timeout 150 "$here/bin/gi_gpu_tests" --gtest_filter='GiWorker.*:GiRun.*' > tests.out 2>&1
step "gi GPU tests rc=$?"
pack
step "$tool gi run --pop $pop --generations $gens --seed 1"
timeout $(( $(left) - 10 )) $tool gi run --pop "$pop" --generations "$gens" --seed 1 --out R --json > run.json 2> run.log
step "gi run rc=$?"
pack
