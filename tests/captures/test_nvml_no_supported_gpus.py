"""Issue 46 (NOTE): NVML's init finding no GPU the installed driver supports ('Failed to initialize NVML: No supported
GPUs were found'; nvidia-smi then 'Unable to determine the number of GPUs', exit 255) is one warn on the node with
its own cause (driver_supports_no_module: a model the release dropped or one newer than it, or no GPU bound to
nvidia), whichever program prints it, never the generic 'a GPU tool reported a failure' nor critical."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main

# (file name, its lines): nvidia-smi at a prompt, a journal's stamp, a device plugin's klog line, a poster's sentence
PRINTED = [
    (
        "smi.txt",
        "$ nvidia-smi\nFailed to initialize NVML: No supported GPUs were found\n"
        "Unable to determine the number of GPUs\n$ echo $?\n255\n",
    ),
    ("journal.log", "Dec 07 10:01:12 gpu-07 nvidia-smi[2210]: Failed to initialize NVML: No supported GPUs were found\n"),
    (
        "plugin.log",
        "E1207 10:11:02.101530       1 main.go:132] error starting plugins: failed to initialize NVML: "
        "No supported GPUs were found\n",
    ),
    ("post.txt", 'After the upgrade nvidia-smi says "Failed to initialize NVML: No supported GPUs were found".\n'),
]


@pytest.mark.parametrize(("name", "text"), PRINTED)
def test_no_supported_gpus_is_one_warn_of_its_own_cause(
    name: str, text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert main(["doctor", "--from", str(path), "--json"]) != 2
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [f["cause"] for f in findings] == ["driver_supports_no_module"], findings
    assert findings[0]["severity"] == "warn"


def test_batch_ad_row(capsys: pytest.CaptureFixture[str]) -> None:
    path = Path(__file__).parent.parent / "data/captures/fresh_ad/nvsmi_dradriver1008_no_supported_gpus.txt"
    assert main(["doctor", "--from", str(path), "--json"]) != 2
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["cause"], f["severity"]) for f in findings] == [("driver_supports_no_module", "warn")], findings
