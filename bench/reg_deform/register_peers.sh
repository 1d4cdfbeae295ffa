#!/usr/bin/env bash
# `reg_deform register` beside NiftyReg's reg_f3d on the GPU host, one call, same inputs:
#  1. subject_T1_head -> icbm152_2009a 1 mm (and -> mni152 2 mm): our affine then our register, on
#     the GPU (default = evolved field kernel, and --kernel original) and the CPU; wall time of the
#     tool and its --json (per level: iterations, objective, seconds, field-kernel seconds);
#  2. NiftyReg (when its tarball is given): reg_aladin, then reg_f3d -platf 1 (CUDA) and -platf 0
#     (all cores) from that affine, and our register from the same affine (like for like);
#  3. NMI of every result as reg_measure -nmi computes it on its warped image;
#  4. known-deformation recovery on the GPU (reg_known, seeds 1 2 3, up to 8 mm) on both templates;
#  5. bench_reg_register (whole registration GPU/CPU and every stage at 1 mm).
# Usage (repository root, bundle built by `make bundle`):
#   bench/reg_deform/register_peers.sh BUNDLE OUTDIR [niftyreg-bin.tar.gz]
# Environment: PAIRS (default "1mm 2mm"), CPU=0 skips the CPU runs (ours and reg_f3d -platf 0: minutes
# at 1 mm), BENCH=0 skips bench_reg_register. Images go to a temporary folder; OUTDIR keeps only
# small files (summary, logs, --json, affine matrices).
set -uo pipefail
b=$(cd "${1:?usage: register_peers.sh BUNDLE OUTDIR [niftyreg-bin.tar.gz]}" && pwd)
out=${2:?OUTDIR}
nr_tgz=${3:-}
mkdir -p "$out"
out=$(cd "$out" && pwd)
. "$b/env.sh"
F="$EVK_SHARED_DATA/brain/subject_T1_head.nii.gz"
W=$(mktemp -d /tmp/regpeers.XXXXXX)
pairs=${PAIRS:-1mm 2mm}
cpu=${CPU:-1}
S="$out/summary.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv >> "$S" 2>&1 || true
echo "host cores: $(nproc)" >> "$S"
timed() {  # label, command...
  local t0 t1; t0=$(date +%s.%N); "${@:2}" > "$out/$1.out" 2> "$out/$1.err"; local rc=$?
  t1=$(date +%s.%N); printf '%-28s exit %d  %.2f s\n' "$1" "$rc" "$(awk "BEGIN{print $t1 - $t0}")" | tee -a "$S"
}
nmi() {  # label, warped image, reference
  [ -n "${nr:-}" ] || return 0
  echo "$1: $("$nr/bin/reg_measure" -ref "$3" -flo "$2" -nmi 2>&1 | grep NMI)" | tee -a "$S"
}
if [ -n "$nr_tgz" ] && [ -f "$nr_tgz" ]; then
  nr=$(mktemp -d /tmp/nr.XXXXXX); tar xzf "$nr_tgz" -C "$nr"
  export LD_LIBRARY_PATH="$nr/bin/lib:$LD_LIBRARY_PATH"
fi
for tag in $pairs; do
  case $tag in 1mm) R="$EVK_SHARED_DATA/brain/icbm152_2009a_t1_1mm.nii.gz" ;; *) R="$EVK_SHARED_DATA/brain/mni152_t1_2mm.nii.gz" ;; esac
  timed "affine_$tag" reg_deform affine --ref "$R" --flo "$F" -o "$out/aff_$tag.txt" --backend gpu
  runs="gpu:auto gpu:auto gpu:original"; [ "$cpu" = 1 ] && runs="$runs cpu:auto"
  for run in $runs; do  # the first GPU run also loads modules (cold)
    be=${run%%:*}; k=${run#*:}
    timed "ours_${tag}_${be}_$k" reg_deform register --ref "$R" --flo "$F" --aff "$out/aff_$tag.txt" \
      --cpp "$W/ours_${tag}_${be}_$k.cpp.nii.gz" --res "$W/ours_${tag}_${be}_$k.nii.gz" --pad nan \
      --backend "$be" --kernel "$k" --json -v
  done
  nmi "ours_${tag}_gpu_auto" "$W/ours_${tag}_gpu_auto.nii.gz" "$R"
  nmi "ours_${tag}_gpu_original" "$W/ours_${tag}_gpu_original.nii.gz" "$R"
  [ "$cpu" = 1 ] && nmi "ours_${tag}_cpu" "$W/ours_${tag}_cpu_auto.nii.gz" "$R"
  if [ -n "${nr:-}" ]; then
    timed "aladin_$tag" "$nr/bin/reg_aladin" -ref "$R" -flo "$F" -aff "$out/aladin_$tag.txt" -platf 1
    timed "f3d_${tag}_gpu" "$nr/bin/reg_f3d" -ref "$R" -flo "$F" -aff "$out/aladin_$tag.txt" \
      -cpp "$W/f3d_${tag}_gpu.cpp.nii.gz" -res "$W/f3d_${tag}_gpu.nii.gz" -platf 1
    [ "$cpu" = 1 ] && timed "f3d_${tag}_cpu" "$nr/bin/reg_f3d" -ref "$R" -flo "$F" -aff "$out/aladin_$tag.txt" \
      -cpp "$W/f3d_${tag}_cpu.cpp.nii.gz" -res "$W/f3d_${tag}_cpu.nii.gz" -platf 0 -omp "$(nproc)"
    timed "ours_${tag}_gpu_from_aladin" reg_deform register --ref "$R" --flo "$F" --aff "$out/aladin_$tag.txt" \
      --cpp "$W/ours_${tag}_aladin.cpp.nii.gz" --res "$W/ours_${tag}_aladin.nii.gz" --pad nan --backend gpu --json
    nmi "f3d_${tag}_gpu" "$W/f3d_${tag}_gpu.nii.gz" "$R"
    [ "$cpu" = 1 ] && nmi "f3d_${tag}_cpu" "$W/f3d_${tag}_cpu.nii.gz" "$R"
    nmi "ours_${tag}_gpu_from_aladin" "$W/ours_${tag}_aladin.nii.gz" "$R"
  fi
  timed "known_$tag" reg_known "$R" --backend gpu --seeds 1,2,3 --max-mm 8
  cat "$out/known_$tag.out" >> "$S"
done
[ "${BENCH:-1}" = 1 ] && "$b/bin/bench_reg_register" --benchmark_out="$out/bench_reg_register.json" --benchmark_out_format=json \
  --benchmark_counters_tabular=true > "$out/bench_reg_register.log" 2>&1
[ "${BENCH:-1}" = 1 ] && echo "bench_reg_register: exit $?" | tee -a "$S"
rm -rf "$W" "${nr:-/nonexistent}"
cat "$S"
