#!/usr/bin/env bash
# SASS check of the affine kernels (they must repeat the CPU's double arithmetic bit for bit, so no
# mul+add may be fused into an FMA): disassembles the bundle's reg_deform_affine.fatbin with
# cuobjdump (GPU host; not on the development machines, where tests/reg_deform/affine_ptx_check.sh
# checks the PTX instead) and counts, per kernel, DFMA/FFMA/DMUL/DADD/MUFA.
# Expected: aff_warp_linear has no DFMA and no FFMA at all. aff_match_blocks has DFMA/FFMA only inside
# the correctly rounded double division (3x: MUFA.RCP64H + Newton steps, slow path CALL) and square
# root (1x: MUFA.RSQ64H + Newton steps) sequences, i.e. within a few instructions after each MUFA or
# in the slow-path subroutines after the kernel's last EXIT; the script lists every DFMA/FFMA with the
# nearest preceding MUFA so that can be read off.
# Usage: bench/reg_deform/affine_sass.sh BUNDLE OUTDIR
set -uo pipefail
b=$(cd "${1:?usage: affine_sass.sh BUNDLE OUTDIR}" && pwd)
out=${2:?OUTDIR}
mkdir -p "$out"
fb="$b/kernels/fatbin/reg_deform_affine.fatbin"
cuobj=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2> /dev/null | head -1)
if [ -z "$cuobj" ] || [ ! -f "$fb" ]; then
  echo "affine_sass: skipped (cuobjdump: ${cuobj:-none}; fatbin: $fb)" | tee "$out/affine_sass.txt"
  exit 0
fi
"$cuobj" -sass "$fb" > "$out/affine_sass_full.txt" 2>&1
awk '
  /Function :/ { fn = $NF; n = 0; last_mufa = ""; next }
  fn == "" { next }
  /\/\*[0-9a-f]+\*\// {
    n++
    if ($0 ~ /MUFA\./) { match($0, /MUFA\.[A-Z0-9]+/); last_mufa = substr($0, RSTART, RLENGTH) " @" n; since = 0 } else since++
    if ($0 ~ /EXIT/) lastexit[fn] = n
    for (k = 1; k <= 5; k++) { op = (k == 1 ? "DFMA" : k == 2 ? "FFMA" : k == 3 ? "DMUL" : k == 4 ? "DADD" : "MUFA")
      if ($0 ~ ("[ ;]" op "[ .]")) cnt[fn, op]++ }
    if ($0 ~ /[ ;](DFMA|FFMA)[ .]/) { sub(/^[ \t]+/, ""); fma[fn] = fma[fn] sprintf("    #%d (after %s, +%d): %s\n", n, last_mufa == "" ? "no MUFA" : last_mufa, since, $0) }
    fns[fn] = 1
  }
  END {
    for (f in fns) {
      printf "%s: DFMA %d, FFMA %d, DMUL %d, DADD %d, MUFA %d (last EXIT at #%d)\n", f, cnt[f, "DFMA"], cnt[f, "FFMA"], cnt[f, "DMUL"], cnt[f, "DADD"], cnt[f, "MUFA"], lastexit[f]
      if (fma[f] != "") printf "%s", fma[f]
      if (f ~ /aff_warp_linear/) print ((cnt[f, "DFMA"] + cnt[f, "FFMA"]) == 0 ? "  PASS: no FMA in the warp" : "  FAIL: FMA in the warp")
    }
  }' "$out/affine_sass_full.txt" | tee "$out/affine_sass.txt"
