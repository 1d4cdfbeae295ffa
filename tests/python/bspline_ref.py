"""Plain numpy references for evokernels.reg on tiny cases, written from the definitions (not from
the C++): the cubic B-spline deformation of a control-point grid in NiftyReg's layout, and
nearest / linear / cubic B-spline resampling with mirror boundaries and padding outside."""
import numpy as np


def bspline_weights(u):
    """The cubic B-spline weights of fractional positions u (..., 4)."""
    return np.stack([(1 - u) ** 3 / 6, (3 * u ** 3 - 6 * u ** 2 + 4) / 6, (-3 * u ** 3 + 3 * u ** 2 + 3 * u + 1) / 6,
                     u ** 3 / 6], -1)


def axis_matrix(n, s, g):
    """(n, g): the weights of grid points 0..g-1 for voxels 0..n-1 at spacing s voxels; grid index i
    lies at voxel (i - 1) * s, so voxel x uses points floor(x / s) .. floor(x / s) + 3."""
    t = np.arange(n) / s
    i0 = np.floor(t).astype(int)
    w = bspline_weights(t - i0)
    m = np.zeros((n, g))
    for a in range(4):
        m[np.arange(n), i0 + a] = w[:, a]
    return m


def deformation(ref_shape, ref_affine, cpp, cpp_affine):
    """The deformation field (nx, ny, nz, 3), world mm, of a grid cpp (gx, gy, gz, 1, 3)."""
    spacing = [np.linalg.norm(cpp_affine[:3, a]) / np.linalg.norm(ref_affine[:3, a]) for a in range(3)]
    g = np.asarray(cpp, dtype=np.float64)[:, :, :, 0, :]
    mx, my, mz = (axis_matrix(n, s, k) for n, s, k in zip(ref_shape, spacing, g.shape[:3]))
    return np.einsum("xi,yj,zk,ijkc->xyzc", mx, my, mz, g)


def floating_voxels(field, flo_affine):
    """Floating voxel coordinates (nx, ny, nz, 3) of a deformation field."""
    inv = np.linalg.inv(flo_affine)
    return field @ inv[:3, :3].T + inv[:3, 3]


def inside(p, shape, eps=1e-4):
    return np.all((p >= -eps) & (p <= np.asarray(shape) - 1 + eps), axis=-1)


def mirror(i, n):
    period = 2 * n - 2
    i = np.mod(i, period)
    return np.where(i < n, i, period - i)


def spline_coefficients(img):
    """Interpolating cubic B-spline coefficients, mirror boundaries: per axis the linear system
    (c[i-1] + 4 c[i] + c[i+1]) / 6 = f[i] with c[-1] = c[1], c[n] = c[n-2], solved directly."""
    c = np.asarray(img, dtype=np.float64)
    for axis in range(3):
        n = c.shape[axis]
        a = np.zeros((n, n))
        for i in range(n):
            for k, w in ((i - 1, 1 / 6), (i, 4 / 6), (i + 1, 1 / 6)):
                a[i, mirror(k, n)] += w
        c = np.moveaxis(np.tensordot(np.linalg.inv(a), np.moveaxis(c, axis, 0), axes=1), 0, axis)
    return c


def resample(flo, flo_affine, field, interp, pad):
    """flo sampled at the deformation field's positions (nearest, linear or cubic), pad outside."""
    flo = np.asarray(flo, dtype=np.float64)
    shape = flo.shape
    p = floating_voxels(field, flo_affine)
    ok = inside(p, shape)
    p = np.clip(p, 0, np.asarray(shape) - 1)
    if interp == "nearest":
        q = np.floor(p + 0.5).astype(int)
        out = flo[q[..., 0], q[..., 1], q[..., 2]]
    elif interp == "linear":
        i0 = np.floor(p).astype(int)
        f = p - i0
        out = np.zeros(p.shape[:3])
        for dx in (0, 1):
            for dy in (0, 1):
                for dz in (0, 1):
                    d = np.array([dx, dy, dz])
                    w = np.prod(np.where(d == 1, f, 1 - f), axis=-1)
                    q = np.minimum(i0 + d, np.asarray(shape) - 1)
                    out += w * flo[q[..., 0], q[..., 1], q[..., 2]]
    else:
        c = spline_coefficients(flo)
        i0 = np.floor(p).astype(int)
        w = bspline_weights(p - i0)  # (..., 3, 4)
        out = np.zeros(p.shape[:3])
        for a in range(4):
            for b in range(4):
                for e in range(4):
                    qx = mirror(i0[..., 0] - 1 + a, shape[0])
                    qy = mirror(i0[..., 1] - 1 + b, shape[1])
                    qz = mirror(i0[..., 2] - 1 + e, shape[2])
                    out += w[..., 0, a] * w[..., 1, b] * w[..., 2, e] * c[qx, qy, qz]
    return np.where(ok, out, pad)
