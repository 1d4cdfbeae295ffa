#!/usr/bin/env bash
# Fetches the sample data the demo, tests and benchmarks use from Debian packages into the ignored
# data/ folder (apt-get download + dpkg-deb, no install). Idempotent: files already there are kept.
#   data/stereo/aloe{L,R}.jpg, aloeGT.png     Middlebury 2006 Aloe (opencv-doc)
#   data/stereo/calib/{left,right}NN.jpg       OpenCV's stereo_calib sample: 14 chessboard views of a
#                                             rig, 9x6 inner corners (opencv-doc)
#   data/genomes/NC_008253.fna.gz             E. coli (bowtie-examples)
#   data/genomes/lambda_virus.fa.gz           lambda phage (bowtie2-examples)
#   data/reads/lambda_reads_1.fq.gz           simulated lambda reads (bowtie2-examples)
#   data/reads/ce#1000.sam, data/genomes/ce.fa   real C. elegans reads + reference (htslib-test)
#   data/samtools-test/                       samtools' test folder (real 1000 Genomes reads)
#   data/brain/anatomical.nii                 small real brain (python3-nibabel)
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${EVK_DATA_DIR:-data}
mkdir -p "$DATA"/{stereo,stereo/calib,genomes,reads,brain} "$DATA"/.debs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

have_all() { for f in "$@"; do [ -s "$DATA/$f" ] || return 1; done; }

# fetch PKG -- extracts the package's files into $tmp/PKG
fetch() {
  local pkg=$1
  local deb
  deb=$(ls "$DATA/.debs/${pkg}"_*.deb 2>/dev/null | head -n1 || true)
  if [ -z "$deb" ]; then
    (cd "$DATA/.debs" && apt-get download "$pkg" >/dev/null 2>&1) || {
      if [ "$(id -u)" -eq 0 ]; then apt-get update -q >/dev/null; else sudo apt-get update -q >/dev/null; fi
      (cd "$DATA/.debs" && apt-get download "$pkg")
    }
    deb=$(ls "$DATA/.debs/${pkg}"_*.deb | head -n1)
  fi
  mkdir -p "$tmp/$pkg"
  dpkg-deb -x "$deb" "$tmp/$pkg"
}
pick() {  # pick PKG PATTERN DEST
  local src
  src=$(find "$tmp/$1" -path "$2" | head -n1)
  [ -n "$src" ] || { echo "fetch-data: $2 not found in $1" >&2; exit 1; }
  cp -L "$src" "$DATA/$3"
}

calib_views=()
for i in 01 02 03 04 05 06 07 08 09 11 12 13 14; do calib_views+=("stereo/calib/left$i.jpg" "stereo/calib/right$i.jpg"); done
if ! have_all stereo/aloeL.jpg stereo/aloeR.jpg stereo/aloeGT.png "${calib_views[@]}"; then
  echo "fetch-data: aloe stereo pair and the stereo_calib views (opencv-doc, ~96 MB download, kept only those images)"
  fetch opencv-doc
  pick opencv-doc '*/aloeL.jpg' stereo/aloeL.jpg
  pick opencv-doc '*/aloeR.jpg' stereo/aloeR.jpg
  pick opencv-doc '*/aloeGT.png' stereo/aloeGT.png
  for v in "${calib_views[@]}"; do pick opencv-doc "*/examples/data/${v##*/}" "$v"; done
  rm -f "$DATA"/.debs/opencv-doc_*.deb
fi
if ! have_all genomes/NC_008253.fna.gz; then
  echo "fetch-data: E. coli genome (bowtie-examples)"
  fetch bowtie-examples
  pick bowtie-examples '*/NC_008253.fna.gz' genomes/NC_008253.fna.gz
fi
if ! have_all genomes/lambda_virus.fa.gz reads/lambda_reads_1.fq.gz; then
  echo "fetch-data: lambda phage + reads (bowtie2-examples)"
  fetch bowtie2-examples
  pick bowtie2-examples '*/reference/lambda_virus.fa*' genomes/lambda_virus.fa.gz
  pick bowtie2-examples '*/reads/reads_1.fq*' reads/lambda_reads_1.fq.gz
fi
if ! have_all 'reads/ce#1000.sam' genomes/ce.fa; then
  echo "fetch-data: C. elegans reads (htslib-test)"
  fetch htslib-test
  pick htslib-test '*/test/ce#1000.sam' 'reads/ce#1000.sam'
  pick htslib-test '*/test/ce.fa' genomes/ce.fa
fi
if [ ! -d "$DATA/samtools-test" ]; then
  echo "fetch-data: samtools test files (samtools-test)"
  fetch samtools-test
  src=$(find "$tmp/samtools-test" -type d -name test | head -n1)
  cp -rL "$src" "$DATA/samtools-test"
fi
if ! have_all brain/anatomical.nii; then
  echo "fetch-data: small brain volume (python3-nibabel)"
  fetch python3-nibabel
  pick python3-nibabel '*/nibabel/tests/data/anatomical.nii' brain/anatomical.nii
fi
# gzip'd inputs in the lambda package may be plain: normalise to real gzip
for f in "$DATA/genomes/lambda_virus.fa.gz" "$DATA/reads/lambda_reads_1.fq.gz"; do
  if ! gzip -t "$f" 2>/dev/null; then gzip -c "$f" > "$f.tmp" && mv "$f.tmp" "$f"; fi
done
echo "fetch-data: data ready in $DATA/"
