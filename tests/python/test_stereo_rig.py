"""evokernels.stereo with a camera rig on the CPU backend: load_rig reads `stereo calibrate`'s file,
rectify gives the bytes of `stereo disparity --rig --rectified`, disparity(..., rig=) the CLI's
`--rig` map, on OpenCV's stereo_calib sample (data/stereo/calib, scripts/fetch-data.sh; skipped when
absent); the remap against its definition in numpy; each bad input an InputError naming it. Rig files
need a build with OpenCV (the GPU bundle has none: those tests skip there); the synthetic rig needs
none."""
import numpy as np
import pytest

import evokernels as ek
from conftest import DATA, assert_map_is_clis, read_pfm, read_pgm, tool

CALIB = DATA / "stereo" / "calib"
VIEWS = ["01", "02", "03", "04", "05", "06", "07", "08", "09", "11", "12", "13", "14"]  # as tests/stereo/rig_test.cpp


def remap_naive(src, mx, my):
    """core/rectify.hpp's remap, literally: positions outside (-1, W) x (-1, H) or not finite give 0;
    else rounded to 1/256 pixel (in float32, as the C++ code), the four neighbours (0 outside)
    weighted by the fractions, (sum + 32768) >> 16."""
    h, w = src.shape
    mx = np.asarray(mx, dtype=np.float32)
    my = np.asarray(my, dtype=np.float32)
    with np.errstate(invalid="ignore"):
        inside = (mx > -1) & (mx < w) & (my > -1) & (my < h)
        qx = np.floor(np.where(inside, mx, 0) * np.float32(256) + np.float32(0.5)).astype(np.int64)
        qy = np.floor(np.where(inside, my, 0) * np.float32(256) + np.float32(0.5)).astype(np.int64)
    x0, y0, fx, fy = qx >> 8, qy >> 8, qx & 255, qy & 255
    padded = np.zeros((h + 3, w + 3), dtype=np.int64)  # 0 around (x0, y0 >= -1, x0 + 1 <= W, y0 + 1 <= H)
    padded[1:h + 1, 1:w + 1] = src

    def at(xx, yy):
        return padded[yy + 1, xx + 1]

    total = ((256 - fx) * (256 - fy) * at(x0, y0) + fx * (256 - fy) * at(x0 + 1, y0) +
             (256 - fx) * fy * at(x0, y0 + 1) + fx * fy * at(x0 + 1, y0 + 1))
    return np.where(inside, (total + 32768) >> 16, 0).astype(src.dtype)


def rig_yaml(width=64, height=48, m1_rows=3):
    """A rig file as `stereo calibrate` writes it (OpenCV FileStorage YAML) for an ideal rig: no
    distortion, no rotation, focal 100 px, baseline 1. m1_rows=2 gives an M1 of the wrong size."""
    def mat(name, rows, cols, values):
        data = ", ".join("%r" % float(v) for v in np.asarray(values, dtype=np.float64).reshape(-1))
        return "%s: !!opencv-matrix\n   rows: %d\n   cols: %d\n   dt: d\n   data: [ %s ]\n" % (name, rows, cols, data)
    m = np.array([[100, 0, width / 2], [0, 100, height / 2], [0, 0, 1]])
    p1 = np.hstack([m, np.zeros((3, 1))])
    p2 = np.hstack([m, [[-100], [0], [0]]])
    q = np.array([[1, 0, 0, -width / 2], [0, 1, 0, -height / 2], [0, 0, 0, 100], [0, 0, 1, 0]])
    return ("%%YAML:1.0\n---\nwidth: %d\nheight: %d\n" % (width, height) +
            (mat("M1", 3, 3, m) if m1_rows == 3 else mat("M1", 2, 2, np.eye(2))) + mat("D1", 1, 5, np.zeros(5)) +
            mat("M2", 3, 3, m) + mat("D2", 1, 5, np.zeros(5)) + mat("R", 3, 3, np.eye(3)) +
            mat("T", 3, 1, [-1, 0, 0]) + mat("R1", 3, 3, np.eye(3)) + mat("R2", 3, 3, np.eye(3)) +
            mat("P1", 3, 4, p1) + mat("P2", 3, 4, p2) + mat("Q", 4, 4, q) +
            "rms: 0.25\nepipolar_error: 0.125\nviews_used: 7\n")


