#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck, initcheck, synccheck) over every kernel the three tools
# launch, through the real tools on small inputs of odd sizes: the original kernels (and the
# support kernels around them) and every evolved variant we ship or evolved on the H200
# (bench/gi/runs/h200-2026-11-22/*/evolved.genome, kernels/evolved/**/*.genome).
# Writes OUTDIR/summary.md (tool x kernel x check -> errors) and one log per run; exits 1 when any
# run reports an error. Under ~6 minutes on an H100. Run from the repository root:
#   bash bench/sanitize/run.sh BUNDLE OUTDIR            (BUNDLE from `make bundle`)
set -uo pipefail
b=$(cd "${1:?usage: run.sh BUNDLE OUTDIR}" && pwd)
out=${2:?usage: run.sh BUNDLE OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
repo=$(pwd)
W=$(mktemp -d /tmp/evk-sanitize.XXXXXX)
. "$b/env.sh" "$W/nvrtc-cache"
summary="$out/summary.md"

cs=""
for c in compute-sanitizer "${CUDA_HOME:-/usr/local/cuda}/compute-sanitizer/compute-sanitizer" \
         /usr/local/cuda*/bin/compute-sanitizer /usr/local/cuda*/compute-sanitizer/compute-sanitizer \
         "$b/compute-sanitizer/compute-sanitizer"; do
  if command -v "$c" > /dev/null 2>&1; then cs=$(command -v "$c"); break; fi
done
if [ -z "$cs" ]; then
  echo "compute-sanitizer not found (PATH, CUDA_HOME, /usr/local/cuda*, BUNDLE/compute-sanitizer)" | tee "$summary"
  exit 3
fi
{
  echo "# compute-sanitizer over the tools' kernels"
  echo
  echo "$("$cs" --version 2>&1 | tail -1); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
  echo
  echo "| tool | kernel | check | errors | exit | seconds |"
  echo "|---|---|---|---|---|---|"
} > "$summary"

# ---- inputs of odd sizes ----------------------------------------------------------------------
cd "$W"
pgm() { { printf 'P5\n%d %d\n255\n' "$1" "$2"; head -c $(( $1 * $2 )) /dev/urandom; } > "$3"; }
pgm 67 45 L.pgm
pgm 67 45 R.pgm
reg_deform random-case --seed 3 --size 13 -o case > /dev/null
reg_deform random-case --seed 4 --size 37 -o case37 > /dev/null  # affine / register: blocks need room
awk 'BEGIN { srand(5); printf ">c1 odd\n"; for (i = 0; i < 3001; i++) { printf "%s", substr("ACGT", int(rand() * 4) + 1, 1); if (i % 60 == 59) printf "\n" } printf "\n>c2\n"; for (i = 0; i < 777; i++) printf "%s", substr("ACGTN", int(rand() * 5) + 1, 1); printf "\n" }' > ref.fa
barracuda_exact index ref.fa > /dev/null
awk -v RS='>' 'NR == 2 { sub(/^[^\n]*\n/, ""); gsub(/\n/, ""); s = $0 } END {
  srand(9); for (i = 0; i < 333; i++) { l = 17 + (i % 41); p = int(rand() * (length(s) - l)); q = "";
    for (j = 0; j < l; j++) q = q "I"; printf "@r%d\n%s\n+\n%s\n", i, substr(s, p + 1, l), q } }' ref.fa > reads.fq
# a second mate file (same names) whose reads carry a mismatch and some an insertion: the inexact
# search backtracks on them
awk 'NR % 4 == 2 { b = substr($0, 6, 1) == "A" ? "C" : "A"; $0 = substr($0, 1, 5) b substr($0, 7);
                   if (NR % 12 == 2) $0 = substr($0, 1, 12) "G" substr($0, 13) }
     NR % 4 == 0 && NR % 12 == 4 { $0 = $0 "I" } { print }' reads.fq > reads2.fq
cd "$repo"

# ---- kernel variants: original + evolved genomes per tool --------------------------------------
variants() {  # TOOL -> "original" and genome files for it
  echo original
  for g in bench/gi/runs/h200-2026-11-22/*/evolved.genome kernels/evolved/*/*.genome kernels/evolved/*/*/*.genome; do
    [ -f "$g" ] || continue
    grep -q "^# kernel: $1\$" "$g" && echo "$repo/$g"
  done
}
command_for() {  # TOOL KERNEL -> the tool's GPU command line on the odd-size inputs
  case $1 in
    stereo) echo "stereo disparity $W/L.pgm $W/R.pgm -o $W/d.pfm --max-disparity 13 --window 5 --backend gpu --kernel $2" ;;
    reg_deform) echo "reg_deform resample --ref $W/case/image.nii.gz --flo $W/case/image.nii.gz --trans $W/case/cpp.nii.gz -o $W/r.nii --interp cubic --backend gpu --kernel $2" ;;
    barracuda_exact) echo "barracuda_exact map --exact $W/ref.fa $W/reads.fq -o $W/o.sam --unmatched $W/u.fq.gz --backend gpu --kernel $2" ;;
  esac
}

