#!/usr/bin/env bash
# `reg_deform affine` beside NiftyReg's reg_aladin on the GPU host, one call, same inputs
# (subject_T1_head -> icbm152_2009a 1 mm, defaults): our GPU and CPU backends (wall time of the
# tool, file I/O included, plus its --json stage times; the two matrices must be identical), ours
# with --subvoxel, reg_aladin -platf 1 (CUDA) and -platf 0 (all cores), and reg_measure NMI of every
# result, two ways (own --res/-res with NaN padding, and reg_resample -inter 3 -pad 0 for all). Then
# known-transform recovery on the GPU, ours (defaults, --subvoxel) and reg_aladin (CUDA) on the same
# cases (affine_known.sh; python3's standard library only). Images go to a temporary
# folder: OUTDIR keeps only small files (summary.txt, logs, matrices).
# Usage (repository root, bundle built by `make bundle`, NiftyReg tarball carried beside it):
#   bench/reg_deform/affine_peers.sh BUNDLE OUTDIR [niftyreg-bin.tar.gz]
set -uo pipefail
b=$(cd "${1:?usage: affine_peers.sh BUNDLE OUTDIR [niftyreg-bin.tar.gz]}" && pwd)
out=${2:?OUTDIR}
nr_tgz=${3:-}
mkdir -p "$out"
out=$(cd "$out" && pwd)
img=$(mktemp -d /tmp/affine_peers.XXXXXX)
trap 'rm -rf "$img"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
. "$b/env.sh"
R="$EVK_SHARED_DATA/brain/icbm152_2009a_t1_1mm.nii.gz"
F="$EVK_SHARED_DATA/brain/subject_T1_head.nii.gz"
S="$out/summary.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv >> "$S" 2>&1 || true
echo "host cores: $(nproc)" >> "$S"
timed() {  # label, command...
  local t0 t1; t0=$(date +%s.%N); "${@:2}" > "$out/$1.out" 2> "$out/$1.err"; local rc=$?
  t1=$(date +%s.%N); printf '%-22s exit %d  %.2f s\n' "$1" "$rc" "$(awk "BEGIN{print $t1 - $t0}")" | tee -a "$S"
}
for be in gpu gpu cpu; do  # the first GPU run also loads the module (cold)
  timed "ours_$be" reg_deform affine --ref "$R" --flo "$F" -o "$out/ours_$be.txt" --res "$img/ours_$be.nii.gz" \
    --backend "$be" --json -v
done
timed ours_gpu_subvoxel reg_deform affine --ref "$R" --flo "$F" -o "$out/ours_gpu_subvoxel.txt" \
  --res "$img/ours_gpu_subvoxel.nii.gz" --backend gpu --subvoxel --json -v
if cmp -s "$out/ours_gpu.txt" "$out/ours_cpu.txt"; then echo "ours GPU vs CPU matrix: identical" | tee -a "$S"
else echo "ours GPU vs CPU matrix: DIFFERENT" | tee -a "$S"; fi
if [ -n "$nr_tgz" ] && [ -f "$nr_tgz" ]; then
  nr=$(mktemp -d /tmp/nr.XXXXXX); tar xzf "$nr_tgz" -C "$nr"
  export LD_LIBRARY_PATH="$nr/bin/lib:$LD_LIBRARY_PATH"
  timed aladin_gpu "$nr/bin/reg_aladin" -ref "$R" -flo "$F" -aff "$out/aladin_gpu.txt" -res "$img/aladin_gpu.nii.gz" -platf 1
  timed aladin_cpu "$nr/bin/reg_aladin" -ref "$R" -flo "$F" -aff "$out/aladin_cpu.txt" -res "$img/aladin_cpu.nii.gz" -platf 0 -omp "$(nproc)"
  for r in ours_gpu ours_cpu ours_gpu_subvoxel aladin_gpu aladin_cpu; do
    [ -f "$out/$r.txt" ] || continue
    n1=$("$nr/bin/reg_measure" -ref "$R" -flo "$img/$r.nii.gz" -nmi 2>&1 | grep NMI)
    "$nr/bin/reg_resample" -ref "$R" -flo "$F" -aff "$out/$r.txt" -inter 3 -pad 0 -res "$img/$r.pad0.nii.gz" > /dev/null 2>&1
    n2=$("$nr/bin/reg_measure" -ref "$R" -flo "$img/$r.pad0.nii.gz" -nmi 2>&1 | grep NMI)
    echo "$r: own res $n1 | reg_resample pad 0 $n2" | tee -a "$S"
    cat "$out/$r.txt" >> "$S"
  done
fi
if [ -x /usr/bin/python3 ]; then
  aladin=""
  [ -n "${nr:-}" ] && aladin="$nr/bin/reg_aladin"
  REG_ALADIN="$aladin" ALADIN_PLATF=1 PYTHON=/usr/bin/python3 bash "$here/affine_known.sh" "$(command -v reg_deform)" \
    "$R" "$out/known" gpu "1 2 3 4 5" "default:" "subvoxel:--subvoxel" > "$out/known.log" 2>&1 ||
    echo "affine_known.sh failed (see known.log)" >> "$S"
  cat "$out/known/summary.txt" >> "$S" 2> /dev/null
else
  echo "known transforms skipped: no /usr/bin/python3 on this host" >> "$S"
fi
cat "$S"
