"""Issue 46 (R5C, batches AJ/AK): runtimes' and frameworks' lines as posters paste them. Each text is written here in
the tool's own format (Caffe's glog CHECK line with cudaGetErrorString's words, the CANN error manager's
'EZ9903: [PID: n] date …' as llama.cpp's ggml-cann prints it after 'CANN error: ', npu-smi info's table head);
none is copied from a thread."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.captures import ascend_codes, env_report, npu_smi
from gpuvet.captures.decorations import peel
from gpuvet.captures.text import clean
from gpuvet.cli.app import main

Found = dict[tuple[str, str | None], str]


def _findings(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> Found:
    """doctor's findings on ``text`` in this process ({(cause, module): severity}); a refusal fails the test."""
    path = tmp_path / "capture.txt"
    path.write_text(text)
    code = main(["doctor", "--from", str(path), "--json"])
    assert code != 2, text
    return {(f["cause"], f.get("module")): f["severity"] for f in json.loads(capsys.readouterr().out)["findings"]}


CAFFE = "F0311 10:02:11.000001  4242 common.cpp:152] Check failed: error == cudaSuccess (38 vs. 0)  {}"
BARE = "no CUDA-capable device is detected"


def test_a_bold_span_inside_a_line_is_read_as_the_line_bare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A poster's **bold** over part of a line changes nothing: the same verdict as the line bare."""
    bare = _findings(tmp_path, capsys, CAFFE.format(BARE) + "\n")
    assert bare  # the bare line is judged (its verdict is the runtime reader's, not this test's)
    for marked in ("no **CUDA-capable device is detected**", "**no CUDA-capable device** is detected"):
        assert _findings(tmp_path, capsys, CAFFE.format(marked) + "\n") == bare


def test_a_bold_label_and_a_power_are_kept() -> None:
    """A report's bold label ('- **PCIe:** x4') is its own mark, and '2**10' is no bold: both stay as written."""
    lines = ["- **PCIe:** x4 lanes negotiated", "size = 2**10 bytes", "a **b** c"]
    got = [text for _, text in peel(list(enumerate(lines, 1))).lines]
    assert got == ["- **PCIe:** x4 lanes negotiated", "size = 2**10 bytes", "a b c"]


EZ = "EZ9903: [PID: 5150] 2025-03-01-09:00:00.000.001 support for Ascend310B4 is not implemented"


def test_a_runtime_code_saying_not_implemented_is_read_and_judged_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """EZ9903 'support for <SoC> is not implemented' is the build's support gap: read, no warn, bare or after
    llama.cpp's 'CANN error: ' prefix, with the error manager's Solution line under it."""
    for line in (f"CANN error: {EZ}", EZ):
        text = (
            "/src/ggml/src/ggml-cann/ggml-cann.cpp:67: CANN error\n"
            + line
            + ("\n        Solution: In this scenario, collect the plog when the fault occurs.\n")
        )
        parsed = ascend_codes.parse(clean(text).lines)
        assert not parsed.errors and parsed.claimed, line
        assert _findings(tmp_path, capsys, text) == {}, line


def test_a_runtime_code_that_failed_stays_a_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same prefix on a code that reports a failure is still read as one (no 'not supported' in its words)."""
    text = "CANN error: EE1002: [PID: 5150] 2025-03-01-09:00:00.000.001 Stream synchronize timeout.\n"
    assert set(_findings(tmp_path, capsys, text).values()) == {"warn"}


HEAD = """+------------------------------------------------------------------------------------------------+
| npu-smi 24.1.rc2                 Version: 24.1.rc2                                              |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip  Device              | Bus-Id        | AICore(%)   Memory-Usage(MB)                        |
+===========================+===============+====================================================+
"""


def test_npu_smi_info_with_no_npu_row_is_read_not_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The table's head with no chip under it (a container without /dev/davinci*): read, said, no finding."""
    parsed = npu_smi.parse(clean(HEAD).lines)
    assert parsed.kinds == ["npu-smi info"] and not parsed.modules
    assert any("no NPU is visible" in n for n in parsed.notes)
    assert _findings(tmp_path, capsys, "root@npu:/app# npu-smi info\n" + HEAD) == {}


def _listing_line(minor: int, uuid: str, bus: str) -> str:
    return (
        f"I0109 13:28:17.4{minor}8512 3776598 nvc_info.c:714] listing device /dev/nvidia{minor} "
        f"(GPU-{uuid}-0000-0000-0000-000000000000 at 00000000:{bus}:00.0)"
    )


def test_a_container_cli_block_cut_before_its_bus_is_the_gpu_its_minor_names() -> None:
    """nvidia-container-cli -d info: the debug 'listing device /dev/nvidiaN (UUID at BUS)' lines, then a device
    block cut after its Model: the block is /dev/nvidia<Device Minor>'s GPU, not a further one without a bus id."""
    text = "\n".join(
        [
            _listing_line(0, "aaaaaaaa", "0b"),
            _listing_line(1, "bbbbbbbb", "11"),
            "NVRM version:   515.86.01",
            "CUDA version:   11.7",
            "",
            "Device Index:   0",
            "Device Minor:   1",
            "Model:          NVIDIA A100-SXM",
        ]
    )
    listed = env_report.listing(clean(text + "\n").lines)
    assert [(m.bus_id, m.product) for m in listed.modules] == [("0000:11:00.0", "NVIDIA A100-SXM"), ("0000:0B:00.0", "")]
    assert listed.driver == "515.86.01" and listed.cuda == "11.7"


SYNC_TIMEOUT = """RuntimeError: npuSynchronizeDevice:torch_npu/csrc/core/npu/NPUStream.cpp:390 NPU function error: \
aclrtSynchronizeDevice, error code is 507046
[ERROR] 2025-03-01-09:00:00 (PID:5150, Device:1, RankID:1) ERR00100 PTA call acl api failed
[Error]: In the specified timeout waiting event, all tasks in the specified stream are not completed.
EE1002: 2025-03-01-09:00:00.000.001 Stream synchronize timeout. rtDeviceSynchronize execute failed, \
reason=[stream sync timeout]
        TraceBack (most recent call last):
        wait for compute device to finish failed, runtime result = 507046.[FUNC:ReportCallError][FILE:log_inner.cpp]\
[LINE:161]
"""


def test_torch_npus_code_and_the_runtimes_own_code_under_it_are_one_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """torch_npu's 'error code is 507046' and the runtime's 'EE1002: Stream synchronize timeout' under it are one
    stream timeout: one finding (the runtime's, with its reason), not one per line."""
    found = _findings(tmp_path, capsys, SYNC_TIMEOUT)
    assert list(found.values()) == ["warn"] and {c for c, _ in found} == {"npu_runtime_error"}