# ---- the other kernels of the tools (this wave's: SGM, expert SSD, affine, register, inexact) ----
others() {  # "TOOL|LABEL|COMMAND" per line
  echo "stereo|sgm 8 paths + LR + sub-pixel + median|stereo disparity $W/L.pgm $W/R.pgm -o $W/s.pfm --method sgm --max-disparity 13 --paths 8 --subpixel parabola --lr-check 1 --median 3 --backend gpu"
  echo "stereo|sgm 4 paths, min disparity -3|stereo disparity $W/L.pgm $W/R.pgm -o $W/s4.pfm --method sgm --min-disparity -3 --max-disparity 21 --paths 4 --backend gpu"
  echo "stereo|expert SSD|stereo disparity $W/L.pgm $W/R.pgm -o $W/e.pfm --max-disparity 13 --window 5 --backend gpu --kernel expert"
  echo "reg_deform|affine (pyramid, block matching, warp)|reg_deform affine --ref $W/case37/image.nii.gz --flo $W/case37/image.nii.gz -o $W/a.txt --ln 2 --maxit 3 --backend gpu"
  echo "reg_deform|register (every reg_f3d stage)|reg_deform register --ref $W/case37/image.nii.gz --flo $W/case37/image.nii.gz --cpp $W/c.nii.gz --res $W/w.nii.gz --ln 2 --maxit 5 --backend gpu"
  echo "reg_deform|expert dense-field kernel|reg_deform resample --ref $W/case/image.nii.gz --flo $W/case/image.nii.gz --trans $W/case/cpp.nii.gz -o $W/rx.nii --interp cubic --backend gpu --kernel expert"
  echo "reg_deform|register, expert field kernel|reg_deform register --ref $W/case37/image.nii.gz --flo $W/case37/image.nii.gz --cpp $W/cx.nii.gz --ln 2 --maxit 5 --backend gpu --kernel expert"
  echo "stereo|sgm 4 paths 40 disparities (kernel 2)|stereo disparity $W/L.pgm $W/R.pgm -o $W/s2.pfm --method sgm --max-disparity 39 --paths 4 --backend gpu"
  echo "barracuda_exact|inexact single-end|barracuda_exact map $W/ref.fa $W/reads2.fq -o $W/i.sam --backend gpu"
  echo "barracuda_exact|inexact paired-end|barracuda_exact map $W/ref.fa $W/reads.fq $W/reads2.fq -o $W/p.sam --backend gpu"
}

status=0
run_checks() {  # TOOL KNAME CMD
  local tool=$1 kname=$2 cmd=$3
  for check in memcheck racecheck initcheck synccheck; do
    extra=()
    [ "$check" = memcheck ] && extra=(--leak-check full)
    [ "$check" = racecheck ] && extra=(--racecheck-report hazard)
    log="$out/$tool-$(basename "$kname" .genome | tr ' /,+()' '______')-$check.log"
    t0=$(date +%s%N)
    timeout 300 "$cs" --tool "$check" "${extra[@]}" --error-exitcode 99 --print-limit 50 $cmd > "$log" 2>&1
    rc=$?
    secs=$(( ($(date +%s%N) - t0) / 1000000000 ))
    errors=$(grep -Eo '(ERROR SUMMARY|RACECHECK SUMMARY): [0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1)
    [ -z "$errors" ] && errors="?"
    echo "| $tool | $kname | $check | $errors | $rc | $secs |" >> "$summary"
    if [ "$rc" != 0 ] || [ "$errors" != 0 ]; then status=1; fi
  done
}
while IFS='|' read -r tool kname cmd; do
  if ! $cmd > "$out/$tool-plain.log" 2>&1; then
    echo "| $tool | $kname | (plain run) | - | failed: $(tail -1 "$out/$tool-plain.log") | - |" >> "$summary"
    status=1
    continue
  fi
  run_checks "$tool" "$kname" "$cmd"
done < <(others)

# SANITIZE_NEW_ONLY=1: only the kernels above (this wave's), not the original + evolved variants again
[ "${SANITIZE_NEW_ONLY:-0}" = 1 ] && tools="" || tools="stereo reg_deform barracuda_exact"
for tool in $tools; do
  for k in $(variants "$tool"); do
    kname=$([ "$k" = original ] && echo original || echo "${k#"$repo"/}")
    cmd=$(command_for "$tool" "$k")
    # the plain run first: a failure here is the tool's, not a sanitizer finding
    if ! $cmd > "$out/$tool-plain.log" 2>&1; then
      echo "| $tool | $kname | (plain run) | - | failed: $(tail -1 "$out/$tool-plain.log") | - |" >> "$summary"
      status=1
      continue
    fi
    run_checks "$tool" "$kname" "$cmd"
  done
done
echo >> "$summary"
echo "exit status $status (0: every run clean)" >> "$summary"
rm -rf "$W"
cat "$summary"
exit $status
