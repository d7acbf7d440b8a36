"""AMD listings in the forms the fresh batch met, generalised (issue 46): rocm-smi's default table in its
2017, ROCm 5 and ROCm 6 layouts, a --json cut short or broken inside a string, a module block that names no
bus id (amd-smi metric) joined with one that does, and an lspci device line pasted after prose. The inputs
are small constructed ones, written in each tool's layout (named as such)."""

from __future__ import annotations

from gpuvet.captures import amd_smi, links
from gpuvet.captures.json_cut import salvage
from gpuvet.captures.records import ListedParse
from gpuvet.captures.text import clean

# constructed: rocm-smi (ROCm 5.x) with no option
ROCM5_TABLE = """\
======================= ROCm System Management Interface =======================
================================= Concise Info =================================
GPU  Temp (DieEdge)  AvgPwr  SCLK    MCLK     Fan  Perf  PwrCap  VRAM%  GPU%
0    34.0c           35.0W   800Mhz  1600Mhz  0%   auto  300.0W    0%   0%
1    N/A             36.0W   800Mhz  1600Mhz  0%   auto  300.0W    0%   0%
================================================================================
============================= End of ROCm SMI Log ==============================
"""

# constructed: rocm-smi (ROCm 6.x) with no option: two header lines, cells that hold spaces
ROCM6_TABLE = """\
============================================ ROCm System Management Interface ============================================
====================================================== Concise Info ======================================================
Device  Node  IDs              Temp    Power  Partitions          SCLK    MCLK     Fan  Perf  PwrCap  VRAM%  GPU%
              (DID,     GUID)  (Edge)  (Avg)  (Mem, Compute, ID)
==========================================================================================================================
0       2     0x740f,   33309  35.0°C  41.0W  N/A, N/A, 0         800Mhz  1600Mhz  0%   auto  300.0W  0%     0%
1       3     0x740f,   52430  37.0°C  43.0W  N/A, N/A, 0         800Mhz  1600Mhz  0%   auto  300.0W  0%     0%
==========================================================================================================================
================================================== End of ROCm SMI Log ===================================================
"""

# constructed: rocm-smi -a lines of the same two modules (the bus ids the table lacks)
ROCM_A = """\
GPU[0]          : PCI Bus: 0000:C1:00.0
GPU[1]          : PCI Bus: 0000:C5:00.0
"""


def _parse(text: str) -> ListedParse:
    return amd_smi.parse(clean(text).lines)


def test_rocm_smi_default_table_of_rocm5_reads_one_module_a_row_and_leaves_na_unknown() -> None:
    out = _parse(ROCM5_TABLE)
    assert [(m.label, m.temperature_c) for m in out.modules] == [("GPU[0]", 34.0), ("GPU[1]", None)]
    assert "rocm-smi (default table)" in out.kinds
    assert out.claimed == set(range(1, 8))  # banners, header, rows: nothing skipped


def test_rocm_smi_default_table_of_rocm6_reads_past_its_units_line_and_names_the_device_ids() -> None:
    out = _parse(ROCM6_TABLE)
    assert [(m.label, m.temperature_c) for m in out.modules] == [("GPU[0]", 35.0), ("GPU[1]", 37.0)]
    assert any("device ids GPU[0] 0x740f, GPU[1] 0x740f" in n for n in out.notes)
    assert out.claimed == set(range(1, 10))


def test_the_table_and_rocm_smi_a_of_one_listing_are_one_module_each() -> None:
    out = _parse(ROCM_A + ROCM5_TABLE)
    assert [(m.label, m.bus_id, m.temperature_c) for m in out.modules] == [
        ("GPU[0]", "0000:C1:00.0", 34.0), ("GPU[1]", "0000:C5:00.0", None)]


def test_amd_smi_metric_without_a_bdf_joins_the_static_block_that_names_it() -> None:
    metric = "GPU: 0\n    POWER:\n        SOCKET_POWER: 20 W\n        THROTTLE_STATUS: UNTHROTTLED\n"
    static = "GPU: 0\n    BUS:\n        BDF: 0000:65:00.0\n"
    for text in (metric + "\n" + static, static + "\n" + metric):
        out = _parse(text)
        assert [(m.label, m.bus_id) for m in out.modules] == [("GPU 0", "0000:65:00.0")], text


def test_amd_smi_metric_list_wrapped_over_lines_is_one_field() -> None:
    out = _parse("GPU: 0\n    USAGE:\n        JPEG_ACTIVITY: [N/A, N/A,\n            N/A, N/A]\n"
                 "        GFX_ACTIVITY: 0 %\n")
    assert len(out.modules) == 1 and out.claimed == {1, 2, 3, 4, 5}


