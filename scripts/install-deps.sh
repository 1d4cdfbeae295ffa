#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages EvoKernels builds and tests with. Idempotent: packages that
# are already installed are skipped, and apt is not touched at all when nothing is missing.
# The CUDA toolkit is not installed here (it is optional: without nvcc the suite builds CPU-only).
set -euo pipefail

pkgs=(
  # build
  build-essential cmake pkg-config git
  # test / bench frameworks, CLI, JSON
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev
  # linear algebra (header only): SVD, QR, matrix log/exp for reg_deform affine
  libeigen3-dev
  # formats: NIfTI, SAM/BAM/FASTQ (htslib), compression, suffix arrays, PNG
  libnifti2-dev libznz-dev zlib1g-dev libhts-dev libdeflate-dev libisal-dev libdivsufsort-dev libpng-dev
  # stereo image I/O and the StereoBM peer (optional for the build, installed for the demo)
  libopencv-imgcodecs-dev libopencv-imgproc-dev libopencv-calib3d-dev libopencv-videoio-dev
  # oracles and simulators used by tests, demo and benchmarks
  bwa samtools art-nextgen-simulation-tools
  # the oracle of `barracuda_exact damage` (its misincorporation tables; R comes with it, no recommends)
  mapdamage
  # make install / make package: man pages from --help, the .deb's dependencies (dpkg-shlibdeps,
  # which CPack runs with `file`)
  help2man dpkg-dev file
  # the Python module (import evokernels) and its tests; nipype drives the drop-in NiftyReg commands;
  # meshio reads the point clouds `stereo disparity --points` writes (a PLY reader we did not write)
  python3-dev pybind11-dev python3-numpy python3-pytest python3-nibabel python3-nipype python3-meshio
  # the many-machine mapping workflow (workflows/map), tested in CI
  snakemake
  # dpkg -x for scripts/fetch-data.sh
  dpkg
  # libFuzzer harnesses (make fuzz, fuzz-smoke in make test): clang 16 with its fuzzer runtime and
  # the ASan/UBSan runtimes (only recommended by clang-16, and recommends are not installed here)
  clang-16 libfuzzer-16-dev libclang-rt-16-dev
  # the elastix peer of the registration figures (bench/reg_deform/elastix_*.txt)
  elastix
)

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#pkgs[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO=sudo; else
    echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
