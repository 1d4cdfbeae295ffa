#!/usr/bin/env bash
# ctest package_deb: builds the Debian package with CPack in a scratch directory and checks it with
# dpkg-deb: name, version, architecture, Depends computed from the ELF files (the Debian runtime
# libraries we link, never CUDA), the CUDA requirement in the description, the file list (tools,
# man pages, drop-ins off PATH, Python package), that no binary needs libnvrtc/libcuda/libcudart at
# load time, and, where apt has package lists, that `apt-get install ./evokernels_*.deb` would
# resolve (simulated).
# Usage: package_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "package_test: FAIL: $*" >&2; exit 1; }

(cd "$build" && cpack -G DEB -B "$tmp/out" > "$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; fail "cpack"; }
deb=$(ls "$tmp"/out/evokernels_*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || { cat "$tmp/cpack.log"; fail "no evokernels_*.deb"; }
info=$(dpkg-deb -I "$deb")
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = evokernels ] || fail "Package: $(field Package)"
[ "$(field Architecture)" = "$(dpkg --print-architecture)" ] || fail "Architecture: $(field Architecture)"
[ -n "$(field Version)" ] || fail "no Version"
deps=$(field Depends)
echo "package_test: Depends: $deps"
for lib in libc6 libstdc++6 libhts3 zlib1g libdivsufsort3; do
  grep -q "\b$lib\b" <<< "$deps" || fail "Depends lacks $lib"
done
if grep -qi "cuda\|nvidia\|nvrtc" <<< "$deps"; then fail "Depends names CUDA: $deps"; fi
grep -q "GPU requirement\|no GPU backends" <<< "$info" || fail "description does not state the CUDA requirement"

dpkg-deb -c "$deb" | awk '{print $NF}' > "$tmp/files"
for f in ./usr/bin/stereo ./usr/bin/reg_deform ./usr/bin/barracuda_exact \
         ./usr/share/man/man1/stereo.1 ./usr/share/man/man1/reg_deform.1 ./usr/share/man/man1/barracuda_exact.1 \
         ./usr/lib/evokernels/niftyreg/reg_resample ./usr/lib/evokernels/niftyreg/reg_measure \
         ./usr/lib/evokernels/niftyreg/reg_aladin ./usr/lib/evokernels/niftyreg/reg_f3d ./usr/lib/evokernels/bwa/bwa \
         ./usr/share/evokernels/README; do
  grep -qx "$f" "$tmp/files" || fail "$f not in the package"
done
if grep -q "^./usr/lib/python3/dist-packages/evokernels/" "$tmp/files"; then
  grep -q "^./usr/lib/python3/dist-packages/evokernels/_ext.*\.so$" "$tmp/files" || fail "python package without its module"
fi
if grep -qE "^./usr/bin/(reg_resample|reg_measure|reg_aladin|reg_f3d|bwa)$" "$tmp/files"; then fail "a drop-in in /usr/bin"; fi

dpkg-deb -x "$deb" "$tmp/root"
for b in "$tmp"/root/usr/bin/* "$tmp"/root/usr/lib/evokernels/*/*; do
  if readelf -d "$b" | grep NEEDED | grep -qE "libnvrtc|libcuda|libcudart"; then fail "$(basename "$b") needs CUDA libraries to start"; fi
done
"$tmp/root/usr/bin/stereo" --version > /dev/null || fail "extracted stereo does not run"

if [ "$(id -u)" -eq 0 ] && compgen -G "/var/lib/apt/lists/*_Packages*" > /dev/null; then
  apt-get install -s -q "$deb" > "$tmp/apt.log" 2>&1 || { cat "$tmp/apt.log"; fail "apt-get install -s $deb"; }
  grep -q "^Inst evokernels" "$tmp/apt.log" || { cat "$tmp/apt.log"; fail "apt would not install evokernels"; }
else
  echo "package_test: apt-get install simulation skipped (needs root and apt package lists)"
fi
echo "package_test: OK ($(basename "$deb"), $(du -h "$deb" | cut -f1))"
