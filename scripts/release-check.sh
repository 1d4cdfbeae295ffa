#!/usr/bin/env bash
# `make release-check`: the release build's kernels carry machine code for every architecture this
# nvcc supports and PTX of the newest. Builds one kernel fatbin in the release folder (configured by
# `make release-configure`) and reads it with evk_fatbin from the test build.
# Usage: scripts/release-check.sh RELEASE_BUILD_DIR TEST_BUILD_DIR
set -euo pipefail
rel=${1:?usage: release-check.sh RELEASE_BUILD_DIR TEST_BUILD_DIR}
test_build=${2:?TEST_BUILD_DIR}
nvcc=$(grep '^CMAKE_CUDA_COMPILER:' "$rel/CMakeCache.txt" | cut -d= -f2 || true)
if [ -z "$nvcc" ] || [ ! -x "$nvcc" ]; then
  echo "release-check: the release build has no CUDA compiler; nothing to check"
  exit 0
fi
fatbin=evk_kernels/stereo_kernel_original.fatbin
cmake --build "$rel" --target stereo_kernel_original_fatbin > /dev/null
expect=$("$nvcc" --list-gpu-code | grep -o 'sm_[0-9]*' | sort -t_ -k2 -n -u | tr '\n' ' ')
newest=$(echo "$expect" | awk '{print $NF}' | sed 's/sm_/compute_/')
expect="${expect}${newest}"
got=$("$test_build/bin/evk_fatbin" "$rel/$fatbin" | sed 's/^[^:]*: //')
if [ "$got" != "$expect" ]; then
  echo "release-check: $rel/$fatbin holds '$got', expected '$expect'" >&2
  exit 1
fi
echo "release-check: $fatbin holds $got"
