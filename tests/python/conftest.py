"""pytest set-up for the Python module: the build tree's package (PYTHONPATH=build/python, set by
ctest), the tools in build/bin ($EVK_BIN_DIR) for CLI comparisons, helpers."""
import os
import pathlib
import subprocess

import numpy as np
import pytest

BIN = pathlib.Path(os.environ.get("EVK_BIN_DIR", pathlib.Path(__file__).resolve().parents[2] / "build" / "bin"))


@pytest.fixture(autouse=True)
def _no_overlay(tmp_path, monkeypatch):
    # Results must not depend on the machine's own evolved variants.
    monkeypatch.setenv("EVK_OVERLAY_DIR", str(tmp_path / "no-overlay"))


def tool(name, *args, cwd=None):
    """Runs build/bin/<name> args...; returns stdout, raising on failure (with its stderr)."""
    exe = BIN / name
    if not exe.exists():
        pytest.skip("%s not built" % exe)
    r = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, cwd=cwd)
    if r.returncode != 0:
        raise AssertionError("%s %s failed (%d): %s" % (name, " ".join(map(str, args)), r.returncode, r.stderr))
    return r.stdout


def write_pgm(path, img):
    img = np.asarray(img, dtype=np.uint8)
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (img.shape[1], img.shape[0]) + img.tobytes())


def read_pfm(path):
    with open(path, "rb") as f:
        magic = f.readline().strip()
        w, h = map(int, f.readline().split())
        scale = float(f.readline())
        data = np.frombuffer(f.read(), dtype="<f4" if scale < 0 else ">f4")
    assert magic == b"Pf"
    return data.reshape(h, w)[::-1]  # stored bottom to top
