"""Issue 46 (XR1): a file holding a GPU or NIC tool's own words, however cut, is read for what it holds, never
refused as unreadable: nvidia-smi's table cut after a row's index or its banner alone (the driver into inventory),
ibstat/ibv_devinfo port fields quoted alone, npu-smi's values in a program's dict, nvidia-smi -r's outcome lines
(captures/gpu_software.py); hand-typed AER lines read as the kernel's (captures/fallback.py). A file with no tool's
words stays refused."""

from __future__ import annotations

import pytest

from gpuvet.captures.gpu_software import KIND, UnreadGpuText
from gpuvet.captures.read import parse_text
from gpuvet.errors import CaptureError

# written for this test in each tool's own line form
_TABLE_CUT = ("$ nvidia-smi\nWed Mar  4 08:00:00 2026\n+----------------------------------------------+\n"
              "| NVIDIA-SMI 535.54       Driver Version: 535.54       CUDA Version: 12.2 |\n"
              "|-------------------------+-----------------+-----------------+\n"
              "| GPU  Name   Persistence-M| Bus-Id   Disp.A | Volatile Uncorr. ECC |\n"
              "|=========================+=================+=================|\n|   0\n")
_BANNER = "`\n# nvidia-smi\n+------------------+\n| NVIDIA-SMI 390.12     Driver Version: 390.12   |\n|-\n"
_IBSTAT = ("The port looked down to the dashboard; on the host:\n```\n  State: Active\n  Physical state: LinkUp\n"
           "  Rate: 200\n  RDMA state: PORT_ACTIVE\n```\n")
_NPU = ("2026-01-02T10:00:00+08:00 - agent.npu - DEBUG - chip info: {'Chip Name': '910B3', 'NPU ID': '4', "
        "'HBM Capacity(MB)': '65536', 'PCIe Bus Info': '0000:81:00.0', 'Temperature(C)': '41'}\n")
_RESET = ("```\nThe following GPUs could not be reset:\n  GPU 00000000:3B:00.0: In use by another client\n```\n"
          "then after stopping the exporter:\n```\nGPU 00000000:3B:00.0 was successfully reset.\n```\n")


def _note(text: str) -> tuple[str, str]:
    fc = parse_text(text, "paste.txt")
    assert fc.kinds == [KIND] and isinstance(fc.kernel, UnreadGpuText)
    return fc.kernel.source, " ".join(fc.notes)


def test_an_nvidia_smi_table_cut_after_a_rows_index_or_its_banner_alone_is_read_with_its_driver() -> None:
    for text, driver in ((_TABLE_CUT, "535.54"), (_BANNER, "390.12")):
        fc = parse_text(text, "smi.txt")
        assert fc.kinds == [KIND] and fc.driver_ids.banner[0][0] == driver


@pytest.mark.parametrize(("text", "source", "said"), [
    (_IBSTAT, "ibstat/ibv_devinfo", "port states: State Active, Physical state LinkUp, RDMA state PORT_ACTIVE"),
    (_NPU, "npu-smi", "Chip Name 910B3, PCIe Bus Info 0000:81:00.0"),
    (_RESET, "nvidia-smi", "00000000:3B:00.0 not reset (In use by another client), 00000000:3B:00.0 reset")])
def test_a_tools_fragments_are_read_for_what_they_say(text: str, source: str, said: str) -> None:
    got, notes = _note(text)
    assert got == source and said in notes


def test_hand_typed_aer_lines_are_read_as_the_kernels() -> None:
    typed = ("pcieport 0000:00:1d:0: PCIe Bus Error: sevirity=Corrected, type=Physical Layer, id=00e8(Receiver ID)\n"
             "pcieport 0000:00:1d:0: device [8086:a118] error status/mask=00000001/00002000\n"
             "pcieport 0000:00:1d:0: [ 0] RxErr\n")
    fc = parse_text(typed, "aer.txt")
    d = fc.aer.devices["0000:00:1D.0"]
    assert d.correctable == 1 and "RxErr" in " ".join(d.kinds)
    assert any("hand-typed AER" in n for n in fc.notes)


@pytest.mark.parametrize("text", ["The state of the cluster was fine.\nNothing else to add.\n",
                                  "| GPU | Temp |\n|---|---|\n| 0 | 45 |\n",
                                  "Physical state of the shipment: delivered\nmisc: 0000:00:1c:0 ok\n"])
def test_a_file_with_no_tools_words_stays_refused(text: str) -> None:
    with pytest.raises(CaptureError):
        parse_text(text, "none.txt")


def test_a_fragment_of_nvidia_smi_xml_pasted_html_escaped_is_said_not_refused() -> None:
    escaped = ("&nbsp; &nbsp; <encoder_stats&gt;\n&nbsp; &nbsp; &nbsp; <session_count&gt;0</session_count&gt;\n"
               "&nbsp; &nbsp; </encoder_stats&gt;\n")
    assert _note(escaped)[0] == "nvidia-smi"


def test_npu_smi_values_in_a_programs_dict_list_the_chip() -> None:
    module = parse_text(_NPU, "npu.txt").npu.modules[0]
    assert (module.name, module.bus_id, module.memory_mib) == ("Ascend 910B3", "0000:81:00.0", 65536.0)
