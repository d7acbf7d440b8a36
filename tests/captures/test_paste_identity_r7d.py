"""Issue 46 (R7D), never merge, never split: one paste of several machines' shell prompts judged host by host (an
lspci of one host never makes another host's nvidia-smi "lack" a module), and one module printed by several lines
or tools kept one module (a -q block whose section names lost their indent, hashcat -I's device cut before its
name, xpu-smi's name wrapped onto its next row, nvidia-smi's '...' cut). Lines written in the tools' own formats."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures.read import parse_text
from tests.support.helpers import capture_findings, capture_json, doctor_text, smi_table

_LSPCI = """05:00.0 3D controller: NVIDIA Corporation GA100 [A100 SXM4 80GB] (rev a1)
        Subsystem: NVIDIA Corporation Device 1463
        Control: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR- FastB2B- DisINTx+
                LnkCap: Port #0, Speed 16GT/s, Width x16, ASPM not supported
                LnkSta: Speed 16GT/s (ok), Width x16 (ok)
        Kernel driver in use: nvidia
"""


def _two(first: str, second: str) -> str:
    return f"{first} nvidia-smi\n{smi_table(('NVIDIA H100 80GB HBM3', 35), ('NVIDIA H100 80GB HBM3', 36))}\n" \
           f"{second} lspci -vvd 10de:\n{_LSPCI}"


def test_an_lspci_under_another_hosts_prompt_never_makes_this_hosts_listing_lack_a_module(tmp_path: Path) -> None:
    for a, b in (("alice@gpu-a:~$", "root@gpu-b:~#"), ("[alice@node07 ~]$", "[root@node08 ~]#"),
                 ("(venv) alice@h100-1:~/x$", "root@a100-9:/#")):
        found = capture_findings(tmp_path, _two(a, b))
        assert not [k for k, sev in found.items() if sev in ("warn", "critical")], (a, found)
    notes = capture_json(tmp_path, _two("alice@gpu-a:~$", "root@gpu-b:~#"))["notes"]
    assert any("0000:05:00.0" in n and "host gpu-b" in n and "host gpu-a's" in n for n in notes)  # type: ignore[union-attr]


def test_one_hosts_prompts_still_cross_check_its_lspci_with_its_driver_listing(tmp_path: Path) -> None:
    found = capture_findings(tmp_path, _two("alice@gpu-a:~$", "root@gpu-a:~#"))
    assert found.get(("module_missing", "0000:05:00.0")) == "critical"
    assert capture_findings(tmp_path, _two("$", "#")).get(("module_missing", "0000:05:00.0")) == "critical"


def test_pdsh_prefixes_name_the_hosts_as_prompts_do(tmp_path: Path) -> None:
    table = smi_table(("NVIDIA H100 80GB HBM3", 35), ("NVIDIA H100 80GB HBM3", 36))
    text = "".join(f"gpu-node-8: {ln}\n" for ln in table.splitlines())
    text += "".join(f"gpu-node-9: {ln}\n" for ln in _LSPCI.splitlines())
    found = capture_findings(tmp_path, text)
    assert not [k for k, sev in found.items() if sev in ("warn", "critical")], found


def test_two_hosts_listing_one_bus_id_is_said_two_machines_never_merged_silently() -> None:
    one = smi_table(("NVIDIA H100 80GB HBM3", 35), ("NVIDIA H100 80GB HBM3", 36))
    fc = parse_text(f"alice@gpu-a:~$ nvidia-smi\n{one}\nbob@gpu-b:~$ nvidia-smi\n{one}", "two.txt")
    assert fc.smi is not None and any("hosts gpu-a, gpu-b" in n and "0000:19:00.0" in n for n in fc.smi.notes)
    assert not any("hosts" in n for n in parse_text(f"alice@gpu-a:~$ nvidia-smi\n{one}", "one.txt").smi.notes)  # type: ignore[union-attr]


# nvidia-smi -q's block pasted from below its 'GPU 00000000:86:00.0' line, the paste's indent lost: its section names
# ('Driver Model', 'Inforom Version', 'IBMNPU' …) print flush left
_Q = """Persistence Mode                : Disabled
Driver Model
    Current                     : N/A
    Pending                     : N/A
