#!/usr/bin/env bash
# No FMA contraction in the affine kernels (they must repeat the CPU's double operations bit for
# bit): compiles core/affine_kernels.cu to PTX with the build's options and checks that no
# floating-point fma/mad is emitted and that every floating add/sub/mul/div/sqrt carries an explicit
# .rn (ptxas never fuses explicitly rounded operations into FMAs; PTX ISA, "add" / "mul").
# The SASS check, where cuobjdump is installed (the GPU host): bench/reg_deform/affine_sass.sh.
# With a CPU object file (block_match.cpp.o): no FMA instructions there either (x86 vfmadd*, ARM
# fmadd/fmla; -ffp-contract=off keeps them out whatever -march says).
# Usage: affine_ptx_check.sh NVCC affine_kernels.cu [arch, default 90] [block_match.cpp.o]
set -euo pipefail
nvcc=${1:?NVCC}; src=${2:?affine_kernels.cu}; arch=${3:-90}; obj=${4:-}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$nvcc" -ptx -std=c++17 -arch=sm_"$arch" -fmad=false -o "$tmp/k.ptx" "$src"
for k in aff_warp_linear aff_match_blocks; do
  grep -q "\.entry $k" "$tmp/k.ptx" || { echo "FAIL: kernel $k not in the PTX"; exit 1; }
done
ops=$(grep -cE '^\s*(add|sub|mul|div|sqrt)\.rn\.f64' "$tmp/k.ptx" || true)
fused=$(grep -E '^\s*(fma|mad)(\.[a-z0-9]+)*\.f(16|32|64)' "$tmp/k.ptx" || true)
unrounded=$(grep -E '^\s*(add|sub|mul)(\.sat|\.ftz)*\.f(32|64)|^\s*(div|sqrt)\.(approx|full)' "$tmp/k.ptx" || true)
if [ -n "$fused" ]; then echo "FAIL: floating-point fma/mad in the PTX:"; echo "$fused" | head; exit 1; fi
if [ -n "$unrounded" ]; then echo "FAIL: floating-point operations without explicit .rn:"; echo "$unrounded" | head; exit 1; fi
if [ "$ops" -lt 50 ]; then echo "FAIL: only $ops explicitly rounded f64 operations (expected the kernels' ~100)"; exit 1; fi
if [ -n "$obj" ]; then
  cpu_fma=$(objdump -d --no-show-raw-insn "$obj" | grep -E '\s(v?fn?m(add|sub)[0-9a-z]*|fmla|fmls)\s' || true)
  if [ -n "$cpu_fma" ]; then echo "FAIL: FMA instructions in $obj:"; echo "$cpu_fma" | head; exit 1; fi
  echo "CPU: no FMA instructions in $(basename "$obj")"
fi
echo "PASS: $ops explicitly rounded f64 operations, no fma/mad, no unrounded add/sub/mul"
