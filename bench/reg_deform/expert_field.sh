#!/usr/bin/env bash
# The expert dense-field kernel on the GPU host, one call (issue 13 "Speed"):
#  1. its GPU tests and the register tests that use it (every voxel vs the CPU; register auto /
#     original / expert agree and report the variant);
#  2. bench_reg_deform dense_field: original tile kernel + scatter, shipped evolved + scatter, the
#     expert kernel at TILE_Y 32/16/8, the write floor (memset / copy of 12 bytes per voxel), on the
#     217^3 paper case and the 1 mm head;
#  3. bench_reg_register BM_StageGpu: every stage of an iteration at 1 mm, field with both kernels.
# Usage (repository root, bundle built by `make bundle`): bench/reg_deform/expert_field.sh BUNDLE OUTDIR
set -uo pipefail
b=$(cd "${1:?usage: expert_field.sh BUNDLE OUTDIR}" && pwd)
out=${2:?OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
. "$b/env.sh"
S="$out/summary.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv >> "$S" 2>&1 || true
run() {  # label, command...
  "${@:2}" > "$out/$1.out" 2> "$out/$1.err"
  echo "$1: exit $?" | tee -a "$S"
}
run gpu_tests "$b/bin/reg_deform_gpu_tests" \
  --gtest_filter='RegGpuExpert.*:RegGpuRegister.ExpertFieldKernelGivesTheSameIteratesAsCpu:RegGpuRegister.ToolAutoOriginalAndExpertAgreeAndReportTheVariant'
grep -E '^\[  (PASSED|FAILED) |\[measured\]' "$out/gpu_tests.out" | tee -a "$S"
run dense_field "$b/bin/bench_reg_deform" --benchmark_filter='dense_field' --benchmark_format=json
run stages "$b/bin/bench_reg_register" --benchmark_filter='BM_StageGpu' --benchmark_format=json
python3 - "$out" >> "$S" <<'PY'
import json, sys
for name in ("dense_field", "stages"):
    try:
        d = json.load(open(f"{sys.argv[1]}/{name}.out"))
    except Exception as e:
        print(f"{name}: no JSON ({e})"); continue
    for bm in d.get("benchmarks", []):
        if bm.get("error_occurred"):
            print(f"{bm['name']}: {bm.get('error_message')}"); continue
        print(f"{bm['name']}: median {bm.get('median_us', 0):.1f} us, "
              f"{bm.get('field_voxels_per_s', bm.get('voxels_per_s', 0)):.3g} voxels/s")
PY
cat "$S"
