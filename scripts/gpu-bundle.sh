#!/usr/bin/env bash
# `make bundle`: packs the GPU test and benchmark binaries, the tools that can travel, the few
# non-system shared libraries they need, kernel sources, test data and a runner into one folder
# (default: bundle/, ignored by git) that can be copied to a GPU host (Ubuntu 24.04, CUDA 13
# driver, no -dev packages) and run there as `bundle/run.sh OUTDIR`.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
DEST=${2:-bundle}
LIMIT_MIB=56  # packed (.tgz), carried as one file; leaves room beside it in a 64 MiB carry
rm -rf "$DEST"
mkdir -p "$DEST"/{bin,lib,data/shared,data/project,kernels}

shopt -s nullglob
# (no `grep -q` in a pipeline: under pipefail its early exit would fail the check)
links_opencv() { [ "$(ldd "$1" 2>/dev/null | grep -c 'libopencv')" -gt 0 ]; }
for b in "$BUILD_DIR"/bin/*_gpu_tests; do
  if links_opencv "$b"; then
    echo "gpu-bundle: $b links OpenCV; GPU test binaries must not" >&2
    exit 1
  fi
  cp "$b" "$DEST/bin/"
done
for b in "$BUILD_DIR"/bin/bench_*; do  # peers that need OpenCV (bench_*_opencv) stay home
  if links_opencv "$b"; then echo "gpu-bundle: $(basename "$b") links OpenCV; not bundled"; continue; fi
  cp "$b" "$DEST/bin/"
done
for t in stereo reg_deform barracuda_exact reg_known; do  # tools (and reg_deform's accuracy driver) travel when they do not need OpenCV
  [ -x "$BUILD_DIR/bin/$t" ] || continue
  if links_opencv "$BUILD_DIR/bin/$t"; then echo "gpu-bundle: $t links OpenCV; not bundled"; continue; fi
  cp "$BUILD_DIR/bin/$t" "$DEST/bin/"
done
# The peer of bench_barracuda_exact: Debian's bwa needs only glibc >= 2.34 and zlib (the GPU host has both).
# the drop-ins (NiftyReg's reg_* and bwa's commands on our tools), beside, not in, bin/
for d in niftyreg bwa; do
  for f in "$BUILD_DIR"/compat/$d/*; do
    [ -f "$f" ] && [ -x "$f" ] || continue
    mkdir -p "$DEST/compat/$d" && cp "$f" "$DEST/compat/$d/"
  done
done
if command -v bwa > /dev/null; then cp "$(command -v bwa)" "$DEST/bin/"; fi
# The inexact benchmark simulates its reads there with art_illumina (+ libgsl, carried below), and
# bench/barracuda_exact/inexact_device.sh compares our GPU records with bwa's by bc_sam_agree.
if command -v art_illumina > /dev/null; then cp "$(command -v art_illumina)" "$DEST/bin/"; fi
[ -x "$BUILD_DIR/bin/bc_sam_agree" ] && cp "$BUILD_DIR/bin/bc_sam_agree" "$DEST/bin/"
# bench/barracuda_exact/pipeline_10m.sh simulates its reads on the GPU host with bc_simreads.
[ -x "$BUILD_DIR/bin/bc_simreads" ] && cp "$BUILD_DIR/bin/bc_simreads" "$DEST/bin/"
# The aDNA benchmark (bench/barracuda_exact/adna_device.sh) makes its genome and reads there.
for t in bc_human_genome bc_adna_reads; do if [ -x "$BUILD_DIR/bin/$t" ]; then cp "$BUILD_DIR/bin/$t" "$DEST/bin/"; fi; done
# Non-system libraries the GPU host does not have (the rest of the closure ships with Ubuntu 24.04).
carry_re='lib(hts|htscodecs|deflate|isal|divsufsort(64)?|nifti[^/]*|znz|benchmark(_main)?|png16|gsl|gslcblas)\.so'
for b in "$DEST"/bin/* "$DEST"/compat/*/*; do
  ldd "$b" | awk '/=>/ {print $3}' | grep -E "$carry_re" || true
