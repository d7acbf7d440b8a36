"""Issue 46 (R9A): the NVIDIA driver's GSP RPC and NVLink failures as the driver prints them (the GSP RPC poll's
stack dump, NVLink discovery's postRxDetLinkMask line), nvidia-smi's ERR! on one module while its peers read, its
'device handle for GPU0000:…' with the bus id glued on, and a captured power limit below the default stated as a
setting (info) unless a design or peers say otherwise. Lines written in the driver's and the tools' formats (the
strings from NVIDIA/open-gpu-kernel-modules' kernel_gsp.c and kernel_nvlink*.c; stamps, hosts and figures made up);
the batch AT/AU rows are read as one check each."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import capture_findings, capture_json, smi_table

CAPS = Path(__file__).parents[1] / "data" / "captures"
NO_BUS = "bus id not in the log"

_STACK = """Mar 02 11:04:19 ws7 kernel: NVRM: GPU0 GSP RPC buffer contains function 76 (GSP_RM_CONTROL)
Mar 02 11:04:19 ws7 kernel: CPU: 3 UID: 0 PID: 912 Comm: nv_queue Tainted: G           OE      6.14.0-29-generic
Mar 02 11:04:19 ws7 kernel: Call Trace:
Mar 02 11:04:19 ws7 kernel:  <TASK>
Mar 02 11:04:19 ws7 kernel:  dump_stack_lvl+0x76/0xa0
Mar 02 11:04:19 ws7 kernel:  os_dump_stack+0xe/0x20 [nvidia]
Mar 02 11:04:19 ws7 kernel:  {frame}
Mar 02 11:04:19 ws7 kernel:  _issueRpcAndWait+0xdd/0x970 [nvidia]
Mar 02 11:04:19 ws7 kernel:  ? osGetCurrentThread+0x26/0x60 [nvidia]
"""


@pytest.mark.parametrize("frame", ["_kgspRpcRecvPoll+0x650/0x820 [nvidia]", "kgspRpcRecvPoll+0x3a1/0x5c0 [nvidia]"])
def test_the_gsp_rpc_polls_stack_dump_is_a_module_that_needs_a_reset(tmp_path: Path, frame: str) -> None:
    found = capture_findings(tmp_path, _STACK.replace("{frame}", frame))
    assert found.get(("module_needs_reset", NO_BUS)) == "critical"


def test_a_stale_frame_or_the_name_in_prose_is_no_gsp_timeout(tmp_path: Path) -> None:
    stale = _STACK.replace("{frame}", "? _kgspRpcRecvPoll+0x650/0x820 [nvidia]")
    assert "module_needs_reset" not in {c for c, _ in capture_findings(tmp_path, stale)}
    prose = _STACK.replace("{frame}", "? rmDeviceGpuLockIsOwner+0x29/0x90 [nvidia]") + (
        "The fix touches _kgspRpcRecvPoll in kernel_gsp.c [nvidia] so that the poll yields the CPU.\n"
    )
    assert "module_needs_reset" not in {c for c, _ in capture_findings(tmp_path, prose)}


@pytest.mark.parametrize(
    "line",
    [
        "Jul 09 10:42:47 node-0082 kernel: NVRM: knvlinkDiscoverPostRxDetLinks_GH100: Getting peer0's postRxDetLinkMask "
        "failed!",
        "[ 8123.402117] NVRM: knvlinkDiscoverPostRxDetLinks_GB100: Getting peer3 postRxDetLinkMask failed!",
        "[ 8123.402101] NVRM: knvlinkUpdatePostRxDetectLinkMask_IMPL: Failed to update Rx Detect Link mask!",
    ],
)
def test_nvlink_discovery_failing_is_nvlinks_down(tmp_path: Path, line: str) -> None:
    found = capture_findings(tmp_path, line + "\n")
    assert found.get(("nvlink_down", NO_BUS)) == "critical"
    assert "driver_error_unnamed" not in {c for c, _ in found}


def test_one_modules_err_beside_peers_that_read_is_that_modules_warn(tmp_path: Path) -> None:
    pair = smi_table(("NVIDIA L40S", 40), ("NVIDIA L40S", 41))
    fan = pair.replace("| N/A   40C", "|  30%   40C", 1).replace("| N/A   41C", "|ERR!   41C", 1)  # its peer read 30 %
    assert capture_findings(tmp_path, fan).get(("module_sensors_unreadable", "0000:1A:00.0")) == "warn"
    unread = pair.replace("| N/A   41C", "|ERR!   41C", 1)  # REVFIX65: a peer's N/A fan is no reading of it
    assert "module_sensors_unreadable" not in {c for c, _ in capture_findings(tmp_path, unread)}
    assert "module_sensors_unreadable" not in {c for c, _ in capture_findings(tmp_path, pair)}
    alone = smi_table(("NVIDIA L40S", 41)).replace("| N/A   41C", "|ERR!   41C", 1)  # R14E: no peer, its fan unread
    assert capture_findings(tmp_path, alone).get(("module_sensors_unreadable", "0000:19:00.0")) == "warn"


def test_the_device_handle_line_with_the_bus_id_glued_to_gpu_names_that_bus(tmp_path: Path) -> None:
    text = (
        'After three hours of training on our server I got this error: "Unable to determine the device handle '
        'for GPU0000:3B:00.0: Unknown Error". It occurred on two servers.\n'
    )
    assert capture_findings(tmp_path, text).get(("module_fell_off_bus", "0000:3B:00.0")) is not None


_RIG = """# club-3090 rig report

