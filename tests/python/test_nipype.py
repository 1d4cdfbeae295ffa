"""nipype's NiftyReg interfaces on the drop-in commands (NIFTYREGDIR=build/compat/niftyreg), as a
workflow a nipype user already has: RegResample (affine, and a reg_f3d-style control-point grid)
then RegMeasure (NMI). Checked against the drop-ins run directly, and against NiftyReg 2.0 itself
where its CPU binaries are available (../shared/peers). RegAladin/RegF3D are written out and run
once `reg_deform affine` / `reg_deform register` exist in the build (skipped until then)."""
import os
import pathlib
import shutil
import subprocess
import tarfile

import numpy as np
import pytest

from conftest import BIN, tool

COMPAT = BIN.parent / "compat" / "niftyreg"
os.environ["NIFTYREGDIR"] = str(COMPAT)  # read when nipype's niftyreg module is imported
nipype = pytest.importorskip("nipype")
nib = pytest.importorskip("nibabel")
from nipype import Node, Workflow  # noqa: E402
from nipype.interfaces import niftyreg  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("EVK_SHARED_DATA", ROOT.parent / "shared" / "data"))


def brains():
    b = SHARED / "brain"
    if (b / "mni152_t1_2mm.nii.gz").exists() and (b / "subject_T1_head.nii.gz").exists():
        return b / "mni152_t1_2mm.nii.gz", b / "subject_T1_head.nii.gz"
    pytest.skip("shared brains (../shared/data/brain) not available")


def has_subcommand(sub):
    """Whether `reg_deform --help` lists the subcommand (CLI11 prints the main help for unknown ones)."""
    exe = BIN / "reg_deform"
    if not exe.exists():
        return False
    out = subprocess.run([str(exe), "--help"], capture_output=True, text=True).stdout
    listed = out.split("Subcommands:", 1)[-1].splitlines() if "Subcommands:" in out else []
    return any(line.split()[:1] == [sub] for line in listed)


@pytest.fixture(scope="module")
def real_niftyreg(tmp_path_factory):
    """NiftyReg 2.0's CPU binaries unpacked, or None (the brief's recipe)."""
    tgz = SHARED.parent / "peers" / "niftyreg" / "niftyreg-bin.tar.gz"
    stub = pathlib.Path("/usr/local/cuda/lib64/stubs/libcuda.so")
    if not tgz.exists() or not stub.exists():
        return None
    d = tmp_path_factory.mktemp("niftyreg")
    with tarfile.open(tgz) as t:
        t.extractall(d)
    (d / "stub").mkdir()
    (d / "stub" / "libcuda.so.1").symlink_to(stub)
    env = dict(os.environ, LD_LIBRARY_PATH="%s:/usr/local/cuda/lib64:%s" % (d / "bin" / "lib", d / "stub"))
    return d / "bin", env


def run_workflow(tmp_path, ref, flo, trans):
    wf = Workflow(name="evk", base_dir=str(tmp_path / "wf"))
    res = Node(niftyreg.RegResample(ref_file=str(ref), flo_file=str(flo), trans_file=str(trans), inter_val="LIN",
                                    omp_core_val=2), name="resample")
    meas = Node(niftyreg.RegMeasure(ref_file=str(ref), measure_type="nmi", omp_core_val=2), name="measure")
    wf.connect(res, "out_file", meas, "flo_file")
    graph = wf.run()
    outs = {n.name: n.result.outputs for n in graph.nodes()}
    return pathlib.Path(outs["resample"].out_file), float(pathlib.Path(outs["measure"].out_file).read_text())


def test_nipype_sees_niftyreg_2(tmp_path):
    assert niftyreg.base.Info.version().strip().startswith("2.0.0+evokernels.")
    r = niftyreg.RegResample(ref_file=__file__, flo_file=__file__)  # cmdline only (files need only exist)
    assert r.cmdline.startswith(str(COMPAT / "reg_resample"))