def test_amd_smi_json_cut_inside_its_second_gpu_reads_the_first_and_says_so() -> None:
    text = ('[\n  {\n    "gpu": 0,\n    "bus": {"bdf": "0000:0c:00.0"}\n  },\n  {\n    "gpu": 1,\n'
            '    "bus": {"bdf": "0000:22:00.0"},\n    "asic": {"market_na')
    out = _parse(text)
    assert [(m.label, m.bus_id) for m in out.modules] == [("GPU 0", "0000:0C:00.0"), ("GPU 1", "0000:22:00.0")]
    assert any("amd-smi --json: the JSON ends at line 8" in n for n in out.notes), out.notes


def test_salvage_keeps_only_whole_fields_and_refuses_a_whole_or_broken_document() -> None:
    cut = salvage('{"card0": {"A": "1", "B": "2", "C": "3')
    assert cut is not None and cut.text == '{"card0": {"A": "1", "B": "2"}}' and not cut.broken
    broken = salvage('{"card0": {"A": "1", "B": "x\ny", "C": "3"}}')
    assert broken is not None and broken.text == '{"card0": {"A": "1"}}' and broken.broken
    assert salvage('{"card0": {"A": "1"}}') is None  # whole: nothing to salvage
    assert salvage('{"card0": {"A": "1"]}') is None  # malformed before any cut
    assert salvage('{"card0": {"A": "1') is None  # no complete field


def test_lspci_device_line_after_prose_is_read_from_its_bus_id() -> None:
    text = ("my card under load 62:00.0 VGA compatible controller: NVIDIA Corporation AD102 [GeForce RTX 4090]\n"
            "\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM L1, Exit Latency L1 <64us\n"
            "\tLnkSta:\tSpeed 16GT/s, Width x16\n")
    out = links.parse_lspci(clean(text).lines)
    assert [(lk.device, lk.cap_speed_gts, lk.speed_gts) for lk in out.links] == [("62:00.0", 16.0, 16.0)]
    assert any("follows other words on the line" in n for n in out.notes)
    assert links.parse_lspci(clean("we saw 62:00.0 twice today\n").lines).links == []  # no class: not a device line


# constructed: rocm-smi (ROCm 6.x, the '[Model : Revision]' layout) with no option: each row's name on the line
# under it, cut at 20 characters; a module without a marketing name shows its device id there
ROCM6_MODEL_TABLE = """\
====================================== ROCm System Management Interface ======================================
================================================ Concise Info ================================================
Device  [Model : Revision]    Temp    Power  Partitions      SCLK    MCLK     Fan  Perf  PwrCap  VRAM%  GPU%
        Name (20 chars)       (Edge)  (Avg)  (Mem, Compute)
==============================================================================================================
0       [0x74a1 : 0x00]       41.0°C  N/A    NPS1, SPX       131Mhz  900Mhz   0%   auto  750.0W    0%   0%
        AMD Instinct MI300X
1       [0x0b0c : 0x00]       43.0°C  89.0W  N/A, N/A        800Mhz  1600Mhz  0%   auto  500.0W    0%   0%
        AMD INSTINCT MI200 (
2       [0x7901 : 0xc8]       30.0°C  10.0W  N/A, N/A        0Mhz    96Mhz    0%   auto  327.0W    0%   0%
        0x744c
==============================================================================================================
============================================ End of ROCm SMI Log =============================================
"""


def test_rocm_smi_default_table_of_rocm6_model_layout_reads_each_rows_name_line() -> None:
    out = _parse(ROCM6_MODEL_TABLE)
    assert [(m.label, m.name, m.temperature_c) for m in out.modules] == [
        ("GPU[0]", "AMD Instinct MI300X", 41.0), ("GPU[1]", "AMD INSTINCT MI200 (", 43.0), ("GPU[2]", None, 30.0)]
    assert out.claimed == set(range(1, 14))
    assert any("the name of GPU[1] fills its 20 characters" in n for n in out.notes), out.notes


def test_rocm_smi_showmetrics_current_link_is_read_in_either_speed_unit_and_its_not_supported_stays_unread() -> None:
    # --showmetrics' gpu_metrics table: speed in 0.1 GT/s (160: 16 GT/s, gen 4), a later spelling in GT/s
    text = ("====================== GPU Metrics ======================\n"
            "GPU[0]\t\t: pcie_link_width (Lanes): 16\nGPU[0]\t\t: pcie_link_speed (0.1 GT/s): 160\n"
            "GPU[1]\t\t: pcie_link_width (Lanes): 8\nGPU[1]\t\t: pcie_link_speed (GT/s): 32\n"
            "GPU[2]\t\t: pcie_link_width (Lanes): 65535\nGPU[2]\t\t: pcie_link_speed (0.1 GT/s): 65535\n")
    got = [(m.pcie_gen_current, m.pcie_width_current) for m in _parse(text).modules]
    assert got == [(4, 16), (5, 8), (None, None)]
    as_json = '{"card0": {"pcie_link_width (Lanes)": "4", "pcie_link_speed (0.1 GT/s)": "80"}}\n'
    assert [(m.pcie_gen_current, m.pcie_width_current) for m in _parse(as_json).modules] == [(3, 4)]
