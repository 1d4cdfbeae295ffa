"""evokernels.stereo on the CPU backend: the literal SSD definition (numpy, independent of the
C++ code), the CLI's output on the same pair, errors with the CLI's messages, the GIL released."""
import threading
import time

import numpy as np
import pytest

import evokernels as ek
from conftest import assert_map_is_clis, read_pfm, tool, write_pgm


def ssd_naive(left, right, dmin, dmax, window, min_ssd):
    """stereo's definition (apps/stereo/core/reference.hpp), evaluated literally:
    SSD over the window with reads clamped to the edge; the first disparity strictly below all
    earlier ones and below min_ssd, else -1."""
    h, w = left.shape
    r = window // 2
    L = left.astype(np.int64)
    R = right.astype(np.int64)
    ys, xs = np.mgrid[0:h, 0:w]
    best = np.full((h, w), np.iinfo(np.int64).max)
    out = np.full((h, w), -1, dtype=np.int32)
    for d in range(dmin, dmax + 1):
        ssd = np.zeros((h, w), dtype=np.int64)
        for j in range(-r, r + 1):
            for i in range(-r, r + 1):
                yy = np.clip(ys + j, 0, h - 1)
                lx = np.clip(xs + i, 0, w - 1)
                rx = np.clip(xs + i - d, 0, w - 1)
                ssd += (L[yy, lx] - R[yy, rx]) ** 2
        take = (ssd < best) & (ssd < min_ssd)
        out[take] = d
        best = np.where(ssd < best, ssd, best)
    return out


def pair(h=23, w=37, shift=3, seed=0):
    rng = np.random.default_rng(seed)
    left = rng.integers(0, 256, (h, w), dtype=np.uint8)
    right = np.concatenate([left[:, shift:], rng.integers(0, 256, (h, shift), dtype=np.uint8)], axis=1)
    return left, right


@pytest.mark.parametrize("dmin,dmax,window,min_ssd", [(0, 7, 5, 500000), (2, 9, 3, 20000), (0, 12, 11, 500000)])
def test_matches_the_definition(dmin, dmax, window, min_ssd):
    left, right = pair()
    d = ek.stereo.disparity(left, right, min_disparity=dmin, max_disparity=dmax, window=window, min_ssd=min_ssd,
                            backend="cpu")
    assert d.dtype == np.int32 and d.shape == left.shape
    np.testing.assert_array_equal(d, ssd_naive(left, right, dmin, dmax, window, min_ssd))


def test_defaults_are_the_clis(tmp_path):
    left, right = pair(40, 64, 5, seed=1)
    write_pgm(tmp_path / "l.pgm", left)
    write_pgm(tmp_path / "r.pgm", right)
    tool("stereo", "disparity", tmp_path / "l.pgm", tmp_path / "r.pgm", "-o", tmp_path / "d.pfm", "--backend", "cpu")
    cli = read_pfm(tmp_path / "d.pfm")
    py, info = ek.stereo.disparity(left, right, return_info=True, backend="cpu")  # CLI defaults: 0..50, window 11
    np.testing.assert_array_equal(np.where(np.isinf(cli), -1, cli).astype(np.int32), py)
    assert info["backend"] == "cpu" and info["method"] == "ssd"


SGM_CASES = [
    # (CLI arguments, Python keywords): defaults; sub-pixel with post-processing; negative range, sad, 4 paths
    ([], {}),
    (["--subpixel", "parabola", "--uniqueness", 10, "--lr-check", 1, "--median", 3, "--speckle-size", 20,
      "--speckle-range", 2, "--p1", 8, "--p2", 100],
     dict(subpixel="parabola", uniqueness=10, lr_check=1, median=3, speckle_size=20, speckle_range=2, p1=8, p2=100)),
    (["--min-disparity", -4, "--max-disparity", 13, "--cost", "sad", "--cost-window", 3, "--paths", 4],
     dict(min_disparity=-4, max_disparity=13, cost="sad", cost_window=3, paths=4)),
]


