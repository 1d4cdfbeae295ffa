#!/usr/bin/env bash
# ctest install_tree: `cmake --install` into a temporary prefix, move the tree (relocation), then from
# there: every tool's --version and a small job, the data directory found from the new location,
# man pages, the drop-in commands in lib/evokernels (not in bin/), and the Python module.
# Usage: install_test.sh BUILD_DIR [PYTHON]   (PYTHON: the interpreter the module was built for)
set -euo pipefail
build=$(cd "$1" && pwd)
py=${2:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }
export EVK_OVERLAY_DIR="$tmp/no-overlay" EVK_CACHE_DIR="$tmp/cache"
unset EVK_SHARE_DIR

cmake --install "$build" --prefix "$tmp/p1" > "$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
mv "$tmp/p1" "$tmp/p2"  # an installed tree must work wherever it is moved
p=$tmp/p2
cd "$tmp"

for t in stereo reg_deform barracuda_exact; do
  [ -x "$p/bin/$t" ] || fail "bin/$t missing"
  v=$("$p/bin/$t" --version) || fail "$t --version"
  [[ $v == "$t (EvoKernels) "* ]] || fail "$t --version printed '$v'"
  [ -s "$p/share/man/man1/$t.1" ] || fail "man page $t.1 missing"
  grep -q "^\.SH COMMANDS" "$p/share/man/man1/$t.1" || fail "$t.1 has no COMMANDS section"
  d=$("$p/bin/$t" devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["data_dir"])')
  [ "$d" = "$p/share/evokernels" ] || fail "$t finds its data in '$d', not $p/share/evokernels"
done
# the drop-ins never shadow real NiftyReg or bwa on PATH
for c in reg_resample reg_measure reg_aladin reg_f3d bwa; do
  [ ! -e "$p/bin/$c" ] || fail "$c installed in bin/ (would shadow the real one)"
done
for c in niftyreg/reg_resample niftyreg/reg_measure niftyreg/reg_aladin niftyreg/reg_f3d bwa/bwa; do
  [ -x "$p/lib/evokernels/$c" ] || fail "lib/evokernels/$c missing"
done
[ "$("$p/lib/evokernels/niftyreg/reg_aladin" --version)" = "$("$p/lib/evokernels/niftyreg/reg_resample" --version)" ] ||
  fail "drop-in versions differ"
[[ $("$p/lib/evokernels/niftyreg/reg_aladin" --version) == 2.0.0+evokernels.* ]] || fail "reg_aladin --version"

# stereo: a 64x48 pair, the right image the left shifted by 4 pixels
python3 - "$tmp" <<'PY'
import random, sys
random.seed(7)
w, h, s = 64, 48, 4
left = [[random.randrange(256) for _ in range(w)] for _ in range(h)]
right = [row[s:] + row[-1:] * s for row in left]
for name, img in (("l.pgm", left), ("r.pgm", right)):
    with open(sys.argv[1] + "/" + name, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (w, h) + bytes(v for row in img for v in row))
PY
"$p/bin/stereo" disparity l.pgm r.pgm -o d.pfm --max-disparity 8 --window 5 --json > st.json || fail "stereo disparity"
python3 - <<'PY' || fail "stereo result"
import json, struct
j = json.load(open("st.json"))
assert (j["width"], j["height"]) == (64, 48), j
raw = open("d.pfm", "rb").read()
hdr = raw.split(b"\n", 3)
vals = struct.unpack("<%df" % (64 * 48), hdr[3])
inner = [vals[y * 64 + x] for y in range(8, 40) for x in range(8, 52)]
assert sum(1 for v in inner if v == 4.0) > 0.95 * len(inner), "disparity 4 expected inside"
PY

# reg_deform: a random 16^3 case, its field, a resampling through it
"$p/bin/reg_deform" random-case --seed 3 --size 16 -o case > /dev/null || fail "reg_deform random-case"
"$p/bin/reg_deform" field --ref case/image.nii.gz --cpp case/cpp.nii.gz -o f.nii.gz || fail "reg_deform field"
"$p/bin/reg_deform" resample --ref case/image.nii.gz --flo case/image.nii.gz --trans case/cpp.nii.gz -o w.nii.gz ||
  fail "reg_deform resample"
[ -s f.nii.gz ] && [ -s w.nii.gz ] || fail "reg_deform outputs"

# barracuda_exact: index a 2 kbp reference, map reads cut from it
python3 - <<'PY'
import random
random.seed(5)
ref = "".join(random.choice("ACGT") for _ in range(2000))
open("ref.fa", "w").write(">chr\n" + "\n".join(ref[i:i + 60] for i in range(0, len(ref), 60)) + "\n")
with open("r.fq", "w") as f:
    for i in range(50):
        s = ref[i * 30:i * 30 + 40]
        f.write("@r%d\n%s\n+\n%s\n" % (i, s, "I" * len(s)))
PY
"$p/bin/barracuda_exact" index ref.fa > /dev/null || fail "barracuda_exact index"
"$p/bin/barracuda_exact" map --exact ref.fa r.fq -o r.sam 2> /dev/null || fail "barracuda_exact map --exact"  # = bwa aln -n 0 | samse
[ "$(grep -vc '^@' r.sam)" = 50 ] || fail "barracuda_exact map: not 50 records"
[ "$(awk '!/^@/ && $2 == 0 && $6 == "40M"' r.sam | wc -l)" = 50 ] || fail "barracuda_exact map: reads not mapped"

# the drop-ins: bwa aln -n 0 | samse, reg_measure
PATH="$p/lib/evokernels/bwa:$PATH" bash -c 'bwa aln -n 0 ref.fa r.fq > r.sai 2>/dev/null && bwa samse ref.fa r.sai r.fq > b.sam 2>/dev/null' ||
  fail "drop-in bwa aln | samse"
# (bwa aln -n 0 is exact matching: the drop-in's records equal `map --exact`'s)
diff <(grep -v '^@' r.sam | cut -f 1-11) <(grep -v '^@' b.sam | cut -f 1-11) > /dev/null || fail "drop-in bwa records differ from map --exact's"
"$p/lib/evokernels/niftyreg/reg_measure" -ref case/image.nii.gz -flo w.nii.gz -nmi > m.txt || fail "drop-in reg_measure"
grep -q "^NMI: [0-9.]*$" m.txt || fail "reg_measure printed '$(cat m.txt)'"

# Python: the installed package, from the moved tree
if compgen -G "$p/lib/python3/dist-packages/evokernels/_ext*.so" > /dev/null; then
  PYTHONPATH="$p/lib/python3/dist-packages" "$py" - "$p" <<'PY' || fail "python module"
import sys, numpy as np, evokernels as ek
assert ek.__version__, "no version"
assert ek.environment()["data_dir"] == sys.argv[1] + "/share/evokernels", ek.environment()
rng = np.random.default_rng(1)
l = rng.integers(0, 256, (30, 50), dtype=np.uint8)
r = np.concatenate([l[:, 3:], np.repeat(l[:, -1:], 3, axis=1)], axis=1)
d = ek.stereo.disparity(l, r, max_disparity=6, window=5, backend="cpu")
assert d.dtype == np.int32 and d.shape == (30, 50) and (d[5:25, 5:40] == 3).mean() > 0.95
PY
fi
echo "install_test: OK ($p)"
