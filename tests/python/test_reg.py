"""evokernels.reg on the CPU backend against plain numpy references of the same B-spline field and
resampling (bspline_ref.py, from the definitions), and against `reg_deform field|resample` on the
same files; an identity grid against its exact field (cubic B-splines reproduce linear maps),
nibabel images and plain arrays with affines giving the same, and errors."""
import numpy as np
import pytest

import bspline_ref
import evokernels as ek
from conftest import tool

nib = pytest.importorskip("nibabel")


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    d = tmp_path_factory.mktemp("case")
    tool("reg_deform", "random-case", "--seed", 4, "--size", 19, "-o", d)
    return d


def test_field_equals_a_numpy_reference_and_the_cli(case, tmp_path):
    ref, cpp = nib.load(case / "image.nii.gz"), nib.load(case / "cpp.nii.gz")
    f = ek.reg.field(ref, cpp, backend="cpu")
    want = bspline_ref.deformation(ref.shape, ref.affine, np.asarray(cpp.dataobj), cpp.affine)
    assert np.abs(want - ref.affine[:3, 3]).max() > 1  # a real deformation, not the origin
    np.testing.assert_allclose(f[..., 0, :], want, atol=1e-3)  # mm
    tool("reg_deform", "field", "--ref", case / "image.nii.gz", "--cpp", case / "cpp.nii.gz", "-o", tmp_path / "f.nii.gz",
         "--backend", "cpu")
    cli = np.asarray(nib.load(tmp_path / "f.nii.gz").dataobj, dtype=np.float32)
    f, info = ek.reg.field(ref, cpp, backend="cpu", return_info=True)
    assert f.shape == ref.shape + (1, 3) and f.dtype == np.float32
    np.testing.assert_array_equal(f, cli)
    assert info["backend"] == "cpu"
    # the same from plain arrays with their affines
    g = ek.reg.field(ref.shape, np.asarray(cpp.dataobj), ref_affine=ref.affine, cpp_affine=cpp.affine, backend="cpu")
    np.testing.assert_array_equal(g, f)
    # displacement = deformation - voxel world positions
    disp = ek.reg.field(ref, cpp, displacement=True, backend="cpu")
    ijk = np.stack(np.meshgrid(*[np.arange(n) for n in ref.shape], indexing="ij"), -1).reshape(-1, 3)
    world = (ijk @ ref.affine[:3, :3].T + ref.affine[:3, 3]).reshape(ref.shape + (3,))
    np.testing.assert_allclose(disp[..., 0, :], f[..., 0, :] - world, atol=1e-4)


def test_identity_grid_gives_voxel_world_positions(case, tmp_path):
    tool("reg_deform", "grid", "--ref", case / "image.nii.gz", "-o", tmp_path / "id.nii.gz", "--spacing", 4)
    ref = nib.load(case / "image.nii.gz")
    f = ek.reg.field(ref, nib.load(tmp_path / "id.nii.gz"), backend="cpu")
    ijk = np.stack(np.meshgrid(*[np.arange(n) for n in ref.shape], indexing="ij"), -1).reshape(-1, 3)
    world = (ijk @ ref.affine[:3, :3].T + ref.affine[:3, 3]).reshape(ref.shape + (3,))
    np.testing.assert_allclose(f[..., 0, :], world, atol=1e-3)


@pytest.mark.parametrize("interp", ["nearest", "linear", "cubic"])
def test_resample_equals_a_numpy_reference_and_the_cli(case, tmp_path, interp):
    ref, cpp = nib.load(case / "image.nii.gz"), nib.load(case / "cpp.nii.gz")
    img = np.asarray(ref.dataobj, dtype=np.float64)
    field = bspline_ref.deformation(ref.shape, ref.affine, np.asarray(cpp.dataobj), cpp.affine)
    want = bspline_ref.resample(img, ref.affine, field, interp, 7.0)
    got = ek.reg.resample(ref, ref, cpp, interp=interp, pad=7, backend="cpu")
    outside = want == 7.0
    assert 0 < outside.sum() < outside.size  # the case has positions inside and outside
    # nearest: a position within float rounding of a half voxel may round either way
    mismatch = np.abs(got - want) > 1e-4
    assert mismatch.sum() <= (3 if interp == "nearest" else 0), np.argwhere(mismatch)[:5]
    tool("reg_deform", "resample", "--ref", case / "image.nii.gz", "--flo", case / "image.nii.gz", "--trans",
         case / "cpp.nii.gz", "-o", tmp_path / "w.nii.gz", "--interp", interp, "--pad", 7, "--backend", "cpu")
    cli = np.asarray(nib.load(tmp_path / "w.nii.gz").dataobj, dtype=np.float32)
    w = ek.reg.resample(ref, ref, cpp, interp=interp, pad=7, backend="cpu")
    assert w.shape == ref.shape and w.dtype == np.float32
    np.testing.assert_array_equal(w, cli)
    # a field as the transformation gives the same as its grid
    f = ek.reg.field(ref, cpp, backend="cpu")
    w2 = ek.reg.resample(ref, ref, f, trans_type="deformation", interp=interp, pad=7, backend="cpu")
    np.testing.assert_array_equal(w2, w)


def test_errors(case):
    ref, cpp = nib.load(case / "image.nii.gz"), nib.load(case / "cpp.nii.gz")
    with pytest.raises(ek.InputError, match="4x4 voxel-to-world"):
        ek.reg.field(ref.shape, np.asarray(cpp.dataobj), cpp_affine=cpp.affine)
    with pytest.raises(ek.InputError, match="trans_type"):
        ek.reg.resample(ref, ref, np.asarray(cpp.dataobj), trans_affine=cpp.affine)
    with pytest.raises(ek.InputError, match="interp"):
        ek.reg.resample(ref, ref, cpp, interp="quintic")
    with pytest.raises(ek.InputError, match="intent_p1 0 is not 2"):
        ek.reg.field(ref, ref)  # a scalar NIfTI image is no control-point grid
    with pytest.raises(ek.InputError, match="vector image"):
        ek.reg.field(ref, np.zeros((4, 4, 4), np.float32), cpp_affine=np.eye(4))
    with pytest.raises(ek.InputError, match="cpp: "):
        ek.reg.field(ref, np.zeros((4, 4, 4, 1, 3), np.float32), cpp_affine=np.eye(4))  # does not cover ref
    if not ek.devices():
        with pytest.raises(ek.InputError, match="--backend gpu"):
            ek.reg.field(ref, cpp, backend="gpu")