@pytest.mark.parametrize("cli_args,kw", SGM_CASES)
def test_sgm_equals_the_cli(tmp_path, cli_args, kw):
    left, right = pair(41, 67, 5, seed=7)  # odd sizes
    write_pgm(tmp_path / "l.pgm", left)
    write_pgm(tmp_path / "r.pgm", right)
    tool("stereo", "disparity", tmp_path / "l.pgm", tmp_path / "r.pgm", "-o", tmp_path / "d.pfm", "--method", "sgm",
         "--backend", "cpu", *cli_args)
    cli = read_pfm(tmp_path / "d.pfm")  # invalid = +inf
    py, info = ek.stereo.disparity(left, right, method="sgm", backend="cpu", return_info=True, **kw)
    assert info["backend"] == "cpu" and info["method"] == "sgm" and py.shape == left.shape
    assert_map_is_clis(cli, py, kw.get("subpixel", "none") == "none" and kw.get("min_disparity", 0) >= 0)
    valid = ~np.isinf(cli)
    assert valid.mean() > 0.5  # a textured pair: most pixels matched
    if kw.get("subpixel") == "parabola":
        assert np.any(py[valid] != np.round(py[valid]))  # the sub-pixel fit is there


def test_sgm_finds_the_shift_and_checks_options():
    left, right = pair(41, 67, 5, seed=7)
    d = ek.stereo.disparity(left, right, method="sgm", max_disparity=15, backend="cpu")
    assert np.mean(d[:, 15:-8] == 5) > 0.95  # right = left shifted by 5 pixels
    with pytest.raises(ek.InputError, match=r"--paths"):
        ek.stereo.disparity(left, right, method="sgm", paths=6)
    with pytest.raises(ek.InputError, match=r"subpixel"):
        ek.stereo.disparity(left, right, method="sgm", subpixel="cubic")
    with pytest.raises(ek.InputError, match=r"--kernel evolved: kernel variants apply to --method ssd"):
        ek.stereo.disparity(left, right, method="sgm", kernel="evolved")
    with pytest.raises(ek.InputError, match=r"apply to method='sgm'"):
        ek.stereo.disparity(left, right, method="ssd", p1=5)
    # the GPU pipeline's speed settings: checked on every backend, never a change of the map
    np.testing.assert_array_equal(
        ek.stereo.disparity(left, right, method="sgm", max_disparity=15, backend="cpu", bands=3, copy_threads=2,
                            copy_chunk=64), d)
    with pytest.raises(ek.InputError, match=r"--bands: must be >= 0"):
        ek.stereo.disparity(left, right, method="sgm", bands=-1)
    with pytest.raises(ek.InputError, match=r"--copy-threads: must be >= 0"):
        ek.stereo.disparity(left, right, method="sgm", copy_threads=-2)
    with pytest.raises(ek.InputError, match=r"apply to method='sgm'"):
        ek.stereo.disparity(left, right, method="ssd", bands=2)


def test_methods_and_method_passthrough():
    assert ek.stereo.methods() == ["ssd", "sgm"]
    left, right = pair()
    with pytest.raises(ek.InputError, match=r"--method nope: no such matching method"):
        ek.stereo.disparity(left, right, method="nope")


def test_errors_carry_the_cli_messages():
    left, right = pair()
    with pytest.raises(ek.InputError, match=r"--window: must be odd"):
        ek.stereo.disparity(left, right, window=4)
    with pytest.raises(ValueError, match=r"sizes differ"):
        ek.stereo.disparity(left, right[:, :-1])
    with pytest.raises(ek.InputError, match=r"2-D grey image"):
        ek.stereo.disparity(np.zeros((4, 4, 3), np.uint8), np.zeros((4, 4, 3), np.uint8))
    with pytest.raises(ek.InputError, match=r"uint8"):
        ek.stereo.disparity(left.astype(np.float32), right.astype(np.float32))
    with pytest.raises(ek.InputError, match=r"backend"):
        ek.stereo.disparity(left, right, backend="tpu")
    with pytest.raises(ek.InputError, match=r"cannot open genome file"):
        ek.stereo.disparity(left, right, kernel="/nonexistent.genome")
    with pytest.raises(ek.InputError, match=r"--max-disparity"):
        ek.stereo.disparity(left, right, min_disparity=9, max_disparity=3)


