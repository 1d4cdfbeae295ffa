"""evokernels.reg.affine and reg.register on the CPU backend: a known small affine recovered from an
analytic phantom, the matrix equal to `reg_deform affine`'s on the same files (written exactly:
shortest round-trip text), register's control-point grid and warped image equal to
`reg_deform register`'s --cpp and --res, and errors with the CLI's messages."""
import numpy as np
import pytest

import evokernels as ek
from conftest import tool

nib = pytest.importorskip("nibabel")

from phantom import AFF, SHAPE, known_transform, phantom, world_of


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    d = tmp_path_factory.mktemp("reg")
    m = known_transform()
    ref = phantom(world_of(SHAPE, AFF))
    # flo(y) = ref-object at M^-1 y, so that ref(x) = flo(M x)
    w = world_of(SHAPE, AFF)
    flo = phantom(w @ np.linalg.inv(m)[:3, :3].T + np.linalg.inv(m)[:3, 3])
    for name, data in (("ref", ref), ("flo", flo)):
        img = nib.Nifti1Image(data, AFF)
        img.set_qform(AFF, 1)
        img.set_sform(AFF, 1)
        nib.save(img, str(d / ("%s.nii" % name)))
    return d, ref, flo, m


def test_affine_recovers_the_transform_and_equals_the_cli(images, tmp_path):
    d, ref, flo, m = images
    tool("reg_deform", "affine", "--ref", d / "ref.nii", "--flo", d / "flo.nii", "-o", tmp_path / "a.txt",
         "--backend", "cpu")
    cli = np.loadtxt(tmp_path / "a.txt")
    py, info = ek.reg.affine(ref, flo, ref_affine=AFF, flo_affine=AFF, backend="cpu", return_info=True)
    assert info["backend"] == "cpu" and py.shape == (4, 4)
    np.testing.assert_array_equal(py, cli)
    # the known transform (identity: 4.8 mm off at worst over the object). Block matches are whole
    # voxels (2 mm) by default: within one voxel on average; with --subvoxel within 1 mm everywhere.
    pts = world_of(SHAPE, AFF)[ref > 20]

    def err(p):
        return np.linalg.norm(pts @ (p - m)[:3, :3].T + (p - m)[:3, 3], axis=-1)
    assert err(np.eye(4)).max() > 4.5
    assert err(py).mean() < 2.0 and err(py).max() < 2.5, "error %.3f mm mean, %.3f max" % (err(py).mean(), err(py).max())
    sub = ek.reg.affine(ref, flo, ref_affine=AFF, flo_affine=AFF, subvoxel=True, backend="cpu")
    assert err(sub).max() < 1.0 and err(sub).mean() < 0.6, "--subvoxel: %.3f mm mean, %.3f max" % (
        err(sub).mean(), err(sub).max())
    # nibabel images give the same
    np.testing.assert_array_equal(ek.reg.affine(nib.load(d / "ref.nii"), nib.load(d / "flo.nii"), backend="cpu"), py)


def test_register_equals_the_cli(images, tmp_path):
    d, ref, flo, m = images
    tool("reg_deform", "register", "--ref", d / "ref.nii", "--flo", d / "flo.nii", "--cpp", tmp_path / "cpp.nii",
         "--res", tmp_path / "res.nii", "--maxit", 20, "--ln", 2, "--backend", "cpu")
    cli_cpp = nib.load(tmp_path / "cpp.nii")
    cli_res = np.asarray(nib.load(tmp_path / "res.nii").dataobj, dtype=np.float32)
    cpp, cpp_aff, warped, info = ek.reg.register(ref, flo, ref_affine=AFF, flo_affine=AFF, maxit=20, ln=2,
                                                 backend="cpu", return_info=True)
    assert info["backend"] == "cpu"
    # fold-free by default, and said so (the CLI's --json keys)
    assert info["folded_voxels"] == 0 and info["min_jacobian"] > 0
    assert {"folded_before", "min_jacobian_before", "rounds", "control_point_moves", "seconds"} <= set(info["unfold"])
    assert cpp.shape == cli_cpp.shape and cpp.dtype == np.float32
    np.testing.assert_array_equal(cpp, np.asarray(cli_cpp.dataobj, dtype=np.float32))
    np.testing.assert_array_equal(cpp_aff, cli_cpp.affine)
    np.testing.assert_array_equal(np.isnan(warped), np.isnan(cli_res))
    np.testing.assert_array_equal(warped[~np.isnan(warped)], cli_res[~np.isnan(cli_res)])
    # and it registered: the warped image is closer to the reference than the floating image was
    inside = ~np.isnan(warped) & (ref > 5)
    assert np.mean((warped - ref)[inside] ** 2) < 0.5 * np.mean((flo - ref)[inside] ** 2)
    # the grid is usable by reg.resample and gives the same warped image (cubic, pad nan)
    w2 = ek.reg.resample(ref, flo, cpp, ref_affine=AFF, flo_affine=AFF, trans_affine=cpp_aff, trans_type="grid",
                         interp="cubic", pad=float("nan"), backend="cpu")
    np.testing.assert_array_equal(np.isnan(w2), np.isnan(warped))
    np.testing.assert_array_equal(w2[~np.isnan(w2)], warped[~np.isnan(warped)])


def test_errors_carry_the_cli_messages(images):
    d, ref, flo, m = images
    with pytest.raises(ek.InputError, match=r"--lp"):
        ek.reg.register(ref, flo, ref_affine=AFF, flo_affine=AFF, ln=2, lp=3, backend="cpu")
    with pytest.raises(ek.InputError, match=r"--ssd: cannot be combined with --nmi"):
        ek.reg.register(ref, flo, ref_affine=AFF, flo_affine=AFF, nmi=True, ssd=True)
    with pytest.raises(ek.InputError, match=r"rmask: mask is empty"):
        ek.reg.affine(ref, flo, ref_affine=AFF, flo_affine=AFF, rmask=np.zeros(SHAPE), backend="cpu")
    with pytest.raises(ek.InputError, match=r"ref_affine"):
        ek.reg.affine(ref, flo, flo_affine=AFF)
    with pytest.raises(ek.InputError, match=r"--pv|--pi|--maxit|--ln"):
        ek.reg.affine(ref, flo, ref_affine=AFF, flo_affine=AFF, pv=0, backend="cpu")


def test_nii_helpers_agree_with_nibabel(images, tmp_path):
    """conftest's write_nii/read_nii (used by test_gpu.py, where nibabel is absent) against nibabel."""
    from conftest import read_nii, write_nii
    d, ref, flo, m = images
    write_nii(tmp_path / "r.nii", ref, AFF)
    img = nib.load(tmp_path / "r.nii")
    np.testing.assert_array_equal(np.asarray(img.dataobj), ref)
    np.testing.assert_array_equal(img.affine, AFF)
    data, aff = read_nii(tmp_path / "r.nii")
    np.testing.assert_array_equal(data, ref)
    np.testing.assert_array_equal(aff, AFF)
    tool("reg_deform", "grid", "--ref", tmp_path / "r.nii", "-o", tmp_path / "g.nii", "--spacing", 4)
    g, gaff = read_nii(tmp_path / "g.nii")
    np.testing.assert_array_equal(g, np.asarray(nib.load(tmp_path / "g.nii").dataobj, dtype=np.float32))
    np.testing.assert_array_equal(gaff, nib.load(tmp_path / "g.nii").affine)
