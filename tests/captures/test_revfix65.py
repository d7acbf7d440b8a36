"""Issue 46 (REVFIX65): a reviewer's findings on round 1, each on lines written in the tools' own formats
(figures, hosts and stamps made up): the strongest verdict for one cause and module wins; one machine-check
record is one fault; 'GPU is lost' is a lost module in every tool; a lone unread sensor needs peers that read it;
a flip is counted once whatever prints it; a health monitor's INFO line naming a fault is not cleared."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings, capture_json


def _q_power(limits: list[int]) -> str:
    """nvidia-smi -q's GPU Power Readings for H100s at these current limits (default and maximum 700 W)."""
    out = [
        "$ nvidia-smi -q",
        "==============NVSMI LOG==============",
        "",
        "Driver Version : 550.54.15",
        f"Attached GPUs : {len(limits)}",
        "",
    ]
    for i, limit in enumerate(limits):
        out += [
            f"GPU 00000000:{0x18 + 0x10 * i:02X}:00.0",
            "    Product Name                  : NVIDIA H100 80GB HBM3",
            "    GPU Power Readings",
            "        Power Draw                : 70.00 W",
            f"        Current Power Limit       : {limit}.00 W",
            f"        Requested Power Limit     : {limit}.00 W",
            "        Default Power Limit       : 700.00 W",
            "        Min Power Limit           : 200.00 W",
            "        Max Power Limit           : 700.00 W",
            "",
        ]
    return "\n".join(out)


def test_a_peer_capped_apart_stays_warn_beside_the_setting_stated(tmp_path: Path) -> None:
    # fails on 9fc1010: checks' info was kept first (setdefault) and smi_peers' warn lost
    assert capture_findings(tmp_path, _q_power([500, 700, 700])) == {("power_cap_low", "0000:18:00.0"): "warn"}
    # every module at one cap below its default: a setting, stated (no peer apart)
    assert set(capture_findings(tmp_path, _q_power([500, 500, 500])).values()) == {"info"}


_QUERY = """$ nvidia-smi --query-gpu=index,pci.bus_id,name,temperature.gpu,fan.speed,power.draw --format=csv
index, pci.bus_id, name, temperature.gpu, fan.speed [%], power.draw [W]
0, 00000000:19:00.0, NVIDIA L40S, 41, {fan0}, 88.10 W
1, 00000000:1A:00.0, NVIDIA L40S, 68, {fan1}, {power1}
"""


def test_gpu_is_lost_is_a_lost_module_in_every_tool(tmp_path: Path) -> None:
    # fails on 9fc1010: query-gpu's and -q's field read as an unread sensor (warn), nvidia-smi's line a tool failure
    lost = {("module_fell_off_bus", "0000:1A:00.0"): "critical"}
    assert capture_findings(tmp_path, _QUERY.format(fan0="30 %", fan1="30 %", power1="[GPU is lost]")) == lost
    q = "GPU 00000000:1A:00.0\n    Product Name : NVIDIA L40S\n    Power Readings\n        Power Draw : GPU is lost\n"
    assert capture_findings(tmp_path, q) == lost
    for said in (
        "nvidia-smi -q\nGPU 00000000:1A:00.0: GPU is lost\n",
        "$ nvidia-smi -pm 1\nUnable to set persistence mode for GPU 00000000:1A:00.0: GPU is lost\n",
    ):
        assert capture_findings(tmp_path, said) == lost
    # NVML's same error in a program's log line: the same verdict (it was already)
    assert capture_findings(tmp_path, "error: NVML: Failed to get usage(15): GPU is lost\n") == {
        ("module_fell_off_bus", "bus id not in the log"): "critical"
    }


def test_a_contained_error_is_the_process_s_one_verdict_printed_or_quoted(tmp_path: Path) -> None:
    # fails on 9fc1010: the runtime's own line was critical api_reports_module_fault (the hardware class), a quote warn
    for line in (
        "RuntimeError: CUDA driver error: CUDA_ERROR_CONTAINED",
        "torch.AcceleratorError: CUDA error: cudaErrorContained",
    ):
        assert capture_findings(tmp_path, line + "\n") == {("module_contained_error", "bus id not in the log"): "warn"}
    quoted = "The job on s2grxs64 died with CUDA_ERROR_CONTAINED after the NVLink counters stayed flat.\n"
    assert set(capture_findings(tmp_path, quoted).values()) <= {"warn", "info"}


