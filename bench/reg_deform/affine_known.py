#!/usr/bin/env python3
"""Known-transform figures for `reg_deform affine` (numpy only, a minimal NIfTI-1 reader).
  affine_known.py make SEED rigid|affine T.txt TINV.txt   random transform in the issue's ranges
      (rotations up to 20 deg, translations up to 20 mm, scalings 0.9-1.1, shears up to 0.05),
      reference world -> floating world, and its inverse (for `grid --affine` + `resample`).
  affine_known.py error REF.nii[.gz] TRUE.txt EST.txt      mean / max distance (mm) between the two
      mappings over the head voxels (reference intensity > 5 % of its maximum)."""
import gzip, math, struct, sys
import numpy as np


def read_nifti(path):
    raw = (gzip.open if path.endswith('.gz') else open)(path, 'rb').read()
    endian = '<' if struct.unpack('<i', raw[:4])[0] == 348 else '>'
    dim = struct.unpack(endian + '8h', raw[40:56])
    dtype = struct.unpack(endian + 'h', raw[70:72])[0]
    vox_offset = int(struct.unpack(endian + 'f', raw[108:112])[0])
    slope, inter = struct.unpack(endian + '2f', raw[112:120])
    sform_code = struct.unpack(endian + 'h', raw[254:256])[0]
    srow = np.array(struct.unpack(endian + '12f', raw[280:328]), dtype=float).reshape(3, 4)
    if sform_code <= 0:
        sys.exit(path + ': no sform (this helper reads sform images only)')
    types = {2: 'u1', 4: 'i2', 8: 'i4', 16: 'f4', 64: 'f8', 256: 'i1', 512: 'u2', 768: 'u4'}
    n = dim[1] * dim[2] * dim[3]
    data = np.frombuffer(raw, dtype=np.dtype(types[dtype]).newbyteorder(endian), count=n, offset=vox_offset)
    data = data.astype(float) * (slope if slope not in (0,) and math.isfinite(slope) else 1.0) + (inter if slope else 0.0)
    return data.reshape(dim[3], dim[2], dim[1]), np.vstack([srow, [0, 0, 0, 1]])


def rot(ax, ay, az):
    cx, sx, cy, sy, cz, sz = math.cos(ax), math.sin(ax), math.cos(ay), math.sin(ay), math.cos(az), math.sin(az)
    rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    return rz @ ry @ rx


def write(path, m):
    with open(path, 'w') as f:
        for r in m:
            f.write(' '.join(repr(float(v)) for v in r) + '\n')


def main():
    if sys.argv[1] == 'make':
        seed, kind, out, outinv = int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
        rng = np.random.default_rng(seed)
        a = rot(*rng.uniform(-20, 20, 3) * math.pi / 180)
        if kind == 'affine':
            s = np.diag(rng.uniform(0.9, 1.1, 3))
            s[0, 1], s[0, 2], s[1, 2] = rng.uniform(-0.05, 0.05, 3)
            a = a @ s
        m = np.eye(4)
        m[:3, :3] = a
        m[:3, 3] = rng.uniform(-20, 20, 3)
        write(out, m)
        write(outinv, np.linalg.inv(m))
    elif sys.argv[1] == 'error':
        img, v2w = read_nifti(sys.argv[2])
        t = np.loadtxt(sys.argv[3])
        e = np.loadtxt(sys.argv[4])
        z, y, x = np.nonzero(img > 0.05 * img.max())
        p = v2w @ np.vstack([x, y, z, np.ones_like(x)]).astype(float)
        d = np.linalg.norm((t @ p - e @ p)[:3], axis=0)
        print('head voxels %d  mean %.3f mm  max %.3f mm' % (len(d), d.mean(), d.max()))
    else:
        sys.exit(__doc__)


main()