def test_integer_images_in_range_are_accepted():
    left, right = pair()
    a = ek.stereo.disparity(left.astype(np.int64), right.astype(np.uint16), max_disparity=7, window=5, backend="cpu")
    b = ek.stereo.disparity(left, right, max_disparity=7, window=5, backend="cpu")
    np.testing.assert_array_equal(a, b)


def test_gil_is_released_during_work():
    left, right = pair(400, 600, 7, seed=2)
    done = threading.Event()
    window = []

    def work():
        t0 = time.perf_counter()
        ek.stereo.disparity(left, right, max_disparity=60, window=11, backend="cpu", threads=1)
        window.extend([t0, time.perf_counter()])
        done.set()

    t = threading.Thread(target=work)
    stamps = []
    t.start()
    while not done.is_set():  # this loop runs only while the worker does not hold the GIL
        stamps.append(time.perf_counter())
        time.sleep(0.001)
    t.join()
    start, end = window
    assert end - start > 0.05, "work too short to tell (%.3f s)" % (end - start)
    # With the GIL held during the C++ work, no stamp could fall in the middle half of the call.
    middle = [s for s in stamps if start + 0.25 * (end - start) < s < start + 0.75 * (end - start)]
    assert len(middle) >= 5, "main thread starved during the call: %d stamps in %.2f s" % (len(middle), end - start)


def _q(f=500.0, cx=320.0, cy=240.0, baseline=0.1, dcx=0.0):
    """Q as stereoRectify builds it for a rig of focal f, principal point (cx, cy), the right camera
    at -baseline along x (Tx = -baseline), principal points dcx apart."""
    return np.array([[1, 0, 0, -cx], [0, 1, 0, -cy], [0, 0, 0, f], [0, 0, 1 / baseline, -dcx / baseline]])


def test_depth_is_focal_times_baseline_over_disparity():
    d = np.array([[25.0, 50.0, 0.0], [np.nan, np.inf, -3.0]], dtype=np.float32)
    z = ek.stereo.depth(d, _q())
    assert z.dtype == np.float32 and z.shape == d.shape
    np.testing.assert_allclose(z[0, :2], [500 * 0.1 / 25, 500 * 0.1 / 50], rtol=1e-6)
    assert np.isinf(z[0, 2]) and np.isinf(z[1]).all()  # no disparity: no depth


def test_points_are_q_times_pixel_and_disparity():
    rng = np.random.default_rng(3)
    d = rng.uniform(1, 60, size=(7, 9)).astype(np.float32)
    d[2, 3] = np.nan
    d[5, 0] = 0
    q = _q(f=700, cx=4.5, cy=3.0, baseline=0.2, dcx=1.5)
    image = np.arange(63, dtype=np.uint8).reshape(7, 9)
    xyz, pixels, values = ek.stereo.points(d, q, image)
    assert len(xyz) == 61 and pixels.shape == (61, 2)
    ys, xs = np.nonzero(np.isfinite(d) & (d > 0))  # row by row, as the PLY is written
    np.testing.assert_array_equal(pixels, np.stack([xs, ys], axis=1))
    h = np.stack([xs, ys, d[ys, xs], np.ones_like(xs)], axis=1).astype(np.float64) @ q.T
    np.testing.assert_allclose(xyz, h[:, :3] / h[:, 3:], rtol=1e-5)
    np.testing.assert_array_equal(values, image[ys, xs])


def test_depth_and_points_refuse_bad_shapes():
    with pytest.raises(ek.InputError, match="4x4"):
        ek.stereo.depth(np.ones((2, 2)), np.eye(3))
    with pytest.raises(ek.InputError, match="2-D"):
        ek.stereo.points(np.ones(4), np.eye(4))
    with pytest.raises(ek.InputError, match="image"):
        ek.stereo.points(np.ones((2, 2)), np.eye(4), np.ones((3, 2)))