def test_a_lone_unread_sensor_needs_peers_that_read_it_and_says_what_was_printed(tmp_path: Path) -> None:
    # fails on 9fc1010: a peer's [N/A] fan counted as read (warn), and the words said ERR! for an [Unknown Error]
    for peer in ("[N/A]", "[Not Supported]"):
        assert capture_findings(tmp_path, _QUERY.format(fan0=peer, fan1="[Unknown Error]", power1="92.40 W")) == {}
    data = capture_json(tmp_path, _QUERY.format(fan0="30 %", fan1="[Unknown Error]", power1="92.40 W"))
    lone = [f for f in data["findings"] if f["cause"] == "module_sensors_unreadable"]  # type: ignore[union-attr]
    assert [f["module"] for f in lone] == ["0000:1A:00.0"]
    assert "printed [Unknown Error]" in lone[0]["evidence"]["said"] and "ERR!" not in lone[0]["evidence"]["said"]


_MCE = """[ {t}.0] mce: [Hardware Error]: CPU 0: Machine Check{x}: {n} Bank 17: {word}
[ {t}.0] [Hardware Error]: CPU:0 (17:31:0) MC17_STATUS[{bits}]: 0x{word}
[ {t}.0] [Hardware Error]: Unified Memory Controller Ext. Error Code: 0, DRAM ECC error.
"""
_CE = {"x": "", "n": 0, "word": "9c2040000000011b", "bits": "-|CE|MiscV|AddrV|-|-|SyndV|CECC|-|-|-"}
_UE = {"x": " Exception", "n": 5, "word": "bea0000000000108", "bits": "Over|UE|MiscV|AddrV|PCC|-|SyndV|UECC|-|-|-"}


def test_one_machine_check_printed_by_print_mce_and_mce_amd_is_one_fault(tmp_path: Path) -> None:
    # fails on 9fc1010: the kernel's line placed on the CPU, the decoder's on the memory controller: two causes
    bank = "host memory controller (MCA bank 17)"
    assert capture_findings(tmp_path, _MCE.format(t=1, **_UE)) == {("host_memory_uncorrected", bank): "critical"}
    thrice = "".join(_MCE.format(t=t, **_CE) for t in range(3))
    assert capture_findings(tmp_path, thrice) == {("host_memory_ce_repeated", bank): "warn"}
    # a CPU bank's record (no memory controller named after it) stays the CPU's
    cpu = "[ 1.0] mce: [Hardware Error]: CPU 9: Machine Check: 0 Bank 5: bea0000000000108\n"
    assert capture_findings(tmp_path, cpu) == {("host_machine_check", "host CPU 9 (MCA bank 5)"): "critical"}


_FLIP = (
    "Dec 07 10:0{t}:00 host kernel: [drm:drm_atomic_helper_wait_for_flip_done [drm_kms_helper]] *ERROR* "
    "[CRTC:82:crtc-0] flip_done timed out\n"
    "Dec 07 10:0{t}:00 host kwin_wayland[1234]: kwin_wayland_drm: Pageflip timed out! This is a bug in the nvidia "
    "kernel driver\n"
)


def test_a_flip_printed_by_drm_and_by_kwin_is_one_flip(tmp_path: Path) -> None:
    # fails on 9fc1010: 2 flips, each printed by DRM and by KWin, were counted as 4 lines (a warn)
    assert capture_findings(tmp_path, _FLIP.format(t=0) + _FLIP.format(t=1)) == {}
    data = capture_json(tmp_path, "".join(_FLIP.format(t=t) for t in range(3)))
    hang = [f for f in data["findings"] if f["cause"] == "display_pipeline_hang"]  # type: ignore[union-attr]
    assert [(f["severity"], f["evidence"].get("times")) for f in hang] == [("warn", 3)]


def test_a_health_monitor_s_info_line_naming_a_fault_is_not_called_healthy(tmp_path: Path) -> None:
    # fails on 9fc1010: the INFO line was claimed by its level and keys alone, noted 'none reporting a failure'
    xid = (
        '{"time":"2025-11-03T10:00:00Z","level":"INFO","msg":"Detected XID 79 (GPU has fallen off the bus) on GPU '
        '0000:1a:00","module":"syslog-health-monitor"}\n'
    )
    healthy = (
        '{"time":"2025-11-03T10:00:01Z","level":"INFO","msg":"Health event sent","module":"syslog-health-monitor",'
        '"checkName":"SysLogsXIDError","isHealthy":true,"message":"No Health Failures"}\n'
    )
    notes = [n for n in capture_json(tmp_path, xid + healthy)["notes"] if "NVSentinel" in n]  # type: ignore[union-attr]
    assert any("name a fault" in n and "XID 79" in n for n in notes)
    assert not any("none reporting a failure" in n and "XID 79" in n for n in notes)
    alone = [n for n in capture_json(tmp_path, healthy)["notes"] if "NVSentinel" in n]  # type: ignore[union-attr]
    assert len(alone) == 1 and "none reporting a failure" in alone[0] and "name a fault" not in alone[0]
