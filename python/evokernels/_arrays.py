"""Array conversion shared by evokernels.stereo and evokernels.reg (numpy in, numpy out)."""
import numbers

import numpy as np

from ._ext import InputError


def check_choice(name, value, allowed):
    if value not in allowed:
        raise InputError("%s: '%s' is not one of %s" % (name, value, ", ".join(allowed)))


def check_int(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError("%s: expected an integer, got %r" % (name, value))
    return int(value)


def check_kernel(kernel):
    if not isinstance(kernel, (str, bytes)) and not hasattr(kernel, "__fspath__"):
        raise InputError("kernel: expected 'auto', 'original', 'evolved' or a genome file path, got %r" % (kernel,))
    import os
    return os.fsdecode(kernel)


def gray8(a, name):
    """A 2-D uint8 grey image (H, W), C-contiguous."""
    arr = np.asarray(a)
    if arr.ndim != 2:
        raise InputError("%s: expected a 2-D grey image (H, W), got shape %s" % (name, arr.shape))
    if arr.size == 0:
        raise InputError("%s: empty image" % name)
    if arr.dtype != np.uint8:
        if arr.dtype.kind not in "iu" or arr.min() < 0 or arr.max() > 255:
            raise InputError("%s: expected uint8 grey levels (0..255), got dtype %s" % (name, arr.dtype))
        arr = arr.astype(np.uint8)
    return np.ascontiguousarray(arr)


def _is_image(obj):
    return hasattr(obj, "affine") and (hasattr(obj, "get_fdata") or hasattr(obj, "dataobj"))


def affine_of(obj, affine, name):
    """The 4x4 voxel-to-world matrix: the image's own (nibabel) or the keyword's."""
    if affine is None and _is_image(obj):
        affine = obj.affine
    if affine is None:
        raise InputError("%s: a plain array needs its 4x4 voxel-to-world matrix (%s_affine=...)" % (name, name))
    m = np.asarray(affine, dtype=np.float64)
    if m.shape != (4, 4) or not np.all(np.isfinite(m)):
        raise InputError("%s: affine must be a finite 4x4 matrix, got shape %s" % (name, m.shape))
    return [float(x) for x in m.reshape(-1)]


def data_of(obj, name):
    if _is_image(obj):
        if hasattr(obj, "get_fdata"):
            return np.asarray(obj.get_fdata(dtype=np.float32))
        return np.asarray(obj.dataobj, dtype=np.float32)
    return np.asarray(obj)


def dims3(shape, name):
    """(nx, ny, nz) of a 3-D volume (trailing dimensions of size 1 allowed; 2-D -> nz = 1)."""
    shape = tuple(int(s) for s in shape)
    if len(shape) == 2:
        shape = shape + (1,)
    if len(shape) < 3 or any(s != 1 for s in shape[3:]):
        raise InputError("%s: expected a 3-D volume, got shape %s" % (name, shape))
    if any(s < 1 for s in shape[:3]):
        raise InputError("%s: empty volume (shape %s)" % (name, shape))
    return list(shape[:3])


def volume(obj, name, affine=None):
    """(flat float32 data in NIfTI order (x fastest), [nx, ny, nz], affine as 16 floats)."""
    a = data_of(obj, name)
    dims = dims3(a.shape, name)
    if a.dtype.kind not in "iufb":
        raise InputError("%s: expected real voxel values, got dtype %s" % (name, a.dtype))
    flat = np.asarray(a, dtype=np.float32).reshape(dims, order="A")
    flat = np.asfortranarray(flat).reshape(-1, order="F")
    return flat, dims, affine_of(obj, affine, name)


def shape_of(obj, name):
    """[nx, ny, nz] of an image, an array, or a shape tuple."""
    if isinstance(obj, (tuple, list)) and all(isinstance(s, numbers.Integral) for s in obj):
        return dims3(obj, name)
    return dims3(np.shape(obj) if not _is_image(obj) else obj.shape, name)


def vectors(obj, name, affine=None, need_affine=True):
    """A 5-D NiftyReg vector image (nx, ny, nz, 1, 3) (or (nx, ny, nz, 3)), planar float32 flat."""
    a = data_of(obj, name)
    if a.ndim == 5 and a.shape[3] == 1 and a.shape[4] == 3:
        dims = list(a.shape[:3])
    elif a.ndim == 4 and a.shape[3] == 3:
        dims = list(a.shape[:3])
    else:
        raise InputError("%s: expected a vector image of shape (nx, ny, nz, 1, 3), got %s" % (name, a.shape))
    flat = np.asfortranarray(np.asarray(a, dtype=np.float32)).reshape(-1, order="F")
    aff = affine_of(obj, affine, name) if need_affine else [1.0, 0, 0, 0, 0, 1.0, 0, 0, 0, 0, 1.0, 0, 0, 0, 0, 1.0]
    return flat, [int(d) for d in dims], aff


def intent_p1(obj):
    """NiftyReg's transformation type of a nibabel image (0 deformation, 1 displacement, 2 grid)."""
    hdr = getattr(obj, "header", None)
    if hdr is None:
        return None
    try:
        return float(hdr["intent_p1"])
    except (KeyError, TypeError, ValueError):
        return None


def flat_out(shape, dtype):
    """An output array in NIfTI order and its flat view for the native module."""
    out = np.empty(shape, dtype=dtype, order="F")
    return out, out.reshape(-1, order="F")
