#!/usr/bin/env python3
"""Known-transform figures for `reg_deform affine` (Python standard library only: runs on the GPU
host, which has no numpy; a minimal NIfTI-1 reader).
  affine_known.py make SEED rigid|affine T.txt TINV.txt   random transform in the issue's ranges
      (rotations up to 20 deg, translations up to 20 mm, scalings 0.9-1.1, shears up to 0.05),
      reference world -> floating world, and its inverse (for `grid --affine` + `resample`).
      The transform is a function of SEED and the kind only (Python's random.Random(SEED)).
  affine_known.py error REF.nii[.gz] TRUE.txt EST.txt      mean / max distance (mm) between the two
      mappings over the head voxels (reference intensity > 5 % of its maximum).
  affine_known.py selftest                                  checks of the helpers (inverse, reader)."""
import array, gzip, math, os, random, struct, sys, tempfile

TYPES = {2: 'B', 4: 'h', 8: 'i', 16: 'f', 64: 'd', 256: 'b', 512: 'H', 768: 'I'}


def read_nifti(path):
    raw = (gzip.open if path.endswith('.gz') else open)(path, 'rb').read()
    endian = '<' if struct.unpack('<i', raw[:4])[0] == 348 else '>'
    dim = struct.unpack(endian + '8h', raw[40:56])
    dtype = struct.unpack(endian + 'h', raw[70:72])[0]
    vox_offset = int(struct.unpack(endian + 'f', raw[108:112])[0])
    slope, inter = struct.unpack(endian + '2f', raw[112:120])
    sform_code = struct.unpack(endian + 'h', raw[254:256])[0]
    srow = struct.unpack(endian + '12f', raw[280:328])
    if sform_code <= 0:
        sys.exit(path + ': no sform (this helper reads sform images only)')
    if dtype not in TYPES:
        sys.exit(path + ': datatype %d not read by this helper' % dtype)
    nx, ny, nz = dim[1], dim[2], dim[3]
    data = array.array(TYPES[dtype])
    count = nx * ny * nz
    end = vox_offset + count * data.itemsize
    if len(raw) < end:
        sys.exit(path + ': truncated voxel data')
    data.frombytes(raw[vox_offset:end])
    if (endian == '<') != (sys.byteorder == 'little'):
        data.byteswap()
    if slope != 0 and math.isfinite(slope) and (slope != 1 or inter != 0):
        data = array.array('d', (v * slope + inter for v in data))
    v2w = [list(srow[0:4]), list(srow[4:8]), list(srow[8:12]), [0.0, 0.0, 0.0, 1.0]]
    return (nx, ny, nz), data, v2w


def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


def inverse(m):
    """Gauss-Jordan with partial pivoting (4x4)."""
    n = len(m)
    a = [list(map(float, r)) + [1.0 if i == j else 0.0 for j in range(n)] for i, r in enumerate(m)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(a[r][c]))
        if abs(a[p][c]) < 1e-12:
            sys.exit('singular matrix')
        a[c], a[p] = a[p], a[c]
        piv = a[c][c]
        a[c] = [v / piv for v in a[c]]
        for r in range(n):
            if r != c and a[r][c] != 0:
                f = a[r][c]
                a[r] = [x - f * y for x, y in zip(a[r], a[c])]
    return [row[n:] for row in a]


def rot(ax, ay, az):
    cx, sx, cy, sy, cz, sz = math.cos(ax), math.sin(ax), math.cos(ay), math.sin(ay), math.cos(az), math.sin(az)
    rx = [[1, 0, 0], [0, cx, -sx], [0, sx, cx]]
    ry = [[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]]
    rz = [[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]]
    return matmul(rz, matmul(ry, rx))


def read_matrix(path):
    rows = [list(map(float, l.split())) for l in open(path) if l.strip()]
    if len(rows) != 4 or any(len(r) != 4 for r in rows):
        sys.exit(path + ': not a 4x4 matrix')
    return rows


def write(path, m):
    with open(path, 'w') as f:
        for r in m:
            f.write(' '.join(repr(float(v)) for v in r) + '\n')


def make(seed, kind):
    rng = random.Random(seed * 2 + (kind == 'affine'))
    a = rot(*[rng.uniform(-20, 20) * math.pi / 180 for _ in range(3)])
    if kind == 'affine':
        s = [[rng.uniform(0.9, 1.1), 0, 0], [0, rng.uniform(0.9, 1.1), 0], [0, 0, rng.uniform(0.9, 1.1)]]
        s[0][1], s[0][2], s[1][2] = (rng.uniform(-0.05, 0.05) for _ in range(3))
        a = matmul(a, s)
    t = [rng.uniform(-20, 20) for _ in range(3)]
    return [a[0] + [t[0]], a[1] + [t[1]], a[2] + [t[2]], [0.0, 0.0, 0.0, 1.0]]