def ideal_rig_file(folder):
    """rig_yaml()'s file in folder; skips where the build reads no rig files (no OpenCV)."""
    path = folder / "ideal.yml"
    path.write_text(rig_yaml())
    try:
        ek.stereo.load_rig(path)
    except ek.InputError as e:
        if "no OpenCV" in str(e):
            pytest.skip(str(e))
        raise
    return path


@pytest.fixture
def ideal_rig(tmp_path):
    return ideal_rig_file(tmp_path)


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """OpenCV's stereo_calib sample calibrated by the tool: (folder with rig.yml, the raw pair of view
    02 as `stereo` reads it (stereo_to_pgm), the JPEG paths of that view)."""
    if not all((CALIB / ("%s%s.jpg" % (side, v))).exists() for side in ("left", "right") for v in VIEWS):
        pytest.skip("no data/stereo/calib (scripts/fetch-data.sh)")
    d = tmp_path_factory.mktemp("rig")
    ideal_rig_file(d)
    args = []
    for v in VIEWS:
        args += [CALIB / ("left%s.jpg" % v), CALIB / ("right%s.jpg" % v)]
    tool("stereo", "calibrate", "-o", d / "rig.yml", *args)
    jpgs = (CALIB / "left02.jpg", CALIB / "right02.jpg")
    raw = []
    for side, jpg in zip(("l", "r"), jpgs):
        tool("stereo_to_pgm", jpg, d / ("%s.pgm" % side))
        raw.append(read_pgm(d / ("%s.pgm" % side))[0])
    return d, raw, jpgs


def test_load_rig_reads_the_file(ideal_rig):
    rig = ek.stereo.load_rig(ideal_rig)
    assert (rig.width, rig.height, rig.size, rig.shape) == (64, 48, (64, 48), (48, 64))
    assert (rig.rms, rig.epipolar_error, rig.views_used) == (0.25, 0.125, 7)
    np.testing.assert_array_equal(rig.M1, [[100, 0, 32], [0, 100, 24], [0, 0, 1]])
    np.testing.assert_array_equal(rig.M2, rig.M1)
    np.testing.assert_array_equal(rig.D1, np.zeros(5))
    np.testing.assert_array_equal(rig.T, [-1, 0, 0])
    np.testing.assert_array_equal(rig.R, np.eye(3))
    assert rig.P1.shape == (3, 4) and rig.P2[0, 3] == -100 and rig.Q[2, 3] == 100
    assert not rig.Q.flags.writeable
    (lx, ly), (rx, ry) = rig.maps
    assert lx.dtype == np.float32 and lx.shape == (48, 64)
    # no distortion, no rotation: every rectified pixel samples its own raw position
    xs, ys = np.meshgrid(np.arange(64), np.arange(48))
    for mx, my in rig.maps:
        np.testing.assert_allclose(mx, xs, atol=1e-4)
        np.testing.assert_allclose(my, ys, atol=1e-4)
    image = np.random.default_rng(5).integers(0, 256, (48, 64), dtype=np.uint8)
    left, right = ek.stereo.rectify(image, image, rig)
    np.testing.assert_array_equal(left, remap_naive(image, lx, ly))
    np.testing.assert_array_equal(right, remap_naive(image, rx, ry))


