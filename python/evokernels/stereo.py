"""evokernels.stereo: disparity maps of stereo pairs (`stereo disparity`), rectified or raw through
a calibrated rig (`stereo calibrate`'s rig file: load_rig, rectify, disparity(..., rig=...)), and
depth and 3-D points through the rig's Q."""
import os

import numpy as np

from . import _ext
from ._arrays import check_choice, check_int, check_kernel, gray8

__all__ = ["Rig", "depth", "disparity", "load_rig", "methods", "points", "rectify"]


def methods():
    """The matching methods this build has (`ssd`: Stam's SSD block matcher, the paper's kernel;
    `sgm`: semi-global matching)."""
    return list(_ext.stereo_methods())


# The CLI's sgm and post-processing options with its defaults (apps/stereo/cli/options.cpp).
_SGM_DEFAULTS = dict(paths=8, p1=10, p2=120, cost="census", cost_window=5, uniqueness=0, subpixel="none",
                     lr_check=-1, median=0, speckle_size=0, speckle_range=1, bands=0, copy_threads=0,
                     copy_chunk=0)


def disparity(left, right, method="ssd", *, min_disparity=0, max_disparity=50, window=11, min_ssd=500000,
              paths=8, p1=10, p2=120, cost="census", cost_window=5, uniqueness=0, subpixel="none", lr_check=-1,
              median=0, speckle_size=0, speckle_range=1, bands=0, copy_threads=0, copy_chunk=0, backend="auto",
              kernel="auto", device=0, threads=0, rig=None, return_info=False):
    """Disparity map of a rectified pair, or of a raw pair with rig=, as `stereo disparity` computes it.

    left, right: 2-D uint8 grey images (H, W) of the same size (integer arrays within 0..255 are
    converted). method: "ssd" (default) or "sgm". rig: a Rig from load_rig (or a rig file's path),
    as --rig: left and right are then the cameras' raw frames, of the rig's size (InputError
    otherwise), rectified first; the map is the rectified left image's, the same as `stereo
    disparity --rig` (sgm on the GPU rectifies on the device, everything else on the host, with the
    same pixels). The keywords are the CLI's options with its defaults: --min-disparity,
    --max-disparity; ssd: --window (odd, >= 3), --min-ssd; sgm: --paths, --p1, --p2, --cost
    census|sad|ssd, --cost-window, --uniqueness, --subpixel none|parabola|equiangular, --lr-check,
    --median, --speckle-size, --speckle-range; sgm on the GPU, speed only: --bands (row bands of
    the wta, 0 = one per wave), --copy-threads (0 = 8), --copy-chunk (KiB, 0 = one chunk per image);
    --backend auto|cpu|gpu, --kernel auto|original|evolved|expert|FILE (ssd), --device; threads: CPU
    threads (0 = all).

    Returns int32 (H, W), the disparity in pixels, -1 where invalid; for sgm with a sub-pixel fit
    or a negative min_disparity, float32 (H, W) in pixels (1/16 steps) with NaN where invalid.
    return_info=True returns (map, info) with the backend, kernel variant and device that ran.
    """
    l = gray8(left, "left")
    r = gray8(right, "right")
    if l.shape != r.shape:
        raise _ext.InputError("left, right: sizes differ (%s vs %s)" % (l.shape, r.shape))
    check_choice("backend", backend, ("auto", "cpu", "gpu"))
    handle = None
    if rig is not None:
        rig = _rig_of(rig)
        _check_rig_size(rig, l.shape, "left, right")
        handle = rig._handle
    sgm = dict(paths=paths, p1=p1, p2=p2, cost=cost, cost_window=cost_window, uniqueness=uniqueness,
               subpixel=subpixel, lr_check=lr_check, median=median, speckle_size=speckle_size,
               speckle_range=speckle_range, bands=bands, copy_threads=copy_threads, copy_chunk=copy_chunk)
    if method == "sgm":
        check_choice("cost", cost, ("census", "sad", "ssd"))
        check_choice("subpixel", subpixel, ("none", "parabola", "equiangular"))
        out = np.empty(l.shape, dtype=np.float32)
        info = _ext.stereo_sgm(l, r, out, l.shape[0], l.shape[1], check_int("min_disparity", min_disparity),
                               check_int("max_disparity", max_disparity), check_int("paths", paths),
                               check_int("p1", p1), check_int("p2", p2), str(cost),
                               check_int("cost_window", cost_window), check_int("uniqueness", uniqueness),
                               str(subpixel), check_int("lr_check", lr_check), check_int("median", median),
                               check_int("speckle_size", speckle_size), check_int("speckle_range", speckle_range),
                               check_int("bands", bands), check_int("copy_threads", copy_threads),
                               check_int("copy_chunk", copy_chunk), backend, check_kernel(kernel), check_int("device", device),
                               check_int("threads", threads), handle)
        if subpixel == "none" and min_disparity >= 0:
            out = np.where(np.isnan(out), -1, out).astype(np.int32)
        return (out, info) if return_info else out
    changed = sorted(k for k, v in sgm.items() if v != _SGM_DEFAULTS[k])
    if changed and method == "ssd":
        raise _ext.InputError("%s: apply to method='sgm' (the Python ssd path has no post-processing yet)"
                              % ", ".join(changed))
    out = np.empty(l.shape, dtype=np.int32)
    info = _ext.stereo_disparity(l, r, out, l.shape[0], l.shape[1], check_int("min_disparity", min_disparity),
                                 check_int("max_disparity", max_disparity), check_int("window", window),
                                 check_int("min_ssd", min_ssd), str(method), backend, check_kernel(kernel),
                                 check_int("device", device), check_int("threads", threads), handle)
    return (out, info) if return_info else out


