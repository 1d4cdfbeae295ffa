"""evokernels.reg: cubic B-spline deformation fields and resampling (`reg_deform field|resample`).

Volumes are numpy arrays indexed [x, y, z] as nibabel returns them, with a 4x4 voxel-to-world
matrix (an image's .affine; for plain arrays the *_affine keyword). NiftyReg's transformation
images are 5-D (nx, ny, nz, 1, 3): control-point grids (intent_p1 2) and deformation (0) or
displacement (1) fields, as reg_f3d writes them; nibabel images pass directly.
"""
import numpy as np

from . import _ext
from ._arrays import (check_choice, check_int, check_kernel, flat_out, intent_p1, shape_of, affine_of, vectors,
                      volume)

__all__ = ["field", "resample"]

_KINDS = {0.0: "deformation", 1.0: "displacement", 2.0: "grid"}


def field(ref, cpp, *, ref_affine=None, cpp_affine=None, mask=None, displacement=False, backend="auto",
          kernel="auto", device=0, threads=0, return_info=False):
    """The deformation field of a control-point grid on the reference, as `reg_deform field`.

    ref: the reference (image, array or shape; only its geometry is used); cpp: the grid
    (nx, ny, nz, 1, 3) in world mm, NiftyReg's layout. mask: voxels where it is 0 get the identity.
    displacement=True returns displacements (--displacement). Returns float32 (nx, ny, nz, 1, 3).
    """
    dims = shape_of(ref, "ref")
    raff = affine_of(ref, ref_affine, "ref")
    if intent_p1(cpp) not in (None, 2.0):
        raise _ext.InputError("cpp: intent_p1 %g is not 2: not a cubic B-spline control-point grid" % intent_p1(cpp))
    cdata, cdims, caff = vectors(cpp, "cpp", cpp_affine)
    m = None
    if mask is not None:
        ma = np.asarray(mask.get_fdata() if hasattr(mask, "get_fdata") else mask)
        if list(ma.shape[:3]) != dims:
            raise _ext.InputError("mask: shape %s differs from the reference's %s" % (ma.shape, tuple(dims)))
        m = np.asfortranarray(ma != 0, dtype=np.uint8).reshape(-1, order="F")
    check_choice("backend", backend, ("auto", "cpu", "gpu"))
    out, flat = flat_out(tuple(dims) + (1, 3), np.float32)
    info = _ext.reg_field(dims, raff, cdata, cdims, caff, m, bool(displacement), flat, backend, check_kernel(kernel),
                          check_int("device", device), check_int("threads", threads))
    return (out, info) if return_info else out


def resample(ref, flo, trans, *, ref_affine=None, flo_affine=None, trans_affine=None, trans_type=None,
             interp="linear", pad=0.0, backend="auto", kernel="auto", device=0, threads=0, return_info=False):
    """The floating image resampled into the reference through a transformation, as
    `reg_deform resample`.

    trans: a control-point grid or a deformation/displacement field (nx, ny, nz, 1, 3); its kind
    comes from a nibabel image's intent_p1, else trans_type="grid"|"deformation"|"displacement".
    interp: nearest, linear or cubic (B-spline); pad: value outside the floating image.
    Returns float32 (nx, ny, nz) on the reference grid.
    """
    dims = shape_of(ref, "ref")
    raff = affine_of(ref, ref_affine, "ref")
    fdata, fdims, faff = volume(flo, "flo", flo_affine)
    kind = trans_type
    if kind is None:
        p1 = intent_p1(trans)
        if p1 is None:
            raise _ext.InputError("trans: a plain array needs trans_type='grid', 'deformation' or 'displacement'")
        if p1 not in _KINDS:
            raise _ext.InputError("trans: intent_p1 %g is not 0 (deformation), 1 (displacement) or 2 (cubic B-spline grid)" % p1)
        kind = _KINDS[p1]
    check_choice("trans_type", kind, ("grid", "deformation", "displacement"))
    check_choice("interp", interp, ("nearest", "linear", "cubic"))
    check_choice("backend", backend, ("auto", "cpu", "gpu"))
    tdata, tdims, taff = vectors(trans, "trans", trans_affine, need_affine=(kind == "grid"))
    out, flat = flat_out(tuple(dims), np.float32)
    info = _ext.reg_resample(dims, raff, fdata, fdims, faff, tdata, tdims, taff, kind, interp, float(pad), flat,
                             backend, check_kernel(kernel), check_int("device", device), check_int("threads", threads))
    return (out, info) if return_info else out
