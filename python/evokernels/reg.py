"""evokernels.reg: registration and cubic B-spline deformation fields (`reg_deform
affine|register|field|resample`).

Volumes are numpy arrays indexed [x, y, z] as nibabel returns them, with a 4x4 voxel-to-world
matrix (an image's .affine; for plain arrays the *_affine keyword). NiftyReg's transformation
images are 5-D (nx, ny, nz, 1, 3): control-point grids (intent_p1 2) and deformation (0) or
displacement (1) fields, as reg_f3d writes them; nibabel images pass directly.
"""
import numpy as np

from . import _ext
from ._arrays import (check_choice, check_int, check_kernel, flat_out, intent_p1, shape_of, affine_of, vectors,
                      volume)

__all__ = ["affine", "field", "register", "resample"]

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


def _mask(mask, dims, name):
    if mask is None:
        return None
    ma = np.asarray(mask.get_fdata() if hasattr(mask, "get_fdata") else mask)
    if list(ma.shape[:3]) != list(dims) or any(s != 1 for s in ma.shape[3:]):
        raise _ext.InputError("%s: shape %s differs from its image's %s" % (name, ma.shape, tuple(dims)))
    return np.asfortranarray(ma.reshape(tuple(dims)) != 0, dtype=np.uint8).reshape(-1, order="F")


def _matrix(m, name):
    if m is None:
        return []
    a = np.asarray(m, dtype=np.float64)
    if a.shape != (4, 4) or not np.all(np.isfinite(a)):
        raise _ext.InputError("%s: expected a finite 4x4 matrix, got shape %s" % (name, a.shape))
    return [float(x) for x in a.reshape(-1)]


def _pad(pad):
    if isinstance(pad, str):
        if pad in ("nan", "NaN"):
            return float("nan")
        raise _ext.InputError("--pad: '%s' is not a number or nan" % pad)
    return float(pad)


def affine(ref, flo, *, ref_affine=None, flo_affine=None, rmask=None, fmask=None, init=None, cog=False,
           rigid_only=False, aff_direct=False, nosym=False, subvoxel=True, ln=3, lp=None, maxit=5, pv=50, pi=50,
           backend="auto", kernel="auto", device=0, threads=0, return_info=False):
    """Global rigid/affine registration by block matching, as `reg_deform affine` (reg_aladin's
    method). ref, flo: 3-D volumes (nibabel images or arrays with ref_affine/flo_affine, their 4x4
    voxel-to-world matrices). Keywords: the CLI's options with its defaults (--rmask, --fmask,
    --init (a 4x4 matrix; default: image centres aligned), --cog, --rigid-only, --aff-direct,
    --nosym, --subvoxel (default; False: whole-voxel matches as reg_aladin), --ln, --lp (default: ln),
    --maxit, --pv, --pi, --backend, --device).
    Returns the 4x4 float64 matrix mapping reference world to floating world (what -o writes)."""
    rdata, rdims, raff = volume(ref, "ref", ref_affine)
    fdata, fdims, faff = volume(flo, "flo", flo_affine)
    check_choice("backend", backend, ("auto", "cpu", "gpu"))
    if init is not None and cog:
        raise _ext.InputError("--cog excludes --init")
    info = _ext.reg_affine(rdata, rdims, raff, fdata, fdims, faff, _mask(rmask, rdims, "rmask"),
                           _mask(fmask, fdims, "fmask"), _matrix(init, "init"), bool(cog), bool(rigid_only),
                           bool(aff_direct), bool(nosym), bool(subvoxel), check_int("ln", ln),
                           -1 if lp is None else check_int("lp", lp), check_int("maxit", maxit), check_int("pv", pv),
                           check_int("pi", pi), backend, check_kernel(kernel), check_int("device", device),
                           check_int("threads", threads))
    m = np.array(info.pop("affine"), dtype=np.float64).reshape(4, 4)
    return (m, info) if return_info else m


def register(ref, flo, *, ref_affine=None, flo_affine=None, aff=None, rmask=None, fmask=None, sx=-5.0, ln=3, lp=0,
             maxit=150, be=0.001, le=0.01, jl=0.01, allow_folding=False, bins=64, nmi=False, ssd=False, smooR=0.0,
             smooF=0.0, pad="nan", backend="auto", kernel="auto", device=0, threads=0, return_info=False):
    """Non-rigid registration, as `reg_deform register` (reg_f3d's method: cubic B-spline grid).
    ref, flo: 3-D volumes (nibabel images or arrays with ref_affine/flo_affine). Keywords: the
    CLI's options with its defaults (--aff: initial 4x4 reference-world -> floating-world matrix,
    default the centres of mass aligned; --rmask, --fmask, --sx, --ln, --lp (0: all), --maxit,
    --be, --le, --jl, --allow-folding, --bins, --nmi (default) / --ssd, --smooR, --smooF, --pad for
    the warped image, --backend, --kernel, --device, threads). The grid is fold-free unless
    allow_folding; info (return_info=True) has min_jacobian, max_jacobian, folded_voxels and unfold
    (what unfolding did: folded_before, rounds, ...).
    Returns (cpp, cpp_affine, warped): the control-point grid float32 (gx, gy, gz, 1, 3) in world
    mm (what --cpp writes), its 4x4 voxel-to-world matrix, and the floating image warped into the
    reference float32 (nx, ny, nz), cubic, as --res writes it."""
    rdata, rdims, raff = volume(ref, "ref", ref_affine)
    fdata, fdims, faff = volume(flo, "flo", flo_affine)
    check_choice("backend", backend, ("auto", "cpu", "gpu"))
    if nmi and ssd:
        raise _ext.InputError("--ssd: cannot be combined with --nmi")
    warped, wflat = flat_out(tuple(rdims), np.float32)
    info = _ext.reg_register(rdata, rdims, raff, fdata, fdims, faff, _mask(rmask, rdims, "rmask"),
                             _mask(fmask, fdims, "fmask"), _matrix(aff, "aff"), float(sx), check_int("ln", ln),
                             check_int("lp", lp), check_int("maxit", maxit), float(be), float(le), float(jl),
                             bool(allow_folding), check_int("bins", bins), bool(ssd), float(smooR), float(smooF), _pad(pad), wflat,
                             backend, check_kernel(kernel), check_int("device", device), check_int("threads", threads))
    g = info.pop("grid_dims")
    cpp = np.frombuffer(info.pop("grid"), dtype=np.float32).reshape(tuple(g) + (1, 3), order="F").copy(order="F")
    caff = np.array(info.pop("grid_affine"), dtype=np.float64).reshape(4, 4)
    return (cpp, caff, warped, info) if return_info else (cpp, caff, warped)
