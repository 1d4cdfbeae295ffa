"""evokernels.devices() and environment(): the same facts as `<tool> devices --json`."""
import json

import evokernels as ek
from conftest import tool


def test_environment_matches_the_cli():
    env = ek.environment()
    cli = json.loads(tool("stereo", "devices", "--json"))
    for key in ("version", "built_with_cuda", "cuda_architectures", "status", "backend", "overlay_dir"):
        assert env[key] == cli[key], key
    assert env["version"] == ek.__version__


def test_devices_list_the_gpus_and_kernels():
    devs = ek.devices()
    cli = json.loads(tool("stereo", "devices", "--json"))
    assert [d["name"] for d in devs] == [d["name"] for d in cli["devices"]]
    for d in devs:
        assert set(d["kernels"]) >= {"stereo", "reg_deform", "barracuda_exact"}
    if not devs:
        assert ek.environment()["backend"] == "cpu"