def error(ref, true_path, est_path):
    (nx, ny, nz), img, v2w = read_nifti(ref)
    d = [[a - b for a, b in zip(r, s)] for r, s in zip(read_matrix(true_path), read_matrix(est_path))]
    dv = matmul(d, v2w)  # (T - E) applied to a voxel's world position, as a map of voxel indices
    thr = 0.05 * max(img)
    r0, r1, r2 = dv[0], dv[1], dv[2]
    n, total, worst = 0, 0.0, 0.0
    sqrt = math.sqrt
    for z in range(nz):
        for y in range(ny):
            base = (z * ny + y) * nx
            row = img[base:base + nx]
            # the x-independent parts of each row's error vector
            c0 = r0[1] * y + r0[2] * z + r0[3]
            c1 = r1[1] * y + r1[2] * z + r1[3]
            c2 = r2[1] * y + r2[2] * z + r2[3]
            for x, v in enumerate(row):
                if v > thr:
                    e0, e1, e2 = r0[0] * x + c0, r1[0] * x + c1, r2[0] * x + c2
                    e = sqrt(e0 * e0 + e1 * e1 + e2 * e2)
                    total += e
                    if e > worst:
                        worst = e
                    n += 1
    if n == 0:
        sys.exit(ref + ': no head voxels')
    return n, total / n, worst


def selftest():
    for seed in range(20):
        for kind in ('rigid', 'affine'):
            m = make(seed, kind)
            p = matmul(m, inverse(m))
            assert all(abs(p[i][j] - (i == j)) < 1e-12 for i in range(4) for j in range(4)), (seed, kind)
            r = [row[:3] for row in m[:3]]
            det = (r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) - r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0])
                   + r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]))
            if kind == 'rigid':
                assert abs(det - 1) < 1e-12
            else:
                assert 0.9 ** 3 - 1e-9 < det < 1.1 ** 3 + 1e-9
            assert all(abs(m[i][3]) <= 20 for i in range(3))
    assert make(3, 'affine') == make(3, 'affine') and make(3, 'affine') != make(4, 'affine')
    # A 3x2x2 uint8 image with a diagonal sform; the true and estimated maps differ by a shift of
    # (3, 4, 0) mm: every head voxel is 5 mm off.
    hdr = bytearray(352)
    struct.pack_into('<i', hdr, 0, 348)
    struct.pack_into('<8h', hdr, 40, 3, 3, 2, 2, 1, 1, 1, 1)
    struct.pack_into('<hh', hdr, 70, 2, 8)
    struct.pack_into('<f', hdr, 108, 352.0)
    struct.pack_into('<h', hdr, 254, 1)
    struct.pack_into('<12f', hdr, 280, 2, 0, 0, -10, 0, 2, 0, 5, 0, 0, 2, 1)
    hdr[344:348] = b'n+1\0'
    vox = bytes([0, 200, 100, 1, 0, 255, 9, 7, 80, 0, 0, 120])
    d = tempfile.mkdtemp()
    img, t, e = (os.path.join(d, n) for n in ('i.nii.gz', 't.txt', 'e.txt'))
    with gzip.open(img, 'wb') as f:
        f.write(bytes(hdr) + vox)
    write(t, make(1, 'affine'))
    est = make(1, 'affine')
    est[0][3] += 3
    est[1][3] += 4
    write(e, est)
    n, mean, worst = error(img, t, e)
    assert n == sum(v > 0.05 * 255 for v in vox) == 5, n
    assert abs(mean - 5) < 1e-9 and abs(worst - 5) < 1e-9, (mean, worst)
    (nx, ny, nz), data, v2w = read_nifti(img)
    assert (nx, ny, nz) == (3, 2, 2) and list(data) == list(vox) and v2w[1][3] == 5
    print('affine_known.py selftest: ok')


def main():
    if len(sys.argv) >= 6 and sys.argv[1] == 'make':
        seed, kind, out, outinv = int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
        if kind not in ('rigid', 'affine'):
            sys.exit('kind must be rigid or affine')
        m = make(seed, kind)
        write(out, m)
        write(outinv, inverse(m))
    elif len(sys.argv) == 5 and sys.argv[1] == 'error':
        n, mean, worst = error(sys.argv[2], sys.argv[3], sys.argv[4])
        print('head voxels %d  mean %.3f mm  max %.3f mm' % (n, mean, worst))
    elif len(sys.argv) == 2 and sys.argv[1] == 'selftest':
        selftest()
    else:
        sys.exit(__doc__)


main()