def _rig_q(Q):
    q = np.ascontiguousarray(Q, dtype=np.float64)
    if q.shape != (4, 4):
        raise _ext.InputError("Q: a 4x4 matrix expected (the rig file's Q), got shape %s" % (q.shape,))
    return q


def _disparity_f32(disparity):
    d = np.ascontiguousarray(disparity, dtype=np.float32)
    if d.ndim != 2 or d.size == 0:
        raise _ext.InputError("disparity: a non-empty 2-D map expected, got shape %s" % (d.shape,))
    return d


def depth(disparity, Q):
    """Metric depth of a left-image disparity map through a rig's Q, as `stereo disparity --depth`
    writes it: Z = Q[2,3] / (Q[3,2] d + Q[3,3]), float32, +inf where the disparity is NaN, infinite
    or <= 0. Q: the 4x4 matrix of `stereo calibrate`'s rig file (cv2.FileStorage(path,
    cv2.FILE_STORAGE_READ).getNode("Q").mat()), lengths in its --square units."""
    d = _disparity_f32(disparity)
    out = np.empty(d.shape, dtype=np.float32)
    _ext.stereo_depth(d, _rig_q(Q), out, d.shape[0], d.shape[1])
    return out


def points(disparity, Q, image=None):
    """The 3-D points of the pixels that have a disparity, as `stereo disparity --points` writes
    them: [X Y Z W] = Q [x y d 1], divided by W, row by row. Returns (xyz, pixels): xyz (N, 3)
    float32 and pixels (N, 2) int64 (x, y); with image (H, W), also its values at those pixels, the
    points' colours: (xyz, pixels, values)."""
    d = _disparity_f32(disparity)
    h, w = d.shape
    xyz = np.empty((h * w, 3), dtype=np.float32)
    index = np.empty(h * w, dtype=np.int64)
    n = _ext.stereo_points(d, _rig_q(Q), xyz, index, h, w)
    pixels = np.stack([index[:n] % w, index[:n] // w], axis=1)
    if image is None:
        return xyz[:n], pixels
    im = np.asarray(image)
    if im.shape[:2] != d.shape:
        raise _ext.InputError("image: shape %s differs from the disparity map's %s" % (im.shape[:2], d.shape))
    return xyz[:n], pixels, im.reshape(h * w, *im.shape[2:])[index[:n]]


class Rig:
    """A calibrated stereo rig, read from a rig file by load_rig (the file `stereo calibrate` writes
    and `--rig` reads; OpenCV FileStorage YAML).

    Attributes (numpy arrays, read-only copies of the file's values; lengths in the calibration's
    --square units): M1, M2 (3x3 camera matrices), D1, D2 (distortion coefficients in OpenCV's
    order, k1 k2 p1 p2 k3 k4 k5 k6 ..., as many as the file has), R (3x3) and T (3,) (the right
    camera's pose in the left's frame), R1, R2 (3x3 rectifying rotations), P1, P2 (3x4 rectified
    projections), Q (4x4, disparity to depth: depth(d, rig.Q), points(d, rig.Q)); width, height,
    size (width, height) and shape (height, width) of the views, which every raw frame must have;
    rms and epipolar_error (pixels) and views_used of the calibration; path. maps: the
    rectification's remap tables ((left_x, left_y), (right_x, right_y)), float32 (H, W) arrays of
    the raw position each rectified pixel samples (OpenCV's initUndistortRectifyMap, as cv2.remap
    takes them; made once when the rig is loaded). rectify() and disparity(..., rig=) use these
    maps, not the attributes: a changed copy of a matrix changes nothing."""

    def __init__(self, handle, path):
        self._handle = handle
        self.path = path
        f = _ext.stereo_rig_fields(handle)
        self.width, self.height = int(f["width"]), int(f["height"])
        self.size = (self.width, self.height)
        self.shape = (self.height, self.width)
        self.rms, self.epipolar_error = float(f["rms"]), float(f["epipolar_error"])
        self.views_used = int(f["views_used"])
        shapes = dict(M1=(3, 3), M2=(3, 3), D1=(-1,), D2=(-1,), R=(3, 3), T=(3,), R1=(3, 3), R2=(3, 3), P1=(3, 4),
                      P2=(3, 4), Q=(4, 4))
        for name, shape in shapes.items():
            a = np.array(f[name], dtype=np.float64).reshape(shape)
            a.setflags(write=False)
            setattr(self, name, a)
        self._maps = None

    @property
    def maps(self):
        if self._maps is None:
            maps = []
            for camera in (0, 1):
                x = np.empty(self.shape, dtype=np.float32)
                y = np.empty(self.shape, dtype=np.float32)
                _ext.stereo_rig_maps(self._handle, camera, x, y)
                x.setflags(write=False)
                y.setflags(write=False)
                maps.append((x, y))
            self._maps = tuple(maps)
        return self._maps

    def __repr__(self):
        return "Rig(%r, %dx%d, %d views, rms %.3g px)" % (self.path, self.width, self.height, self.views_used, self.rms)


def load_rig(path):
    """The rig in a rig file (`stereo calibrate -o RIG.yml`), read by the C++ code `--rig` uses; a
    Rig (its matrices, size and rectification maps). Raises InputError naming the file and the
    problem when it is missing, not a rig file, or lacks a field (builds without OpenCV read no rig
    files: InputError saying so)."""
    if not isinstance(path, (str, bytes)) and not hasattr(path, "__fspath__"):
        raise _ext.InputError("rig: expected a rig file path, got %r" % (path,))
    p = os.fsdecode(path)
    return Rig(_ext.stereo_load_rig(p), p)


def _synthetic_rig(width, height, angle=0.05, k1=-0.1):
    """A Rig whose maps are synthetic (the left view rotated by angle radians about the centre,
    the right by -angle, both distorted radially by 1 + k1 r^2; matrices 0), for tests that need
    no rig file (and no OpenCV)."""
    return Rig(_ext.stereo_synthetic_rig(check_int("width", width), check_int("height", height), float(angle),
                                         float(k1)), "<synthetic>")


def _rig_of(rig):
    if isinstance(rig, Rig):
        return rig
    if isinstance(rig, (str, bytes)) or hasattr(rig, "__fspath__"):
        return load_rig(rig)
    raise _ext.InputError("rig: expected a Rig from load_rig() or a rig file path, got %r" % (rig,))


def _check_rig_size(rig, shape, name):
    if tuple(shape) != rig.shape:
        raise _ext.InputError("%s: %dx%d pixels, but the rig %s was calibrated on %dx%d views"
                              % (name, shape[1], shape[0], rig.path, rig.width, rig.height))


def _raw_image(a, name):
    """A raw frame for rectify: 2-D (H, W) or (H, W, C), uint8 or uint16 kept, other integer
    arrays within 0..255 as uint8."""
    arr = np.asarray(a)
    if arr.ndim not in (2, 3):
        raise _ext.InputError("%s: expected an image (H, W) or (H, W, C), got shape %s" % (name, arr.shape))
    if arr.size == 0:
        raise _ext.InputError("%s: empty image" % name)
    if arr.dtype not in (np.uint8, np.uint16):
        if arr.dtype.kind not in "iu" or arr.min() < 0 or arr.max() > 255:
            raise _ext.InputError("%s: expected uint8 or uint16 pixels, got dtype %s" % (name, arr.dtype))
        arr = arr.astype(np.uint8)
    return arr


def rectify(left, right, rig):
    """The raw pair as the rig's rectification sees it (undistorted and rotated so that rows are
    epipolar lines), as `stereo disparity --rig RIG --rectified L.pgm R.pgm` writes it: the same
    pixels, through the same remap (core/rectify.hpp: bilinear at 1/256 pixel in exact integer
    arithmetic, 0 outside the raw view; the GPU's rectification gives the same).

    left, right: the two cameras' raw frames, uint8 or uint16, (H, W) grey or (H, W, C) with each
    channel rectified alike, of the rig's size (rig.shape); other integer arrays within 0..255 are
    taken as uint8. rig: a Rig from load_rig, or a rig file's path. Returns (left, right), each of
    its input's shape and dtype. InputError when a frame is not of the rig's size."""
    rig = _rig_of(rig)
    out = []
    for camera, (image, name) in enumerate(((left, "left"), (right, "right"))):
        a = _raw_image(image, name)
        h, w = a.shape[:2]
        _check_rig_size(rig, (h, w), name)
        planes = [a] if a.ndim == 2 else [a[:, :, c] for c in range(a.shape[2])]
        done = []
        for plane in planes:
            src = np.ascontiguousarray(plane)
            dst = np.empty(src.shape, dtype=src.dtype)
            _ext.stereo_rectify(rig._handle, camera, src, dst, h, w, src.itemsize)
            done.append(dst)
        out.append(done[0] if a.ndim == 2 else np.stack(done, axis=2))
    return out[0], out[1]
