"""evokernels.stereo: disparity maps of rectified stereo pairs (`stereo disparity`)."""
import numpy as np

from . import _ext
from ._arrays import check_choice, check_int, check_kernel, gray8

__all__ = ["disparity", "methods"]


def methods():
    """The matching methods this build has (`ssd`: Stam's SSD block matcher, the paper's kernel)."""
    return list(_ext.stereo_methods())


def disparity(left, right, method="ssd", *, min_disparity=0, max_disparity=50, window=11, min_ssd=500000,
              backend="auto", kernel="auto", device=0, threads=0, return_info=False):
    """Disparity map of a rectified pair, as `stereo disparity` computes it.

    left, right: 2-D uint8 grey images (H, W) of the same size (integer arrays within 0..255 are
    converted). Returns int32 (H, W): the disparity in pixels, -1 where none beat min_ssd.
    method: a name from methods() (default "ssd"). The other keywords are the CLI's options with
    its defaults: --min-disparity, --max-disparity, --window (odd, >= 3), --min-ssd, --backend
    auto|cpu|gpu, --kernel auto|original|evolved|FILE, --device; threads: CPU threads (0 = all).
    return_info=True returns (map, info) with the backend, kernel variant and device that ran.
    """
    l = gray8(left, "left")
    r = gray8(right, "right")
    if l.shape != r.shape:
        raise _ext.InputError("left, right: sizes differ (%s vs %s)" % (l.shape, r.shape))
    check_choice("backend", backend, ("auto", "cpu", "gpu"))
    out = np.empty(l.shape, dtype=np.int32)
    info = _ext.stereo_disparity(l, r, out, l.shape[0], l.shape[1], check_int("min_disparity", min_disparity),
                                 check_int("max_disparity", max_disparity), check_int("window", window),
                                 check_int("min_ssd", min_ssd), str(method), backend, check_kernel(kernel),
                                 check_int("device", device), check_int("threads", threads))
    return (out, info) if return_info else out
