"""Batch Q's refusals of healthy files as a class (issue 46, QX2): a GPU tool's own output is read, never refused
with exit 2 — NCCL's topology dump, a rocminfo listing of CPU agents alone, rocm-smi's 'not supported' ERROR
lines and its --json 'No JSON data to report', a tool's banner over lines no reader knows; and the inventory rows
of the same batch (a rocminfo grep echoed before the listing is one GPU; nccl-tests device lines whose host the
poster blanked still list the modules). Written in each tool's own shapes (NCCL's <system>/<cpu>/<pci>/<gpu>/
<nvlink> elements, rocminfo's agent fields, rocm-smi's ERROR lines); bus ids, names and counts made up."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.helpers import run


def _both(tmp_path: Path, text: str) -> tuple[tuple[int, dict[str, object]], tuple[int, dict[str, object]]]:
    """doctor's and inventory's exit code and --json answer on one capture written from ``text``."""
    path = tmp_path / "capture.txt"
    path.write_text(text)
    answers = []
    for cmd in ("doctor", "inventory"):
        code, out, err = run([cmd, "--from", str(path), "--json"])
        assert "Traceback" not in err
        answers.append((code, json.loads(out) if out.strip() else {}))
    return answers[0], answers[1]


def _notes(answer: dict[str, object]) -> str:
    notes = answer.get("notes", [])
    assert isinstance(notes, list)
    return "\n".join(str(n) for n in notes)


def _modules(answer: dict[str, object]) -> list[tuple[str, str | None]]:
    modules = answer.get("modules", [])
    assert isinstance(modules, list)
    return [(m["model"], m["bus_id"]) for m in modules]


_TOPO = """<system version="1">
  <cpu numaid="1" affinity="ffff0000" arch="x86_64" vendor="AuthenticAMD" familyid="25" modelid="1">
    <pci busid="0000:c1:00.0" class="0x060400" vendor="0x1000" device="0xc010" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:c3:00.0" class="0x030200" vendor="0x10de" device="0x2330" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="4" sm="90" rank="4" gdr="1">
          <nvlink target="0000:c5:00.0" count="6" tclass="0x030200"/>
        </gpu>
      </pci>
      <pci busid="0000:c5:00.0" class="0x030200" vendor="0x10de" device="0x2330" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="5" sm="90" rank="5" gdr="1">
          <nvlink target="0000:c3:00.0" count="6" tclass="0x030200"/>
        </gpu>
      </pci>
      <pci busid="0000:c7:00.0" class="0x020700" vendor="0x15b3" device="0x1021" link_speed="32.0 GT/s PCIe" link_width="16">
        <nic>
          <net name="mlx5_4" dev="4" speed="400000" port="1" latency="0.000000" guid="0x1c2d" maxconn="131072" gdr="1"/>
        </nic>
      </pci>
    </pci>
  </cpu>
</system>
"""


def test_ncclss_topology_dump_lists_its_gpus_and_says_links_numa_and_nics(tmp_path: Path) -> None:
    (code, doctor), (icode, inventory) = _both(tmp_path, _TOPO)
    assert (code, icode) == (0, 0)
    assert doctor["findings"] == []
    assert [bus for _, bus in _modules(inventory)] == ["0000:C3:00.0", "0000:C5:00.0"]
    said = _notes(doctor)
    assert "read as NCCL topology XML" in said
    assert "GPU 4 at 0000:c3:00.0 (NUMA 1; NVLinks to 0000:c5:00.0 x6)" in said
    assert "NIC(s) mlx5_4" in said


def test_a_cut_topology_dump_reads_what_stands_before_the_cut(tmp_path: Path) -> None:
    cut = "\n".join(_TOPO.splitlines()[:6]) + '\n          <nvlink target="0000:c9:00.0" cou\n'
    (code, doctor), (_, inventory) = _both(tmp_path, cut)
    assert code == 0 and doctor["findings"] == []
    assert [bus for _, bus in _modules(inventory)] == ["0000:C3:00.0"]


_CPU_AGENTS = """*******
Agent 1
*******
  Name:                    Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz
  Uuid:                    CPU-XX
  Marketing Name:          Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz
  Vendor Name:             CPU
  Device Type:             CPU
*******
Agent 2
*******
  Name:                    Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz
  Uuid:                    CPU-XX
  Marketing Name:          Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz
  Vendor Name:             CPU
  Device Type:             CPU
