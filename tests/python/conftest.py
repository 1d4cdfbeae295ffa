"""pytest set-up for the Python module: the build tree's package (PYTHONPATH=build/python, set by
ctest), the tools in build/bin ($EVK_BIN_DIR) for CLI comparisons, the project's data/ folder
(scripts/fetch-data.sh, or $EVK_DATA_DIR), helpers."""
import os
import pathlib
import subprocess

import numpy as np
import pytest

BIN = pathlib.Path(os.environ.get("EVK_BIN_DIR", pathlib.Path(__file__).resolve().parents[2] / "build" / "bin"))
DATA = pathlib.Path(os.environ.get("EVK_DATA_DIR", pathlib.Path(__file__).resolve().parents[2] / "data"))


@pytest.fixture(autouse=True)
def _no_overlay(tmp_path, monkeypatch):
    # Results must not depend on the machine's own evolved variants.
    monkeypatch.setenv("EVK_OVERLAY_DIR", str(tmp_path / "no-overlay"))


def tool(name, *args, cwd=None):
    """Runs build/bin/<name> args...; returns stdout, raising on failure (with its stderr)."""
    exe = BIN / name
    if not exe.exists():
        pytest.skip("%s not built" % exe)
    r = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, cwd=cwd)
    if r.returncode != 0:
        raise AssertionError("%s %s failed (%d): %s" % (name, " ".join(map(str, args)), r.returncode, r.stderr))
    return r.stdout


def write_pgm(path, img):
    img = np.asarray(img, dtype=np.uint8)
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (img.shape[1], img.shape[0]) + img.tobytes())


def read_pgm(path):
    """A binary PGM (P5, 8 or 16 bits) as (array (H, W) uint8 or uint16, maxval, the pixel bytes)."""
    raw = pathlib.Path(path).read_bytes()
    fields, pos = [], 0
    while len(fields) < 4:  # magic, width, height, maxval, separated by whitespace (no comments here)
        while raw[pos:pos + 1].isspace():
            pos += 1
        end = pos
        while not raw[end:end + 1].isspace():
            end += 1
        fields.append(raw[pos:end])
        pos = end
    assert fields[0] == b"P5", fields[0]
    w, h, maxval = map(int, fields[1:])
    pixels = raw[pos + 1:]
    dtype = np.uint8 if maxval < 256 else np.dtype(">u2")
    return np.frombuffer(pixels, dtype=dtype).reshape(h, w).astype(dtype if maxval < 256 else np.uint16), maxval, pixels


def read_pfm(path):
    with open(path, "rb") as f:
        magic = f.readline().strip()
        w, h = map(int, f.readline().split())
        scale = float(f.readline())
        data = np.frombuffer(f.read(), dtype="<f4" if scale < 0 else ">f4")
    assert magic == b"Pf"
    return data.reshape(h, w)[::-1]  # stored bottom to top


def assert_map_is_clis(cli, py, integer):
    """py (ek.stereo.disparity) equals cli (the CLI's PFM, invalid = +inf): int32 with -1 where
    invalid when integer, else float32 with NaN there."""
    if integer:
        assert py.dtype == np.int32
        np.testing.assert_array_equal(np.where(np.isinf(cli), -1, cli).astype(np.int32), py)
    else:
        assert py.dtype == np.float32
        np.testing.assert_array_equal(np.isinf(cli), np.isnan(py))
        np.testing.assert_array_equal(cli[np.isfinite(cli)], py[~np.isnan(py)])


def write_nii(path, data, affine):
    """A minimal NIfTI-1 .nii (float32, qform and sform both the diagonal `affine`) without nibabel
    (the GPU host has none). Only diagonal voxel-to-world matrices (no rotation) are written."""
    import struct
    data = np.asarray(data, dtype="<f4")
    aff = np.asarray(affine, dtype=np.float64)
    assert np.count_nonzero(aff[:3, :3] - np.diag(np.diag(aff[:3, :3]))) == 0 and np.all(np.diag(aff)[:3] > 0)
    dims = list(data.shape) + [1] * (7 - data.ndim)
    h = bytearray(352)
    struct.pack_into("<i", h, 0, 348)
    struct.pack_into("<8h", h, 40, data.ndim, *dims)
    struct.pack_into("<hh", h, 70, 16, 32)  # float32
    struct.pack_into("<8f", h, 76, 1.0, *np.diag(aff)[:3], 1, 1, 1, 1)
    struct.pack_into("<f", h, 108, 352.0)
    struct.pack_into("<hh", h, 252, 1, 1)  # qform_code, sform_code
    struct.pack_into("<6f", h, 256, 0, 0, 0, *aff[:3, 3])  # identity quaternion, offsets
    struct.pack_into("<12f", h, 280, *aff[:3, :].reshape(-1))
    h[344:348] = b"n+1\0"
    with open(path, "wb") as f:
        f.write(bytes(h) + data.reshape(-1, order="F").tobytes())


def read_nii(path):
    """(data float32 in NIfTI order, 4x4 sform) of a .nii float32 file our tools write (no nibabel)."""
    import struct
    raw = pathlib.Path(path).read_bytes()
    ndim, *dims = struct.unpack_from("<8h", raw, 40)
    dtype, = struct.unpack_from("<h", raw, 70)
    assert dtype == 16, "expected float32, datatype %d" % dtype
    off = int(struct.unpack_from("<f", raw, 108)[0])
    aff = np.eye(4)
    aff[:3, :] = np.array(struct.unpack_from("<12f", raw, 280), dtype=np.float64).reshape(3, 4)
    shape = tuple(dims[:ndim])
    n = int(np.prod(shape))
    return np.frombuffer(raw, dtype="<f4", count=n, offset=off).reshape(shape, order="F"), aff
