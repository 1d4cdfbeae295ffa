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


def test_reg_gpu_within_tolerance(tmp_path):
    nib = pytest.importorskip("nibabel")
    tool("reg_deform", "random-case", "--seed", 11, "--size", 64, "-o", tmp_path)
    ref, cpp = nib.load(tmp_path / "image.nii.gz"), nib.load(tmp_path / "cpp.nii.gz")
    fg, info = ek.reg.field(ref, cpp, backend="gpu", return_info=True)
    assert info["backend"] == "gpu"
    fc = ek.reg.field(ref, cpp, backend="cpu")
    assert np.max(np.abs(fg - fc)) <= 1e-3
    wg = ek.reg.resample(ref, ref, cpp, backend="gpu")
    wc = ek.reg.resample(ref, ref, cpp, backend="cpu")
    assert np.max(np.abs(wg - wc)) <= 1e-3 * max(1.0, float(np.abs(wc).max()))
