"""The review REV64's findings pinned (issue 46): each test fails on bb248d6's code and passes now."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from gpuvet.captures import hccn_net, nccl_stall, nvidia_stack, rbt_agents
from gpuvet.captures.text import Line
from tests.support.helpers import capture_findings, doctor_text


class _Counted:
    """A compiled pattern's stand-in that counts the lines it is tried on (a reader's cost, not the machine's)."""

    def __init__(self, pattern: Any) -> None:
        self.pattern, self.tried = pattern, 0

    def match(self, text: str) -> re.Match[str] | None:
        self.tried += 1
        return self.pattern.match(text)  # type: ignore[no-any-return]

    def search(self, text: str) -> re.Match[str] | None:
        self.tried += 1
        return self.pattern.search(text)  # type: ignore[no-any-return]


def _lines(text: str) -> list[Line]:
    return [Line(i, t) for i, t in enumerate(text.splitlines(), 1)]


@pytest.mark.parametrize("mask", ["255.0.255.0", "999.255.0.0"])
def test_hccn_tool_netmask_that_is_no_netmask_is_said_not_a_crash(tmp_path: Path, mask: str) -> None:
    # REV64 #1: ipaddress's NetmaskValueError escaped doctor (exit 1, a traceback)
    code, answer = doctor_text(tmp_path, f"$ hccn_tool -i 3 -ip -g\nipaddr:29.1.112.213\nnetmask:{mask}\n")
    assert code == 0 and not answer["findings"]
    assert any(f"hccn_tool -ip: 29.1.112.213 netmask {mask} (not a netmask)" in n for n in answer["notes"])


def test_hccn_tool_reader_tries_each_pattern_only_on_lines_with_its_word(monkeypatch: pytest.MonkeyPatch) -> None:
    # REV64 #8: the claim passes re-ran _IP/_MASK/_IFNAME on every line, _ROUTE_HEAD/_ROUTE twice
    text = (
        "ipaddr:29.1.112.213\nnetmask:255.255.0.0\nPort ID TLV\n  Ifname: 400GE1/1/20:2\nRouting table:\n"
        "Destination     Gateway         Genmask         Flags Metric Ref    Use Iface\n"
        "default         29.1.0.1        0.0.0.0         UG    0      0        0 eth3\n"
        + "a line of prose about the NPU\n"
        * 40
    )
    counted = {name: _Counted(getattr(hccn_net, name)) for name in ("_IP", "_MASK", "_IFNAME", "_ROUTE_HEAD", "_ROUTE")}
    for name, c in counted.items():
        monkeypatch.setattr(hccn_net, name, c)
    claimed, notes = hccn_net.read(_lines(text))
    assert claimed == set(range(1, 8))
    assert notes == [
        "hccn_tool -ip: 29.1.112.213/16",
        "hccn_tool -lldp: the switch port cabled to it: 400GE1/1/20:2",
        "hccn_tool -route: 1 route(s) read",
    ]
    assert {name: c.tried for name, c in counted.items()} == {
        "_IP": 1,
        "_MASK": 1,
        "_IFNAME": 1,
        "_ROUTE_HEAD": 2,
        "_ROUTE": 3,
    }


def test_hwmon_input_that_is_no_number_is_left_unread_not_a_crash(tmp_path: Path) -> None:
    # REV64 #2: '--5' passed lstrip('-').isdigit() and int() raised on the original
    text = "temp1_label : edge\ntemp1_input : --5\ntemp2_label : junction\ntemp2_input : 43000\n"
    code, answer = doctor_text(tmp_path, text)
    assert code == 0 and not answer["findings"]
    assert any("amdgpu hwmon: junction 43 C (" in n for n in answer["notes"])


_NCCL_HEADER = (
    "# Using devices\n#   Rank  0 uses device  0 [0x02] Tesla P100-PCIE-16GB\n"
    "#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res\n"
)


def test_nccl_prompt_after_the_header_is_read_in_bounded_steps() -> None:
    # REV64 #3: '\S+@\S+:\S*' overlapped: a 2,000-char '@:@:' line took 18 s (cubic); every run in the prompt's
    # pattern is now a bounded, disjoint class, so a 20,000-char line is read in linear steps
    assert not re.search(r"(?:\\S|\])[+*]", nccl_stall._AFTER.pattern)
    lines = _lines(_NCCL_HEADER + "@:" * 10_000 + "\n")
    header = [ln for ln in lines if ln.text.startswith("#")]
    assert nccl_stall.went_on(lines, header) is None
    lines = _lines(_NCCL_HEADER + "user@node1:~/nccl-tests$ \n")
    assert nccl_stall.went_on(lines, [ln for ln in lines if ln.text.startswith("#")]) == (4, "user@node1:~/nccl-tests$")