"""


def test_a_rocminfo_listing_of_cpu_agents_alone_is_read_and_said(tmp_path: Path) -> None:
    (code, doctor), (icode, inventory) = _both(tmp_path, "==========\nHSA Agents\n==========\n" + _CPU_AGENTS)
    assert (code, icode) == (0, 0)
    assert doctor["findings"] == [] and _modules(inventory) == []
    assert "2 agent(s) listed, all CPU" in _notes(doctor) and "no GPU agent" in _notes(doctor)


def test_a_rocminfo_grep_echoed_before_the_listing_is_one_gpu_not_two(tmp_path: Path) -> None:
    text = ("$ rocminfo | grep gfx\n  Name:                    gfx1030\n"
            "      Name:                    amdgcn-amd-amdhsa--gfx1030\n$ rocminfo\n" + _CPU_AGENTS +
            "*******\nAgent 3\n*******\n  Name:                    gfx1030\n  Uuid:                    GPU-XX\n"
            "  Marketing Name:          AMD Radeon RX 6900 XT\n  Vendor Name:             AMD\n"
            "  Device Type:             GPU\n")
    (_, doctor), (_, inventory) = _both(tmp_path, text)
    assert [model for model, _ in _modules(inventory)] == ["AMD Radeon RX 6900 XT"]
    assert doctor["findings"] == []


def test_rocm_smis_not_supported_lines_are_absent_fields_not_a_fault(tmp_path: Path) -> None:
    text = ("ERROR: GPU[1]\t\t: mclk clock is unsupported\n"
            "ERROR: 2 GPU[1]: fan speed: RSMI_STATUS_NOT_SUPPORTED: This function is not supported in the current "
            "environment.\t\n"
            "ERROR: 9 GPU[1]: od volt: The called function has not been implemented in this system for this device type\n"
            "WARNING:  \t\t One or more commands failed\n")
    (code, doctor), (icode, inventory) = _both(tmp_path, text)
    assert (code, icode) == (0, 0) and doctor["findings"] == []
    assert len(_modules(inventory)) == 1
    assert "GPU[1] does not offer 3 field(s) here (mclk clock, fan speed, od volt)" in _notes(doctor)
    assert "not output gpuvet reads" not in _notes(doctor)


def test_rocm_smis_json_with_no_data_is_its_answer_not_a_refusal(tmp_path: Path) -> None:
    (code, doctor), (icode, _) = _both(tmp_path, "$ rocm-smi --json --showpower\nWARNING: No JSON data to report\n")
    assert (code, icode) == (0, 0) and doctor["findings"] == []
    assert "No JSON data to report" in _notes(doctor)


def test_a_gpu_tools_banner_over_lines_no_reader_knows_is_said_never_refused(tmp_path: Path) -> None:
    text = ("======================= ROCm System Management Interface =======================\n"
            "=========================== Frobnicator Counters ===========================\n"
            "frob lane alpha    17\nfrob lane beta     4\n")
    (code, doctor), (icode, _) = _both(tmp_path, text)
    assert (code, icode) == (0, 0) and doctor["findings"] == []
    assert "rocm-smi lines gpuvet has no reader for" in _notes(doctor)
    code, _, _ = run(["doctor", "--from", str(_written(tmp_path, "frob lane alpha    17\nfrob lane beta     4\n"))])
    assert code == 2  # nothing from a GPU tool: still refused


def _written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "plain.txt"
    path.write_text(text)
    return path


def test_nccl_tests_device_lines_with_the_host_blanked_list_the_modules(tmp_path: Path) -> None:
    text = ("# nThread 1 nGpus 2 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
            "#\n# Using devices\n"
            "#  Rank  0 Group  0 Pid  20211 on          device  0 [0x17] NVIDIA L40S\n"
            "#  Rank  1 Group  0 Pid  20211 on          device  1 [0x31] NVIDIA L40S\n#\n")
    (code, _), (_, inventory) = _both(tmp_path, text)
    assert code == 0
    assert [model for model, _ in _modules(inventory)] == ["NVIDIA L40S", "NVIDIA L40S"]


def test_a_query_of_name_and_pci_device_id_is_read_as_the_query_csv(tmp_path: Path) -> None:
    text = ("$ nvidia-smi --query-gpu=name,pci.device_id --format=csv,noheader\n"
            "NVIDIA L4, 0x27B810DE\nNVIDIA L4, 0x27B810DE\n")
    (code, doctor), (_, inventory) = _both(tmp_path, text)
    assert code == 0 and "read as nvidia-smi --query-gpu" in _notes(doctor)
    assert [model for model, _ in _modules(inventory)] == ["NVIDIA L4", "NVIDIA L4"]
    (_, prose), _ = _both(tmp_path, "$ nvidia-smi --query-gpu=name,pci.device_id --format=csv,noheader\n"
                                    "It printed nothing, then it hung\n")
    assert "read as nvidia-smi --query-gpu" not in _notes(prose)