done | sort -u | while read -r lib; do cp -L "$lib" "$DEST/lib/"; done
# The Python package (the module built for the bundle build's Python: make bundle picks a Python
# 3.12, the GPU host's) and its pytest suite, run there by bench/python/gpu_pytest.sh.
if compgen -G "$BUILD_DIR/python/evokernels/_ext*.so" > /dev/null; then
  mkdir -p "$DEST/python" "$DEST/tests"
  cp -r "$BUILD_DIR/python/evokernels" "$DEST/python/"
  rm -rf "$DEST/python/evokernels/__pycache__"
  cp -r tests/python "$DEST/tests/"
  rm -rf "$DEST/tests/python/__pycache__"
fi
cp -r kernels/original "$DEST/kernels/"
[ -d kernels/evolved ] && cp -r kernels/evolved "$DEST/kernels/"
# Test data: the shared folder beside the checkout (when present) and the project's data/.
if [ -d ../shared/data ]; then cp -rL ../shared/data/. "$DEST/data/shared/"; fi
for d in stereo brain genomes reads; do
  [ -d "data/$d" ] && cp -rL "data/$d" "$DEST/data/project/"
done
# Per-app hooks (extra data conversions etc.): scripts/bundle.d/<app>.sh DEST BUILD_DIR
for h in scripts/bundle.d/*.sh; do bash "$h" "$DEST" "$BUILD_DIR"; done

# The bundle's environment, shared by run.sh and the device scripts in bench/*/:
#   . BUNDLE/env.sh [NVRTC_CACHE_DIR]
cat > "$DEST/env.sh" <<'ENV'
# Sourced: sets up this bundle's libraries, data and tools. Optional $1: NVRTC cache directory.
evk_bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LD_LIBRARY_PATH="$evk_bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export EVK_SHARED_DATA="$evk_bundle/data/shared" EVK_DATA_DIR="$evk_bundle/data/project"
export EVK_BIN_DIR="$evk_bundle/bin" EVK_KERNELS_DIR="$evk_bundle/kernels" PATH="$evk_bundle/bin:$PATH"
export PYTHONPATH="$evk_bundle/python${PYTHONPATH:+:$PYTHONPATH}"
[ -n "${1:-}" ] && export EVK_CACHE_DIR="$1"
ENV

cat > "$DEST/run.sh" <<'RUNNER'
#!/usr/bin/env bash
# Runs every GPU test suite and benchmark in this bundle; logs and JSON results go to OUTDIR.
# Usage: run.sh OUTDIR [--tests-only|--bench-only] [gtest filter]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [--tests-only|--bench-only] [FILTER]}
mode=${2:-all}
filter=${3:-*}
mkdir -p "$out"
. "$here/env.sh" "$out/nvrtc-cache"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv \
  > "$out/gpu.txt" 2>&1 || true
status=0
summary=()
if [ "$mode" != "--bench-only" ]; then
  for t in "$here"/bin/*_gpu_tests; do
    n=$(basename "$t")
    "$t" --gtest_filter="$filter" --gtest_output="json:$out/$n.json" > "$out/$n.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || status=1
    summary+=("$n: exit $rc, $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/$n.log" | tr '\n' ' ')")
  done
fi
if [ "$mode" != "--tests-only" ]; then
  for b in "$here"/bin/bench_*; do
    n=$(basename "$b")
    "$b" --benchmark_out="$out/$n.json" --benchmark_out_format=json --benchmark_counters_tabular=true \
      > "$out/$n.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || status=1
    summary+=("$n: exit $rc")
  done
fi
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
exit $status
RUNNER
chmod +x "$DEST/run.sh"
# Our binaries travel without symbols (debugging happens at home); the device tool carries the bundle
# as a gzipped tar: that is what must stay under the limit (its carry limit is 64 MiB in all).
for b in "$DEST"/bin/* "$DEST"/compat/*/*; do [ -f "$b" ] || continue; strip --strip-unneeded "$b" 2> /dev/null || true; done
size=$(du -sm "$DEST" | cut -f1)
packed=$(( $(tar czf - -C "$(dirname "$DEST")" "$(basename "$DEST")" | wc -c) / 1048576 ))
echo "gpu-bundle: $DEST is ${size} MiB, ${packed} MiB as .tgz ($(ls "$DEST/bin" | wc -l) binaries, $(ls "$DEST/lib" | wc -l) libraries)"
if [ "$packed" -gt $LIMIT_MIB ]; then echo "gpu-bundle: over the ${LIMIT_MIB} MiB limit (packed)" >&2; exit 1; fi
