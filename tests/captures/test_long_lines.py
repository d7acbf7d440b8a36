"""Review 55 (F5, F10-F13): one long line in a tool's real output is read in work linear in its length. Each case
was quadratic (or recursed once per mark): a 200 KB line took minutes. The answer is asserted, never the time; the
timeout is a guard only (each reads in well under a second when linear)."""

from __future__ import annotations

import pytest

from gpuvet.captures.read import parse_text
from gpuvet.errors import CaptureError

LONG = 200_000
SMI_L = "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-1)\n"


@pytest.mark.timeout(30)
@pytest.mark.parametrize("cut", [" " * LONG + "...x", "... " + " " * LONG + "x", "[" + " " * LONG + "snip x",
                                 "-- " + " " * LONG + "... x --"])
def test_a_line_of_blanks_beside_a_cut_mark(cut: str) -> None:
    """F11: text._ELISION on a line of blanks around dots or 'snip' that is no cut after all."""
    fc = parse_text(SMI_L + cut + "\n", "smi_l.txt")
    assert [m.product for m in fc.smi.modules] == ["NVIDIA A100-SXM4-40GB"]


@pytest.mark.timeout(30)
def test_an_xpu_smi_cell_of_one_long_word() -> None:
    """F12: xpu_smi._MIB on a 'Memory Physical Size' cell of one long word: no size read, the module still is."""
    text = ("+-----------+--------------------------------+\n| Device ID | Device Information |\n"
            "+-----------+--------------------------------+\n| 0 | Device Name: Intel(R) Data Center GPU Max 1550 |\n"
            "|   | Memory Physical Size: " + "a" * LONG + " |\n+-----------+--------------------------------+\n")
    modules = parse_text(text, "xpu.txt").xpu.modules
    assert [(m.name, m.memory_mib) for m in modules] == [("Intel(R) Data Center GPU Max 1550", None)]


@pytest.mark.timeout(30)
def test_an_lspci_nn_line_of_blanks() -> None:
    """F12: lspci_list._NUMERIC on a class line whose device words are a long run of blanks."""
    text = ("18:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H100 SXM5 80GB] [10de:2330] (rev a1)\n"
            "3b:00.0 3D controller [0302]: x" + " " * LONG + "y\n")
    assert [g.bus_id for g in parse_text(text, "lspci.txt").lspci.listed] == ["18:00.0"]


ROCM = """======================= ROCm System Management Interface =======================
================================= Concise Info =================================
GPU  Temp (DieEdge)  AvgPwr  SCLK    MCLK     Fan  Perf  PwrCap  VRAM%  GPU%
0    35.0c           24.0W   852Mhz  167Mhz   0%   auto  225.0W    0%   0%
1    36.0c           25.0W   852Mhz  167Mhz   0%   auto  225.0W    0%   0%
================================================================================
============================= End of ROCm SMI Log ==============================
"""


@pytest.mark.timeout(30)
@pytest.mark.parametrize("rule", ["=" * LONG + "x", "=" * LONG + " " * LONG + "x"])
def test_a_rocm_smi_table_then_a_long_rule(rule: str) -> None:
    """F10: rocm_table._FRAME on a long line of '=' that is no frame."""
    modules = parse_text(ROCM + rule + "\n", "rocm.txt").amd.modules
    assert [(m.label, m.temperature_c) for m in modules] == [("GPU[0]", 35.0), ("GPU[1]", 36.0)]


DCGM_HEAD = ("+---------------------------+------------------------------------------------+\n"
             "| Diagnostic                | Result                                         |\n"
             "+===========================+================================================+\n")


@pytest.mark.timeout(30)
@pytest.mark.parametrize("row", ["| " * (LONG // 2) + "x", "|" + " " * LONG + "x", "| a |" + " " * LONG + "x"])
def test_a_dcgmi_diag_box_with_a_long_row(row: str) -> None:
    """F13: dcgm._ROW on a line of bars and blanks that is no two-cell row; the rows after it are read."""
    fc = parse_text(DCGM_HEAD + row + "\n| Deployment | Pass |\n", "diag.txt")
    assert [(r.test, r.status) for r in fc.dcgm.results] == [("Deployment", "pass")]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("row", ["| " * (LONG // 2) + "x", "| a |" + " " * LONG + "x"])
def test_a_dcgmi_health_box_with_a_long_row(row: str) -> None:
    """F13: dcgm_health._ROW, the same shape in `dcgmi health -c`."""
    text = ("+---------------------------+----------------------------------------------------------+\n"
            "| Health Monitor Report                                                                |\n"
            "+===========================+==========================================================+\n"
            "| Overall Health            | Healthy                                                  |\n" + row + "\n")
    assert parse_text(text, "health.txt").dcgm_health.overall == "Healthy"


@pytest.mark.timeout(30)
@pytest.mark.parametrize("n", [600, 30_000])
def test_a_line_nested_in_marks_is_peeled_a_bounded_number_of_times(n: int) -> None:
    """F5: decorations._marked_up on a line in hundreds of nested '**' and '`' marks: no RecursionError, a clear
    refusal; a line in two marks (a post's **`…`**) is still read."""
    with pytest.raises(CaptureError, match="nothing in it is output gpuvet can read"):
        parse_text("**`" * n + "x" + "`**" * n + "\n", "post.txt")
    fc = parse_text("**`GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-1)`**\n", "post.txt")
    assert [m.product for m in fc.smi.modules] == ["NVIDIA A100-SXM4-40GB"]

