"""A version one-liner pasted alone (issue 46, TOOLS), written here: ``nvidia-smi --version`` and ``hipconfig --full`` are
read, not refused: the driver and the CUDA it supports, or the HIP version, go to inventory; nothing is judged on them."""

from __future__ import annotations

from gpuvet.captures import env_report
from gpuvet.captures.read import parse_text
from gpuvet.captures.text import Line

_SMI_VERSION = ("NVIDIA-SMI version  : 535.183.01\nNVML version        : 535.183\n"
                "DRIVER version      : 535.183.01\nCUDA Version        : 12.2\n")


def test_nvidia_smi_version_gives_the_driver_and_its_cuda() -> None:
    rep = env_report.read([Line(n, t) for n, t in enumerate(_SMI_VERSION.splitlines(), 1)])
    assert rep.values["driver"] == "535.183.01" and rep.values["driver_cuda"] == "12.2"
    assert "nvidia-smi --version" in rep.tools


def test_nvidia_smi_version_alone_is_read_with_nothing_judged() -> None:
    fc = parse_text("$ nvidia-smi --version\n" + _SMI_VERSION, "versions.txt")
    assert fc.app_errors.errors == [] and any("nvidia-smi --version" in k for k in fc.kinds)


def test_hipconfig_full_gives_the_hip_version() -> None:
    text = ("HIP version  : 6.2.41133-dd7f95766\n\n==hipconfig\nHIP_PATH     : /opt/rocm-6.2.0\n"
            "HIP_COMPILER : clang\nHIP_PLATFORM : amd\nHIP_RUNTIME  : rocclr\n")
    rep = env_report.read([Line(n, t) for n, t in enumerate(text.splitlines(), 1)])
    assert rep.values["hip"].startswith("6.2.41133") and "hipconfig --full" in rep.tools
    assert parse_text(text, "hip.txt").app_errors.errors == []
