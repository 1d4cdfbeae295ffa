#!/usr/bin/env bash
# `reg_deform affine` beside NiftyReg's reg_aladin on the GPU host, one call, same inputs
# (subject_T1_head -> icbm152_2009a 1 mm, defaults): our GPU and CPU backends (wall time of the
# tool, file I/O included, plus its --json stage times), reg_aladin -platf 1 (CUDA) and -platf 0
# (all cores), and reg_measure NMI of every result, two ways (own --res/-res with NaN padding, and
# reg_resample -inter 3 -pad 0 for all). Then known-transform recovery on the GPU (affine_known.sh;
# the error step needs python3 with numpy and is skipped without it).
# Usage (repository root, bundle built by `make bundle`, NiftyReg tarball carried beside it):
#   bench/reg_deform/affine_peers.sh BUNDLE OUTDIR [niftyreg-bin.tar.gz]
set -uo pipefail
b=$(cd "${1:?usage: affine_peers.sh BUNDLE OUTDIR [niftyreg-bin.tar.gz]}" && pwd)
out=${2:?OUTDIR}
nr_tgz=${3:-}
mkdir -p "$out"
out=$(cd "$out" && pwd)
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
  timed "ours_$be" reg_deform affine --ref "$R" --flo "$F" -o "$out/ours_$be.txt" --res "$out/ours_$be.nii.gz" \
    --backend "$be" --json -v
done
if [ -n "$nr_tgz" ] && [ -f "$nr_tgz" ]; then
  nr=$(mktemp -d /tmp/nr.XXXXXX); tar xzf "$nr_tgz" -C "$nr"
  export LD_LIBRARY_PATH="$nr/bin/lib:$LD_LIBRARY_PATH"
  timed aladin_gpu "$nr/bin/reg_aladin" -ref "$R" -flo "$F" -aff "$out/aladin_gpu.txt" -res "$out/aladin_gpu.nii.gz" -platf 1
  timed aladin_cpu "$nr/bin/reg_aladin" -ref "$R" -flo "$F" -aff "$out/aladin_cpu.txt" -res "$out/aladin_cpu.nii.gz" -platf 0 -omp "$(nproc)"
  for r in ours_gpu ours_cpu aladin_gpu aladin_cpu; do
    [ -f "$out/$r.txt" ] || continue
    n1=$("$nr/bin/reg_measure" -ref "$R" -flo "$out/$r.nii.gz" -nmi 2>&1 | grep NMI)
    "$nr/bin/reg_resample" -ref "$R" -flo "$F" -aff "$out/$r.txt" -inter 3 -pad 0 -res "$out/$r.pad0.nii.gz" > /dev/null 2>&1
    n2=$("$nr/bin/reg_measure" -ref "$R" -flo "$out/$r.pad0.nii.gz" -nmi 2>&1 | grep NMI)
    echo "$r: own res $n1 | reg_resample pad 0 $n2" | tee -a "$S"
    cat "$out/$r.txt" >> "$S"
  done
fi
if /usr/bin/python3 -c "import numpy" 2> /dev/null; then
  PYTHON=/usr/bin/python3 bash "$here/affine_known.sh" "$(command -v reg_deform)" "$R" "$out/known" gpu "1 2 3" \
    >> "$S" 2>&1 || echo "affine_known.sh failed" >> "$S"
else
  echo "known transforms skipped: no python3 numpy on this host" >> "$S"
fi
cat "$S"