Serial Number                   : N/A
GPU UUID                        : GPU-01587ddd-0000-67aa-a07b-c5ec7105bd61
Minor Number                    : 2
Inforom Version
    Image Version               : G001.0000.02.04
    OEM Object                  : 1.1
GPU Operation Mode
    Current                     : N/A
    Pending                     : N/A
GPU Virtualization Mode
    Virtualization mode         : None
IBMNPU
    Relaxed Ordering Mode       : N/A
PCI
    Bus                         : 0x86
    Bus Id                      : 00000000:86:00.0
"""


def test_a_q_block_whose_section_names_lost_their_indent_is_one_module() -> None:
    fc = parse_text(_Q, "q.txt")
    assert fc.smi is not None and [m.bus_id for m in fc.smi.modules] == ["0000:86:00.0"]
    assert fc.smi.modules[0].fields["GPU UUID"].startswith("GPU-01587ddd")


_HASHCAT = """OpenCL Info:

Platform ID #1
  Vendor  : Advanced Micro Devices, Inc.
  Name    : AMD Accelerated Parallel Processing
  Version : OpenCL 2.0 AMD-APP (1800.8)
""" + "".join(f"""
  Device ID #{i}
    Type           : GPU
    Vendor ID      : 1
    Vendor         : Advanced Micro Devices, Inc.
    Name           : Cypress
    Memory         : 512/1024 MB allocatable
    Driver Version : 1800.8 (VM)
""" for i in (1, 2)) + """
  Device ID #3
    Type           : GPU
    Vendor ID      : 1
"""


def test_hashcat_i_lists_every_device_block_one_module_each_a_cut_name_said_cut(tmp_path: Path) -> None:
    data = capture_json(tmp_path, _HASHCAT, "inventory")
    assert [m["model"] for m in data["modules"]] == ["Cypress", "Cypress", "unknown"]  # type: ignore[index,union-attr]
    code, answer = doctor_text(tmp_path, _HASHCAT)
    assert code == 0 and any("lists 3 GPU(s): Cypress, Cypress, #3 (its name cut)" in n for n in answer["notes"])


_XPU = """|            Intel XPU-SMI v2.0    Driver: 64290D8E349F41730D761F4    Level Zero: 1.28.6             |
+----------------------------------------------+----------------------------+------------------------+
| GPU  Name                    Persistence-M   | Bus-Id            Disp.A   |   Volatile Uncorr. ECC |
| Fan              Temp  Pwr:Usage/Cap         | Memory-Usage               |   GPU-Util  Compute M. |
+----------------------------------------------+----------------------------+------------------------+
|   0  Intel(R) Arc(TM) Pro B  Off             | 0000:0e:00.0      Off      |               Disabled |
|      60 Graphics                             |                            |                        |
| N/A               37C  52W / 200W            | 24013MiB / 24480MiB        |      11%       Default |
+----------------------------------------------+----------------------------+------------------------+
|   1  Intel(R) Arc(TM) Pro B  Off             | 0000:34:00.0      Off      |               Disabled |
"""


def test_xpu_smi_name_wrapped_onto_its_next_row_is_read_whole_and_a_cut_one_said_cut() -> None:
    fc = parse_text(_XPU, "xpu.txt")
    first, second = fc.xpu.modules
    assert first.name == "Intel(R) Arc(TM) Pro B60 Graphics" and first.memory_mib == 24480 and first.power_limit_w == 200
    assert second.name == "Intel(R) Arc(TM) Pro B"
    assert any("GPU 1" in n and "cut short" in n for n in fc.xpu.notes)


def test_nvidia_smi_table_name_cut_with_dots_is_said_cut_never_completed() -> None:
    fc = parse_text(smi_table(("Tesla P100-SXM2...", 30)), "t.txt")
    assert fc.smi is not None and fc.smi.modules[0].product == "Tesla P100-SXM2..."
    assert any("'Tesla P100-SXM2...' is cut by nvidia-smi" in n for n in fc.smi.notes)


def test_fresh_an_neuropoly_two_machines_docs_page_has_no_invented_missing_module(tmp_path: Path) -> None:
    path = Path(__file__).parents[1] / "data/captures/fresh_an/nvidia-smi_lspci_neuropoly_p100_a6000_docs.txt"
    code, answer = doctor_text(tmp_path, path.read_text())
    assert code == 0 and not [f for f in answer["findings"] if f["severity"] in ("warn", "critical")]