@pytest.mark.parametrize("kind", ["affine", "grid"])
def test_resample_and_measure_workflow(tmp_path, real_niftyreg, kind):
    ref, flo = brains()
    aff = tmp_path / "aff.txt"
    aff.write_text("0.99 -0.104 0 3.5\n0.104 0.99 0 -2\n0 0 1.02 1.5\n0 0 0 1\n")
    trans = aff
    if kind == "grid":
        trans = tmp_path / "cpp.nii.gz"
        tool("reg_deform", "grid", "--ref", ref, "--affine", aff, "--perturb", 2, "--seed", 5, "-o", trans)
    warped, nmi = run_workflow(tmp_path, ref, flo, trans)
    img = nib.load(warped)
    assert img.shape == nib.load(ref).shape
    assert img.get_data_dtype() == nib.load(flo).get_data_dtype()  # NiftyReg keeps the floating datatype
    # the same commands run directly
    direct = tmp_path / "direct.nii.gz"
    subprocess.run([str(COMPAT / "reg_resample"), "-ref", str(ref), "-flo", str(flo), "-trans", str(trans), "-inter",
                    "1", "-res", str(direct), "-voff"], check=True)
    np.testing.assert_array_equal(np.asarray(img.dataobj), np.asarray(nib.load(direct).dataobj))
    out = subprocess.run([str(COMPAT / "reg_measure"), "-ref", str(ref), "-flo", str(direct), "-nmi"], check=True,
                         capture_output=True, text=True).stdout
    assert out.startswith("NMI: ") and float(out.split()[1]) == pytest.approx(nmi, abs=1e-6)
    assert 1.0 < nmi < 2.0
    if real_niftyreg:  # NiftyReg 2.0 on the same command lines
        nrbin, env = real_niftyreg
        theirs = tmp_path / "nr.nii.gz"
        subprocess.run([str(nrbin / "reg_resample"), "-ref", str(ref), "-flo", str(flo), "-trans", str(trans),
                        "-inter", "1", "-res", str(theirs), "-voff", "-omp", "2"], check=True, env=env,
                       capture_output=True)
        a, b = np.asarray(img.dataobj), np.asarray(nib.load(theirs).dataobj)
        assert a.dtype == b.dtype
        # affine: identical; grid: our kernel's field may move a few samples across a truncation boundary
        assert np.count_nonzero(a != b) <= (0 if kind == "affine" else a.size // 10000)
        o = subprocess.run([str(nrbin / "reg_measure"), "-ref", str(ref), "-flo", str(theirs), "-nmi", "-omp", "2"],
                           check=True, env=env, capture_output=True, text=True).stdout
        assert float(o.split()[-1]) == pytest.approx(nmi, rel=2e-5)


@pytest.mark.skipif(not has_subcommand("affine") or not has_subcommand("register"),
                    reason="reg_deform affine/register are not in this build: RegAladin/RegF3D drop-ins refuse")
def test_aladin_f3d_workflow(tmp_path):
    """The whole NiftyReg pipeline: RegAladin -> RegF3D -> RegResample -> RegMeasure, whose final NMI
    must not be below what our CLI gives directly on the same pair (issue 18)."""
    ref, flo = brains()
    wf = Workflow(name="evk_reg", base_dir=str(tmp_path / "wf"))
    aladin = Node(niftyreg.RegAladin(ref_file=str(ref), flo_file=str(flo), omp_core_val=2), name="aladin")
    f3d = Node(niftyreg.RegF3D(ref_file=str(ref), flo_file=str(flo), omp_core_val=2), name="f3d")
    res = Node(niftyreg.RegResample(ref_file=str(ref), flo_file=str(flo), inter_val="LIN"), name="resample")
    meas = Node(niftyreg.RegMeasure(ref_file=str(ref), measure_type="nmi"), name="measure")
    wf.connect([(aladin, f3d, [("aff_file", "aff_file")]), (f3d, res, [("cpp_file", "trans_file")]),
                (res, meas, [("out_file", "flo_file")])])
    graph = wf.run()
    outs = {n.name: n.result.outputs for n in graph.nodes()}
    nmi = float(pathlib.Path(outs["measure"].out_file).read_text())
    # our CLI directly
    tool("reg_deform", "affine", "--ref", ref, "--flo", flo, "-o", tmp_path / "aff.txt")
    tool("reg_deform", "register", "--ref", ref, "--flo", flo, "--aff", tmp_path / "aff.txt", "--cpp",
         tmp_path / "cpp.nii.gz", "--res", tmp_path / "w.nii.gz")
    out = subprocess.run([str(COMPAT / "reg_measure"), "-ref", str(ref), "-flo", str(tmp_path / "w.nii.gz"), "-nmi"],
                         check=True, capture_output=True, text=True).stdout
    assert nmi >= float(out.split()[1]) - 1e-4
