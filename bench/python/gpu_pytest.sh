#!/usr/bin/env bash
# The Python module on the GPU host: the bundle's package (built for Python 3.12) and its pytest
# suite with the bundle's tools (EVK_BIN_DIR), GPU tests included (tests/python/test_gpu.py:
# stereo ssd/sgm GPU = CPU = CLI bit for bit, reg field within 1e-3 mm of the CPU, reg affine/register
# against the GPU CLI and the CPU). nibabel/nipype are not
# on the host: their tests skip. Writes OUTDIR/pytest.log and OUTDIR/pytest.xml; exits non-zero
# when a test fails.
# Usage: bench/python/gpu_pytest.sh BUNDLE OUTDIR
set -uo pipefail
bundle=$(cd "${1:?usage: gpu_pytest.sh BUNDLE OUTDIR}" && pwd)
out=${2:?usage: gpu_pytest.sh BUNDLE OUTDIR}
mkdir -p "$out"
. "$bundle/env.sh" "$out/nvrtc-cache"
if ! compgen -G "$bundle/python/evokernels/_ext*.so" > /dev/null; then
  echo "gpu_pytest: the bundle carries no Python module (make bundle found no Python 3.12 with headers)" | tee "$out/pytest.log"
  exit 1
fi
python3 -c 'import sys, numpy; print("python", sys.version.split()[0], "numpy", numpy.__version__)' | tee "$out/pytest.log"
python3 -c 'import evokernels as ek; print(ek.environment()); print(ek.devices())' >> "$out/pytest.log" 2>&1
cd "$bundle/tests/python" && python3 -m pytest -v -p no:cacheprovider --junitxml="$out/pytest.xml" . >> "$out/pytest.log" 2>&1
rc=$?
tail -n 25 "$out/pytest.log"
exit $rc
