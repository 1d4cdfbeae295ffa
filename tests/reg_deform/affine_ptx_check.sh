#!/usr/bin/env bash
# No FMA contraction in the kernels that must repeat the CPU's double operations bit for bit
# (core/affine/affine_kernels.cu, core/pyramid_kernels.cu): compiles each to PTX with the build's options
# (-fmad=false) and checks that no
# floating-point fma/mad is emitted and that every floating add/sub/mul/div/sqrt carries an explicit
# .rn (ptxas never fuses explicitly rounded operations into FMAs; PTX ISA, "add" / "mul").
# The SASS check, where cuobjdump is installed (the GPU host): bench/reg_deform/affine_sass.sh.
# CPU object files (block_match.cpp.o, pyramid.cpp.o): no FMA instructions there either (x86
# vfmadd*, ARM fmadd/fmla; -ffp-contract=off keeps them out whatever -march says).
# Usage: affine_ptx_check.sh NVCC ARCH "OBJ;OBJ..." FILE.cu:MIN_OPS...
#   MIN_OPS: the least number of explicitly rounded f64 operations expected in that file's PTX.
set -euo pipefail
nvcc=${1:?NVCC}; arch=${2:?ARCH}; objs=${3:-}; shift 3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
total=0
for spec in "$@"; do
  src=${spec%:*}; min=${spec##*:}
  "$nvcc" -ptx -std=c++17 -arch=sm_"$arch" -fmad=false -o "$tmp/k.ptx" "$src"
  ops=$(grep -cE '^\s*(add|sub|mul|div|sqrt)\.rn\.f64' "$tmp/k.ptx" || true)
  fused=$(grep -E '^\s*(fma|mad)(\.[a-z0-9]+)*\.f(16|32|64)' "$tmp/k.ptx" || true)
  unrounded=$(grep -E '^\s*(add|sub|mul)(\.sat|\.ftz)*\.f(32|64)|^\s*(div|sqrt)\.(approx|full)' "$tmp/k.ptx" || true)
  if [ -n "$fused" ]; then echo "FAIL: floating-point fma/mad in the PTX of $src:"; echo "$fused" | head; exit 1; fi
  if [ -n "$unrounded" ]; then echo "FAIL: floating-point operations without explicit .rn in $src:"; echo "$unrounded" | head; exit 1; fi
  if [ "$ops" -lt "$min" ]; then echo "FAIL: only $ops explicitly rounded f64 operations in $src (expected >= $min)"; exit 1; fi
  echo "$(basename "$src"): $ops explicitly rounded f64 operations, no fma/mad, no unrounded add/sub/mul"
  total=$((total + ops))
done
IFS=';' read -r -a objlist <<< "$objs"
for obj in "${objlist[@]}"; do
  [ -n "$obj" ] || continue
  cpu_fma=$(objdump -d --no-show-raw-insn "$obj" | grep -E '\s(v?fn?m(add|sub)[0-9a-z]*|fmla|fmls)\s' || true)
  if [ -n "$cpu_fma" ]; then echo "FAIL: FMA instructions in $obj:"; echo "$cpu_fma" | head; exit 1; fi
  echo "CPU: no FMA instructions in $(basename "$obj")"
done
echo "PASS: $total explicitly rounded f64 operations in all, no FMA anywhere"
