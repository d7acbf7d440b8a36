"""nvidia-smi fields of newer drivers read for what they are: -q's T.Limit temperatures are margins to the
limit (never temperatures), and the PCIe generation's host and device maxima of -q and --query-gpu set the
top generation a link can train to. Written in nvidia-smi's formats; bus ids and figures are made up."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures.read import read
from gpuvet.captures.smi_text import health

Q = """==============NVSMI LOG==============

Driver Version                            : 580.65.06
CUDA Version                              : 13.0

Attached GPUs                             : 1
GPU 00000000:C1:00.0
    Product Name                          : NVIDIA H200
    PCI
        GPU Link Info
            PCIe Generation
                Max                       : 4
                Current                   : 4
                Device Current            : 4
                Device Max                : 5
                Host Max                  : 4
            Link Width
                Max                       : 16x
                Current                   : 16x
    Temperature
        GPU Current Temp                  : 33 C
        GPU T.Limit Temp                  : 52 C
        GPU Shutdown T.Limit Temp         : -8 C
        GPU Slowdown T.Limit Temp         : -2 C
        GPU Max Operating T.Limit Temp    : 0 C
        GPU Target Temperature            : N/A
    Utilization
        Gpu                               : 100 %
"""


def test_tlimit_fields_are_margins_and_the_link_top_is_the_hosts(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_text(Q)
    capture = read(str(path))
    assert capture.smi is not None
    h = health(capture.smi.modules[0])
    assert h.temperature_c == 33 and h.temperature_slowdown_c is None  # no margin read as a threshold
    assert (h.margin_c, h.slowdown_margin_c, h.max_operating_margin_c) == (52, -2, 0)
    assert (h.pcie_gen, h.pcie_gen_max, h.pcie_gen_link_max, h.utilization_pct) == (4, 5, 4, 100)


def test_query_gpu_host_and_device_generations(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text("pci.bus_id, pcie.link.gen.gpucurrent, pcie.link.gen.gpumax, pcie.link.gen.hostmax, "
                    "utilization.gpu [%]\n00000000:C1:00.0, 3, 5, 4, 88 %\n")
    capture = read(str(path))
    assert capture.smi is not None
    h = health(capture.smi.modules[0])
    assert (h.pcie_gen, h.pcie_gen_max, h.pcie_gen_link_max, h.utilization_pct) == (3, 5, 4, 88)


HEADER_SECTION = """==============NVSMI LOG==============

Timestamp                                 : Mon Mar  2 09:41:12 2026
Driver Version                            : 580.95.05
CUDA Version                              : 13.0
vGPU Driver Capability
        Heterogenous Multi-vGPU           : Supported

Attached GPUs                             : 1
GPU 00000000:17:00.0
    Product Name                          : NVIDIA L40S
    Performance State                     : P0
"""


def test_a_section_of_the_logs_header_is_the_nodes_not_a_module(tmp_path: Path) -> None:
    """Newer drivers print 'vGPU Driver Capability' among the top fields: its fields make no unnamed GPU."""
    path = tmp_path / "q.txt"
    path.write_text(HEADER_SECTION)
    capture = read(str(path))
    assert capture.smi is not None
    assert [m.bus_id for m in capture.smi.modules] == ["0000:17:00.0"]
