"""The analytic phantom of the registration tests (no nibabel: test_gpu.py uses it too)."""
import numpy as np

SHAPE = (33, 29, 27)  # odd sizes
AFF = np.array([[2.0, 0, 0, -32.0], [0, 2.0, 0, -28.0], [0, 0, 2.0, -26.0], [0, 0, 0, 1]])


def phantom(world):
    """An asymmetric smooth object: an ellipsoid with blobs, of world positions (..., 3) in mm."""
    x, y, z = world[..., 0], world[..., 1], world[..., 2]
    v = 100.0 / (1 + np.exp(((x / 22) ** 2 + (y / 18) ** 2 + (z / 15) ** 2 - 1) * 12))
    for c, s, a in (((8, 5, 3), 5, 80), ((-10, -4, 6), 4, -60), ((2, 10, -7), 3.5, 70), ((-6, 8, 2), 3, 50)):
        v += a * np.exp(-((x - c[0]) ** 2 + (y - c[1]) ** 2 + (z - c[2]) ** 2) / (2 * s * s))
    return v.astype(np.float32)


def world_of(shape, aff):
    ijk = np.stack(np.meshgrid(*[np.arange(n, dtype=np.float64) for n in shape], indexing="ij"), -1)
    return ijk @ aff[:3, :3].T + aff[:3, 3]


def known_transform():
    """Reference world -> floating world: 4 degrees about z, 2 about x, a 2-3 mm shift."""
    a, b = np.radians(4), np.radians(2)
    rz = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
    rx = np.array([[1, 0, 0], [0, np.cos(b), -np.sin(b)], [0, np.sin(b), np.cos(b)]])
    m = np.eye(4)
    m[:3, :3] = rz @ rx
    m[:3, 3] = [2.5, -2.0, 1.5]
    return m
