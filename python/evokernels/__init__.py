"""EvoKernels from Python: the suite's GPU tools on numpy arrays.

    import evokernels as ek
    ek.devices()                                    # GPUs and the kernel variant each would run
    d = ek.stereo.disparity(left, right, max_disparity=64)          # int32 (H, W), -1 invalid
    d = ek.stereo.disparity(left, right, method="sgm", subpixel="parabola")  # float32, NaN invalid
    f = ek.reg.field(ref_img, cpp_img)              # deformation field (nx, ny, nz, 1, 3), world mm
    w = ek.reg.resample(ref_img, flo_img, cpp_img, interp="linear")  # float32 (nx, ny, nz)
    A = ek.reg.affine(ref_img, flo_img)             # 4x4, reference world -> floating world
    cpp, cpp_affine, warped = ek.reg.register(ref_img, flo_img, aff=A)

Images are numpy arrays, or nibabel images (their .affine is used); every function takes the CLI's
options as keyword arguments with the CLI's names and defaults (backend="auto"|"cpu"|"gpu",
kernel="auto"|"original"|"evolved"|genome path, device=0). Work runs in the same C++ libraries as
the command-line tools, with the GIL released. Bad input raises evokernels.InputError (a
ValueError) with the CLI's message; CUDA failures raise evokernels.CudaError (a RuntimeError).
"""
from . import _ext
from ._ext import CudaError, InputError, Refused
from . import reg, stereo

__version__ = _ext.__version__
__all__ = ["devices", "environment", "reg", "stereo", "InputError", "CudaError", "Refused", "__version__"]


def devices(kernel="auto"):
    """The usable GPUs, one dict each (index, name, compute_capability, sm_count, memory_bytes,
    l2_bytes, clock_khz, kernels: {kernel name: {variant, source, rule}}), as `<tool> devices
    --json` lists them. Empty without a usable GPU (environment()["status"] says why)."""
    return _ext.devices(kernel)


def environment():
    """Versions (suite, CUDA runtime/driver, NVRTC), GPU status, the backend `auto` would use,
    and the overlay and installed data directories."""
    return _ext.environment()
