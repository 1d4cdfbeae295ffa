"""The GPU backend through Python (the lead runs this on the GPU host; skipped without a GPU):
stereo (ssd and sgm) bit-identical to the CPU backend and to the CLI on the GPU (the SGM pipeline is
bit-identical to sgm_cpu by construction: integer costs), also from raw frames through a rig;
reg.affine equal to `reg_deform affine --backend gpu`'s matrix and within one voxel of the CPU's;
reg.register's grid within 0.5 mm (a quarter voxel) of the GPU CLI's and the CPU's (float reductions
on the device may sum in another order, so the optimiser's path may differ slightly); reg field
within 1e-3 mm of the CPU (the paper's tolerance; the kernels measure 6e-5) and resampling through
it within 1e-3 of the CPU's per voxel (values are image intensities)."""
import numpy as np
import pytest

import evokernels as ek
from conftest import read_nii, read_pfm, tool, write_nii, write_pgm

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


def test_stereo_gpu_with_a_rig_equals_cpu():
    # raw frames through a rig (synthetic maps: no rig file, no OpenCV on the GPU host): sgm on the GPU
    # rectifies them on the device as the pipeline's first stage, ssd on the host; both give the CPU
    # backend's map, and the map of the pair rectify() gives
    rig = ek.stereo._synthetic_rig(333, 241, angle=0.03, k1=-0.06)
    rng = np.random.default_rng(4)
    left = rng.integers(0, 256, (241, 333), dtype=np.uint8)
    right = np.concatenate([left[:, 5:], rng.integers(0, 256, (241, 5), dtype=np.uint8)], axis=1)
    for kw in (dict(method="sgm", max_disparity=63, subpixel="parabola", median=3, lr_check=1), dict(max_disparity=40)):
        g, info = ek.stereo.disparity(left, right, rig=rig, backend="gpu", return_info=True, **kw)
        assert info["backend"] == "gpu"
        np.testing.assert_array_equal(g, ek.stereo.disparity(left, right, rig=rig, backend="cpu", **kw))
        np.testing.assert_array_equal(g, ek.stereo.disparity(*ek.stereo.rectify(left, right, rig), backend="gpu", **kw))


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


def test_stereo_sgm_gpu_equals_cpu_and_cli(tmp_path):
    rng = np.random.default_rng(5)
    left = rng.integers(0, 256, (123, 251), dtype=np.uint8)  # odd sizes
    right = np.concatenate([left[:, 9:], rng.integers(0, 256, (123, 9), dtype=np.uint8)], axis=1)
    write_pgm(tmp_path / "l.pgm", left)
    write_pgm(tmp_path / "r.pgm", right)
    cases = [([], {}),
             (["--subpixel", "equiangular", "--uniqueness", 5, "--lr-check", 1, "--median", 3, "--speckle-size", 30,
               "--max-disparity", 63], dict(subpixel="equiangular", uniqueness=5, lr_check=1, median=3,
                                            speckle_size=30, max_disparity=63)),
             (["--min-disparity", -8, "--max-disparity", 40, "--paths", 4, "--cost", "ssd"],
              dict(min_disparity=-8, max_disparity=40, paths=4, cost="ssd"))]
    for args, kw in cases:
        g, info = ek.stereo.disparity(left, right, method="sgm", backend="gpu", return_info=True, **kw)
        assert info["backend"] == "gpu" and info["kernel"] == "sgm-original"
        c = ek.stereo.disparity(left, right, method="sgm", backend="cpu", **kw)
        np.testing.assert_array_equal(g, c)  # NaN == NaN here (same positions)
        tool("stereo", "disparity", tmp_path / "l.pgm", tmp_path / "r.pgm", "-o", tmp_path / "d.pfm", "--method", "sgm",
             "--backend", "gpu", *args)
        cli = read_pfm(tmp_path / "d.pfm")
        gf = np.asarray(g, dtype=np.float32)
        if g.dtype == np.int32:
            gf = np.where(g == -1, np.inf, gf)
        np.testing.assert_array_equal(np.where(np.isnan(gf), np.inf, gf), cli)


def reg_pair(tmp_path):
    """The analytic phantom of test_reg_register.py and a known rotation + shift, as .nii files."""
    from phantom import AFF, SHAPE, known_transform, phantom, world_of
    m = known_transform()
    w = world_of(SHAPE, AFF)
    ref = phantom(w)
    mi = np.linalg.inv(m)
    flo = phantom(w @ mi[:3, :3].T + mi[:3, 3])
    write_nii(tmp_path / "ref.nii", ref, AFF)
    write_nii(tmp_path / "flo.nii", flo, AFF)
    return ref, flo, AFF, m, w[ref > 20]


def test_reg_affine_gpu(tmp_path):
    ref, flo, aff, m, pts = reg_pair(tmp_path)
    g, info = ek.reg.affine(ref, flo, ref_affine=aff, flo_affine=aff, backend="gpu", return_info=True)
    assert info["backend"] == "gpu"
    tool("reg_deform", "affine", "--ref", tmp_path / "ref.nii", "--flo", tmp_path / "flo.nii", "-o",
         tmp_path / "a.txt", "--backend", "gpu")
    np.testing.assert_array_equal(g, np.loadtxt(tmp_path / "a.txt"))
    c = ek.reg.affine(ref, flo, ref_affine=aff, flo_affine=aff, backend="cpu")

    def dist(a, b):
        return np.linalg.norm(pts @ (a - b)[:3, :3].T + (a - b)[:3, 3], axis=-1)
    assert dist(g, c).max() < 2.0, "GPU vs CPU: %.3f mm at most" % dist(g, c).max()  # one voxel
    assert dist(g, m).mean() < 2.0, "GPU vs the known transform: %.3f mm mean" % dist(g, m).mean()


def test_reg_register_gpu(tmp_path):
    ref, flo, aff, m, pts = reg_pair(tmp_path)
    # the original field kernel on both sides (the CLI's and the module's registries may rank
    # shipped variants differently); the auto variant is compared with the CPU below
    g, gaff, warped, info = ek.reg.register(ref, flo, ref_affine=aff, flo_affine=aff, maxit=20, ln=2, backend="gpu",
                                            kernel="original", return_info=True)
    assert info["backend"] == "gpu"
    tool("reg_deform", "register", "--ref", tmp_path / "ref.nii", "--flo", tmp_path / "flo.nii", "--cpp",
         tmp_path / "cpp.nii", "--maxit", 20, "--ln", 2, "--backend", "gpu", "--kernel", "original")
    cli, cli_aff = read_nii(tmp_path / "cpp.nii")
    assert cli.shape == g.shape
    np.testing.assert_array_equal(gaff, cli_aff)
    assert np.abs(g - cli).max() <= 0.5, "GPU Python vs GPU CLI: %.4f mm" % np.abs(g - cli).max()
    c, caff, cwarped = ek.reg.register(ref, flo, ref_affine=aff, flo_affine=aff, maxit=20, ln=2, backend="cpu")
    np.testing.assert_array_equal(gaff, caff)
    assert np.abs(g - c).max() <= 0.5, "GPU vs CPU: %.4f mm" % np.abs(g - c).max()
    a = ek.reg.register(ref, flo, ref_affine=aff, flo_affine=aff, maxit=20, ln=2, backend="gpu")[0]
    assert np.abs(a - c).max() <= 0.5, "GPU (auto variant) vs CPU: %.4f mm" % np.abs(a - c).max()
    inside = ~np.isnan(warped) & (ref > 5)
    assert np.mean((warped - ref)[inside] ** 2) < 0.5 * np.mean((flo - ref)[inside] ** 2)