def test_rectify_is_the_clis_rectified_pair(sample):
    d, (l, r), (jl, jr) = sample
    tool("stereo", "disparity", "--rig", d / "rig.yml", jl, jr, "-o", d / "any.pfm", "--rectified", d / "L.pgm",
         d / "R.pgm", "--backend", "cpu")
    rig = ek.stereo.load_rig(d / "rig.yml")
    assert rig.shape == l.shape == (480, 640) and rig.views_used == 13
    assert abs(rig.rms - 0.634) < 0.01  # docs/STEREO.md: RMS 0.634 px on the sample
    left, right = ek.stereo.rectify(l, r, rig)
    for got, name in ((left, "L.pgm"), (right, "R.pgm")):
        cli, maxval, pixels = read_pgm(d / name)
        assert maxval == 255 and got.dtype == np.uint8 and got.shape == cli.shape
        assert got.tobytes() == pixels, name  # byte for byte
    assert np.mean(left != l) > 0.5  # the rig does change the view
    # the remap's definition through the rig's own maps; a path as the rig
    np.testing.assert_array_equal(left, remap_naive(l, *rig.maps[0]))
    np.testing.assert_array_equal(right, remap_naive(r, *rig.maps[1]))
    for a, b in zip(ek.stereo.rectify(l, r, str(d / "rig.yml")), (left, right)):
        np.testing.assert_array_equal(a, b)


RIG_CASES = [
    # (CLI arguments, Python keywords): ssd with the CLI's defaults; sgm checked; sgm sub-pixel, median
    ([], {}),
    (["--method", "sgm", "--max-disparity", 47, "--lr-check", 1], dict(method="sgm", max_disparity=47, lr_check=1)),
    (["--method", "sgm", "--max-disparity", 47, "--subpixel", "parabola", "--median", 3, "--uniqueness", 5],
     dict(method="sgm", max_disparity=47, subpixel="parabola", median=3, uniqueness=5)),
]


@pytest.mark.parametrize("cli_args,kw", RIG_CASES)
def test_disparity_with_a_rig_is_the_clis_map(sample, cli_args, kw):
    d, (l, r), (jl, jr) = sample
    tool("stereo", "disparity", "--rig", d / "rig.yml", jl, jr, "-o", d / "d.pfm", "--backend", "cpu", *cli_args)
    cli = read_pfm(d / "d.pfm")  # invalid = +inf
    rig = ek.stereo.load_rig(d / "rig.yml")
    py, info = ek.stereo.disparity(l, r, rig=rig, backend="cpu", return_info=True, **kw)
    assert info["backend"] == "cpu" and py.shape == l.shape
    assert_map_is_clis(cli, py, kw.get("subpixel", "none") == "none")
    assert np.isfinite(cli).mean() > 0.1  # a map, not an empty one
    # the same as matching the pair rectify() gives, without the rig; the rig as a path (ssd: quick)
    np.testing.assert_array_equal(ek.stereo.disparity(*ek.stereo.rectify(l, r, rig), backend="cpu", **kw), py)
    if not kw:
        np.testing.assert_array_equal(ek.stereo.disparity(l, r, rig=d / "rig.yml", backend="cpu"), py)


def test_synthetic_rig_rectifies_and_matches_by_the_definition():
    # no rig file and no OpenCV: maps made by core/rectify.hpp (the GPU tests use the same)
    rig = ek.stereo._synthetic_rig(67, 41, angle=0.04, k1=-0.08)
    rng = np.random.default_rng(9)
    l8 = rng.integers(0, 256, (41, 67), dtype=np.uint8)
    r8 = np.concatenate([l8[:, 4:], rng.integers(0, 256, (41, 4), dtype=np.uint8)], axis=1)
    a, b = ek.stereo.rectify(l8, r8, rig)
    np.testing.assert_array_equal(a, remap_naive(l8, *rig.maps[0]))
    np.testing.assert_array_equal(b, remap_naive(r8, *rig.maps[1]))
    # 16 bits kept; colour images channel by channel; other integer arrays within 0..255 as uint8
    l16 = rng.integers(0, 65536, (41, 67), dtype=np.uint16)
    a16, _ = ek.stereo.rectify(l16, l16, rig)
    assert a16.dtype == np.uint16
    np.testing.assert_array_equal(a16, remap_naive(l16, *rig.maps[0]))
    colour = rng.integers(0, 256, (41, 67, 3), dtype=np.uint8)
    c, _ = ek.stereo.rectify(colour, colour, rig)
    assert c.shape == colour.shape and c.dtype == np.uint8
    for k in range(3):
        np.testing.assert_array_equal(c[:, :, k], remap_naive(colour[:, :, k], *rig.maps[0]))
    np.testing.assert_array_equal(ek.stereo.rectify(l8.astype(np.int32), r8, rig)[0], a)
    for kw in (dict(max_disparity=9, window=5), dict(method="sgm", max_disparity=15, subpixel="parabola")):
        np.testing.assert_array_equal(ek.stereo.disparity(l8, r8, rig=rig, backend="cpu", **kw),
                                      ek.stereo.disparity(a, b, backend="cpu", **kw))