@pytest.mark.parametrize(
    ("said", "stalled"),
    [
        ("it no longer hangs after the driver update:", False),
        ("all_reduce_perf doesn't hang any more, the table was cut:", False),
        ("It is not stuck, I cut the paste here", False),
        ("all_reduce_perf hangs after printing this:", True),
        ("it never finishes, output below:", True),
        ("it no longer crashes, but now it hangs here:", True),
    ],
)
def test_nccl_stall_said_respects_the_posters_negation(said: str, stalled: bool) -> None:
    # REV64 #7: 'it no longer hangs' above a header with no rows was read as the poster saying it stalled
    lines = _lines(said + "\n" + _NCCL_HEADER)
    found = nccl_stall.went_on(lines, [ln for ln in lines if ln.text.startswith("#")])
    assert (found is not None) is stalled


_ON = "\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n"


def test_grepd_acs_lines_are_each_judged_by_their_own_port_type(tmp_path: Path) -> None:
    # REV64 #4: one 'Root Port' line among a grep'd paste's switch ports made every port's ReqRedir+ an info; each
    # ACSCtl line is judged by its own Express line, and a line whose type is not shown as a bridge's (warn)
    text = (
        "\t\tCapabilities: [40] Express (v2) Root Port (Slot+), MSI 00\n"
        + _ON
        + "\t\tCapabilities: [68] Express (v2) Downstream Port (Slot+), MSI 00\n"
        + _ON
        + _ON
    )
    assert capture_findings(tmp_path, text) == {
        ("pcie_acs_root_ports", None): "info",
        ("pcie_acs_enabled", None): "warn",
    }
    assert capture_findings(tmp_path, "\t\tCapabilities: [40] Express (v2) Root Port (Slot+), MSI 00\n" + _ON) == {
        ("pcie_acs_root_ports", None): "info"
    }


@pytest.mark.parametrize(
    "line",
    [
        "nvmlInit_v2 returned 9",
        "nvmlInit_v2 failed with 9",
        "E1207 12:00:00.000000 1 main.go:12] nvml init failed: ret=9",
        "pynvml.nvml.NVMLError_DriverNotLoaded: Driver Not Loaded",
        "nvmlInit returned NVML_ERROR_DRIVER_NOT_LOADED",
    ],
)
def test_nvml_driver_not_loaded_is_one_verdict_in_every_wording(tmp_path: Path, line: str) -> None:
    # REV64 #5: code 9 'returned 9' was no_modules_visible critical, 'failed with 9' (mgmt_status's) a warn
    assert capture_findings(tmp_path, line + "\n") == {("no_modules_visible", None): "critical"}


def test_rocm_bandwidth_test_device_type_three_lines_below_its_index_is_read() -> None:
    # REV64 #8: lines[i+1:i+_NEAR] looked 2 lines ahead though _NEAR (3) is the documented reach
    text = "Device Index:                                1\n  Device Name:     gfx90a\n  Device Numa Node:   0\n"
    assert rbt_agents.index_lines(_lines(text + "  Device Type:                 GPU\n")) == {1}
    assert rbt_agents.index_lines(_lines(text + "  Device BDF:   c1:00.0\n  Device Type:   GPU\n")) == set()


def test_resume_search_tries_its_pattern_only_on_lines_with_a_sleep_word(monkeypatch: pytest.MonkeyPatch) -> None:
    # REV64 #8: _SLEPT ran on every line of a text with a CUDA error
    counted = _Counted(nvidia_stack._SLEPT)
    monkeypatch.setattr(nvidia_stack, "_SLEPT", counted)
    text = "epoch 3 loss 0.41\n" * 50 + "PM: suspend entry (deep)\nPM: suspend exit\nRuntimeError: CUDA error: unknown\n"
    assert nvidia_stack._resumed_at(_lines(text)) == 52
    assert counted.tried == 1


@pytest.mark.parametrize(
    "line",
    [
        "ERROR:root:ROCm SMI returned 8 (the expected value is 0)",
        "rsmi_init() failed: RSMI_STATUS_INIT_ERROR",
        "amdsmi.amdsmi_exception.AmdSmiLibraryException: Error code: 18 | AMDSMI_STATUS_INIT_ERROR - An error occurred "
        "when initializing internal data structures",
        "amdsmi_init failed: AMDSMI_STATUS_INIT_ERROR",
        "ERROR:root:Unable to initialize amdsmi",
    ],
)
def test_an_smi_librarys_init_error_is_one_verdict_for_rocm_smi_and_amd_smi(tmp_path: Path, line: str) -> None:
    # REV64 #6: RSMI_STATUS_INIT_ERROR was none (R7B), AMDSMI_STATUS_INIT_ERROR a driver warn: both the library failing
    # to start, which names neither of its usual causes (driver not loaded, no access: each judged by its own words)
    code, answer = doctor_text(tmp_path, line + "\n")
    assert code == 0 and not answer["findings"]
