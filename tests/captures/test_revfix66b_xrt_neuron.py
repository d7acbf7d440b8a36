"""Issue 46 (REVFIX66b-A, review findings 6, 7 and 8 on xrt_tools and neuron_status), on lines in the tools' own
words: old-form xbutil validate's 'Validating card[N]' is card N's (its bus from the flash scan's order, never another
card's); the Neuron device is the log's ndN even after a NeuronCore (ncN) is named; every line is gated by a cheap
substring before the patterns (ten times the ordinary lines under a whole-text marker cost about ten times the
time: linear)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from gpuvet.captures import neuron_status, xrt_tools
from gpuvet.captures.records import ListedParse
from gpuvet.captures.text import Line
from tests.support.helpers import capture_findings

WARN = "module_reported_warning"


def test_the_neuron_device_is_the_nd_index_even_after_a_neuroncore() -> None:
    text = (
        "2024-Jun-01 13:16:27.706192 273:485 INFO NRT:nrt_init  loading model on nc3\n"
        "2024-Jun-01 13:16:28.000001 273:485 ERROR NRT:nrt_execute  nrt_execute status=5 on nd1\n"
    )
    out = ListedParse()
    neuron_status.read([Line(i + 1, t) for i, t in enumerate(text.splitlines())], out)
    assert [m.label for m in out.modules] == ["Neuron device 1"]


def test_old_validate_second_card_is_its_own_bus(tmp_path: Path) -> None:
    text = (
        "INFO: Found 2 cards\nINFO: Validating card[0]: xilinx_u280_xdma_201910_1\n"
        "INFO: == verify kernel test PASSED\nINFO: Validating card[1]: xilinx_u280_xdma_201910_1\n"
        "ERROR: == verify kernel test FAILED\n"
        "Card [0000:1a:00.0]\n\tShell running on FPGA:\n\t\txilinx_u280_xdma_201910_1,[ID=0x5d1b9328],[SC=4.2.0]\n"
        "Card [0000:3b:00.0]\n\tShell running on FPGA:\n\t\txilinx_u280_xdma_201910_1,[ID=0x5d1b9328],[SC=4.2.0]\n"
    )
    assert capture_findings(tmp_path, text) == {(WARN, "XRT 0000:3B:00.0 (0000:3B:00.0)"): "warn"}


def test_old_validate_card_past_the_flash_scan_is_card_n_not_the_first_bus(tmp_path: Path) -> None:
    text = (
        "INFO: Found 2 cards\nINFO: Validating card[0]: xilinx_u280_xdma_201910_1\n"
        "INFO: == verify kernel test PASSED\nINFO: Validating card[1]: xilinx_u280_xdma_201910_1\n"
        "ERROR: == verify kernel test FAILED\n"
        "Card [0000:1a:00.0]\n\tShell running on FPGA:\n\t\txilinx_u280_xdma_201910_1,[ID=0x5d1b9328],[SC=4.2.0]\n"
    )
    found = capture_findings(tmp_path, text)
    assert len(found) == 1 and "card 1" in next(iter(found))[1] and "1A:00.0" not in next(iter(found))[1]


def _ordinary(n: int) -> list[Line]:
    first = "kubelet I0101 reconcile pod default/web-0 container app is not ready: readiness probe failed"
    return [Line(i + 1, first if i == 0 else f"kubelet I0101 some ordinary line number {i} about mounts") for i in range(n)]


def _best_of_3(read: Callable[[list[Line], ListedParse], object], lines: list[Line]) -> float:
    spent = []
    for _ in range(3):
        t = time.process_time()
        read(lines, ListedParse())
        spent.append(time.process_time() - t)
    return min(spent)


def test_ordinary_lines_under_a_common_marker_are_gated_cheaply() -> None:
    """Ten times the lines cost about ten times the time (linear: each line is gated by a substring), measured as a
    ratio in this run, never against the clock; a read that rescans the text per line grows a hundredfold."""
    small, large = _ordinary(20_000), _ordinary(200_000)
    for read in (xrt_tools.examine, xrt_tools.validate, xrt_tools.amdxdna, neuron_status.read):
        out = ListedParse()
        read(large, out)
        assert not out.modules, read
        assert _best_of_3(read, large) < 30 * max(_best_of_3(read, small), 1e-4), read


def test_xrt_markers_are_words_only_xrt_prints() -> None:
    from gpuvet.captures import accel_marks

    common = (
        "kubelet I0101 container app is not ready: readiness probe failed",
        "INFO: Found total 2 card(s) in the chassis",
        "crw-rw---- 1 root render 261, 0 Jun  1 /dev/accel/accel0",
        "Test Status: done",
    )
    for line in common:
        assert not any(w in line for w in accel_marks.XRT), line
    xrt = (
        "INFO: Found total 1 card(s), 0 are usable",
        "ERROR: Card [0] is not ready",
        "[ERROR] NPU firmware version on /dev/accel/accel0 is incompatible",
    )
    for line in xrt:
        assert any(w in line for w in accel_marks.XRT), line