def test_load_rig_refuses_files_that_are_not_rigs(tmp_path, ideal_rig):
    good = ideal_rig.read_text()
    bad = {
        "missing.yml": None,
        "text.yml": "these are not matrices\n",
        "cut.yml": good[:len(good) // 3],
        "notmatrix.yml": "width: 640\nheight: 480\nM1: 3\n",
        "nosize.yml": "%YAML:1.0\n---\nrms: 1.0\n",
        "wrongsize.yml": rig_yaml(m1_rows=2),
        "binary.yml": bytes(range(256)),
    }
    for name, content in bad.items():
        path = tmp_path / name
        if isinstance(content, str):
            path.write_text(content)
        elif content is not None:
            path.write_bytes(content)
        with pytest.raises(ek.InputError, match=name) as e:
            ek.stereo.load_rig(path)
        assert "\n" not in str(e.value)
    with pytest.raises(ek.InputError, match="wrongsize.yml: a matrix of the wrong size"):
        ek.stereo.load_rig(tmp_path / "wrongsize.yml")
    with pytest.raises(ek.InputError, match="missing.yml: cannot open the rig file"):
        ek.stereo.load_rig(tmp_path / "missing.yml")
    with pytest.raises(ek.InputError, match="rig: expected a rig file path"):
        ek.stereo.load_rig(42)
    with pytest.raises(ek.InputError, match="missing.yml"):  # a path given as the rig is loaded
        ek.stereo.rectify(np.zeros((48, 64), np.uint8), np.zeros((48, 64), np.uint8), tmp_path / "missing.yml")


def test_frames_of_another_size_or_type_are_refused():
    rig = ek.stereo._synthetic_rig(64, 48)
    good = np.zeros((48, 64), np.uint8)
    small = np.zeros((40, 64), np.uint8)
    with pytest.raises(ek.InputError, match=r"left: 64x40 pixels, but the rig <synthetic> was calibrated on 64x48"):
        ek.stereo.rectify(small, good, rig)
    with pytest.raises(ek.InputError, match=r"right: 64x40 pixels, .* 64x48 views"):
        ek.stereo.rectify(good, small, rig)
    with pytest.raises(ek.InputError, match=r"left, right: 64x40 pixels, .* 64x48 views"):
        ek.stereo.disparity(small, small, rig=rig)
    with pytest.raises(ek.InputError, match=r"left, right: 64x40 pixels"):
        ek.stereo.disparity(small, small, method="sgm", rig=rig)
    with pytest.raises(ek.InputError, match=r"rig: expected a Rig from load_rig\(\) or a rig file path, got 3"):
        ek.stereo.disparity(good, good, rig=3)
    with pytest.raises(ek.InputError, match=r"rig: expected a Rig"):
        ek.stereo.rectify(good, good, {"Q": np.eye(4)})
    with pytest.raises(ek.InputError, match=r"left: expected uint8 or uint16 pixels, got dtype float32"):
        ek.stereo.rectify(good.astype(np.float32), good, rig)
    with pytest.raises(ek.InputError, match=r"right: expected an image \(H, W\) or \(H, W, C\)"):
        ek.stereo.rectify(good, np.zeros(64, np.uint8), rig)