## GPU hardware

- **GPU 0:** NVIDIA GeForce RTX 3090 | 24576 MiB | driver 595.71.05 | VBIOS 94.02.42.00.B4 | persistence=Disabled
  - **Power:** limit=250.00 W (default=350.00 W, max=375.00 W) | current_draw=43.85 W
  - **PCIe:** x16 lanes negotiated (GPU max x16, Gen up to 4) | bus 00000000:01:00.0
- **GPU 1:** NVIDIA GeForce RTX 3090 | 24576 MiB | driver 595.71.05 | VBIOS 94.02.26.40.81 | persistence=Disabled
  - **Power:** limit=250.00 W (default=350.00 W, max=350.00 W) | current_draw=31.14 W
"""


def test_a_captured_power_limit_below_default_is_a_setting_stated_and_no_gpu_is_dropped(tmp_path: Path) -> None:
    assert capture_findings(tmp_path, _RIG) == {("power_cap_low", "0000:01:00.0"): "info", ("power_cap_low", "gpu1"): "info"}
    listed = str(capture_json(tmp_path, _RIG, "inventory"))
    assert "GPU 1" in listed or "gpu1" in listed


@pytest.mark.parametrize(
    ("row", "cause", "module", "severity"),
    [
        ("fresh_au/journal_opengpu942_gsp_timeout_freeze.txt", "module_needs_reset", NO_BUS, "critical"),
        ("fresh_au/journal_gpud1271_nvlink_postrxdet_gh100.txt", "nvlink_down", NO_BUS, "critical"),
        ("fresh_at/nvsmi_gpuexporter393_rtx4000ada_gpu14_err.txt", "module_sensors_unreadable", "0000:CC:00.0", "warn"),
        ("fresh_at/nvsmi_llava1466_a100_device_handle_unknown_error.txt", "module_fell_off_bus", "0000:4F:00.0", "warn"),
        ("fresh_at/rigreport_club3090-758_2x3090_power_capped.txt", "power_cap_low", "0000:01:00.0", "info"),
    ],
)
def test_the_batch_rows(tmp_path: Path, row: str, cause: str, module: str, severity: str) -> None:
    found = capture_findings(tmp_path, (CAPS / row).read_text(encoding="utf-8"))
    assert found.get((cause, module)) == severity
    if severity == "info":
        assert not {k for k, v in found.items() if v != "info"}


_CSV = """$ nvidia-smi --query-gpu=index,pci.bus_id,name,temperature.gpu,fan.speed,power.draw --format=csv
index, pci.bus_id, name, temperature.gpu, fan.speed [%], power.draw [W]
0, 00000000:19:00.0, NVIDIA L40S, 41, 30 %, 88.10 W
1, 00000000:1A:00.0, NVIDIA L40S, 68, {fan}, {power}
"""


def test_query_gpu_csv_unread_fields_and_the_reset_nvml_asks_for(tmp_path: Path) -> None:
    fan = capture_findings(tmp_path, _CSV.format(fan="[Unknown Error]", power="92.40 W"))
    assert fan.get(("module_sensors_unreadable", "0000:1A:00.0")) == "warn"
    reset = capture_findings(tmp_path, _CSV.format(fan="[GPU requires reset]", power="[GPU requires reset]"))
    assert reset.get(("module_needs_reset", "0000:1A:00.0")) == "critical"
    unsupported = capture_findings(tmp_path, _CSV.format(fan="[Not Supported]", power="92.40 W"))  # a passive card
    assert not {k for k, v in unsupported.items() if v != "info"}


_Q = """==============NVSMI LOG==============

Driver Version                            : 550.54.15
Attached GPUs                             : 1
GPU 00000000:1A:00.0
    Product Name                          : NVIDIA A100-SXM4-80GB
    Temperature
        GPU Current Temp                  : {temp}
    GPU Power Readings
        Power Draw                        : {power}
"""


def test_q_fields_nvml_answered_reset_required_are_a_module_that_needs_a_reset(tmp_path: Path) -> None:
    asked = capture_findings(tmp_path, _Q.format(temp="GPU requires reset", power="[GPU requires reset]"))
    assert asked.get(("module_needs_reset", "0000:1A:00.0")) == "critical"
    read = capture_findings(tmp_path, _Q.format(temp="41 C", power="88.10 W"))
    assert "module_needs_reset" not in {c for c, _ in read}
