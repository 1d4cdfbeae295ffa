"""evokernels.stereo: disparity maps of rectified stereo pairs (`stereo disparity`)."""
import numpy as np

from . import _ext
from ._arrays import check_choice, check_int, check_kernel, gray8

__all__ = ["depth", "disparity", "methods", "points"]


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
              kernel="auto", device=0, threads=0, return_info=False):
    """Disparity map of a rectified pair, as `stereo disparity` computes it.

    left, right: 2-D uint8 grey images (H, W) of the same size (integer arrays within 0..255 are
    converted). method: "ssd" (default) or "sgm". The keywords are the CLI's options with its
    defaults: --min-disparity, --max-disparity; ssd: --window (odd, >= 3), --min-ssd; sgm: --paths,
    --p1, --p2, --cost census|sad|ssd, --cost-window, --uniqueness, --subpixel
    none|parabola|equiangular, --lr-check, --median, --speckle-size, --speckle-range; sgm on the GPU,
    speed only: --bands (row bands of the wta, 0 = one per wave), --copy-threads (0 = 8), --copy-chunk
    (KiB, 0 = one chunk per image); --backend auto|cpu|gpu, --kernel auto|original|evolved|expert|FILE
    (ssd), --device; threads: CPU threads (0 = all).

    Returns int32 (H, W), the disparity in pixels, -1 where invalid; for sgm with a sub-pixel fit
    or a negative min_disparity, float32 (H, W) in pixels (1/16 steps) with NaN where invalid.
    return_info=True returns (map, info) with the backend, kernel variant and device that ran.
    """
    l = gray8(left, "left")
    r = gray8(right, "right")
    if l.shape != r.shape:
        raise _ext.InputError("left, right: sizes differ (%s vs %s)" % (l.shape, r.shape))
    check_choice("backend", backend, ("auto", "cpu", "gpu"))
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
                               check_int("threads", threads))
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
                                 check_int("device", device), check_int("threads", threads))
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
