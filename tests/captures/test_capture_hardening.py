"""Captures believed too readily (issue 17) and the ways people paste (issue 18): each example
ends in exit 0/1 with a note, or exit 2 with a clear message — never a traceback, never an
invented module or a silently dropped figure. Launcher-prefixed variants are derived here from
real corpus files (the transformation is the test); the synthetic samples follow the formats of
NVIDIA's tools as documented."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from gpuvet.backends.capture.backend import CaptureBackend, parse_topo_matrix
from gpuvet.captures.read import read
from gpuvet.cli.app import main
from gpuvet.errors import CaptureError

REAL = Path(__file__).parent.parent / "data" / "captures" / "real"
DATA = Path(__file__).parent.parent / "data" / "captures"
HEADER = "        GPU0    GPU1    GPU2    GPU3    CPU Affinity    NUMA Affinity"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Traceback" not in out
    return code, (json.loads(out) if out.strip().startswith("{") else out), err


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _topo(rows: list[str], header: str = HEADER) -> str:
    return "\n".join([header, *rows, "", "Legend:", "  X    = Self"]) + "\n"


MESH = ["GPU0     X      NV4     NV4     NV4     0-31    0", "GPU1    NV4      X      NV4     NV4     0-31    0",
        "GPU2    NV4     NV4      X      NV4     0-31    0", "GPU3    NV4     NV4     NV4      X      0-31    0"]


# --- topo -m --------------------------------------------------------------------------------
def test_truncated_matrix_keeps_only_the_rows_it_has(capsys, tmp_path):
    path = _write(tmp_path, "topo.txt", _topo(MESH[:3]))
    code, data, _ = _run(capsys, "topo", "--from", path, "--json")
    assert code == 0 and [m["id"] for m in data["modules"]] == ["gpu0", "gpu1", "gpu2"]
    assert any("GPU3 named in the header have no row" in n for n in data["notes"])
    # R14B: GPU3's row is cut, but the rows read give its cells (NV4 to GPU0-2): said, not drawn
    assert any("gpu3: rows cut; read from the rows there: gpu0-gpu3 NV4, gpu1-gpu3 NV4, gpu2-gpu3 NV4" in n
               for n in data["notes"])


@pytest.mark.parametrize(("header", "rows", "message"), [
    (HEADER.replace("GPU1", "GPU0"), MESH, "names GPU0 more than once"),
    (HEADER, [MESH[0].replace("NV4     NV4     NV4", "NV999999999     NV4     NV4"), *MESH[1:]],
     "no module has that many NVLinks"),
    (HEADER, [MESH[0], MESH[1].replace("NV4      X", "SYS      X"), *MESH[2:]], "disagrees with itself"),
    (HEADER, [*MESH, MESH[0]], "row GPU0 appears twice"),
    (HEADER, [MESH[0].replace(" X ", "NV4"), *MESH[1:]], "X belongs on the diagonal"),
])
def test_matrices_that_cannot_be_trusted_are_refused(capsys, tmp_path, header, rows, message):
    path = _write(tmp_path, "topo.txt", _topo(rows, header))
    code, _, err = _run(capsys, "topo", "--from", path)
    assert code == 2 and message in err and "topo.txt" in err


def test_asymmetric_nvlink_is_never_dropped_silently():
    text = _topo([MESH[0], MESH[1].replace("NV4      X", "SYS      X"), *MESH[2:]])
    with pytest.raises(CaptureError, match=r"GPU0→GPU1 is NV4 but GPU1→GPU0 is SYS"):
        parse_topo_matrix(text)


# --- nvidia-smi -q -x ----------------------------------------------------------------------
def _xml(*gpus: str) -> str:
    return "<?xml version=\"1.0\" ?>\n<nvidia_smi_log><driver_version>550.54</driver_version>" + "".join(gpus) + \
        "</nvidia_smi_log>\n"


def _gpu(bus: str, uuid: str, mem: str = "81559 MiB", gen: str = "5") -> str:
    return (f'<gpu id="{bus}"><product_name>NVIDIA H100 80GB HBM3</product_name><uuid>{uuid}</uuid>'
            f"<fb_memory_usage><total>{mem}</total></fb_memory_usage><pci><pci_gpu_link_info><pcie_gen>"
            f"<max_link_gen>{gen}</max_link_gen><current_link_gen>{gen}</current_link_gen></pcie_gen>"
            "<link_widths><max_link_width>16x</max_link_width><current_link_width>16x</current_link_width>"
            "</link_widths></pci_gpu_link_info></pci></gpu>")


def test_two_gpu_elements_with_one_uuid_are_refused(capsys, tmp_path):
    path = _write(tmp_path, "smi.xml", _xml(_gpu("00000000:18:00.0", "GPU-a"), _gpu("00000000:2A:00.0", "GPU-a")))
    code, _, err = _run(capsys, "inventory", "--from", path)
    assert code == 2 and "same UUID GPU-a" in err


@pytest.mark.parametrize(("mem", "gen", "field"), [("-80 MiB", "5", "memory"), ("81559 MiB", "99", "PCIe generation"),
                                                  ("7.3.1 MiB", "abc", "PCIe generation"), ("... MiB", "5", None)])
def test_impossible_figures_are_noted_and_left_out(capsys, tmp_path, mem, gen, field):
    path = _write(tmp_path, "smi.xml", _xml(_gpu("00000000:18:00.0", "GPU-a", mem, gen)))
    code, data, _ = _run(capsys, "inventory", "--from", path, "--json")
    (module,) = data["modules"]
    assert code == 0 and not isinstance(module["memory_bytes"], int) or module["memory_bytes"] > 0
    if field:
        assert any(field in n and "not physical" in n for n in data["notes"]) or "abc" == gen
    assert all(isinstance(v, (str, dict, bool, type(None))) or v >= 0 for v in module.values()
               if not isinstance(v, list))


def test_entity_expansion_is_refused_by_the_hardened_parser(capsys, tmp_path):
    bomb = ('<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>\n'
            "<nvidia_smi_log><driver_version>&lol2;</driver_version></nvidia_smi_log>\n")
    code, _, err = _run(capsys, "inventory", "--from", _write(tmp_path, "bomb.xml", bomb))
    assert code == 2 and "entities" in err


def test_more_gpus_than_any_node_is_refused_quickly(capsys, tmp_path):
    gpus = "".join(f'<gpu id="0000:{i // 256:02X}:{i % 256:02X}.0"><uuid>GPU-{i}</uuid></gpu>' for i in range(5000))
    code, _, err = _run(capsys, "topo", "--from", _write(tmp_path, "many.xml", _xml(gpus)))
    assert code == 2 and "5000 <gpu> elements" in err


# --- nccl-tests ----------------------------------------------------------------------------
NCCL = """# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
     1048576        262144     float     sum      -1    60.12   17.44   30.52      0    59.80   17.53   30.68      0
     2097152        524288     float     sum      -1    {t}   {a}   {b}      {w}    80.10   26.18   45.82      0
     4194304       1048576     float     sum      -1    120.5   34.81   60.91      0    119.9   34.98   61.22      0
# Avg bus bandwidth    : 45.1
"""


@pytest.mark.parametrize(("t", "a", "b"), [("-81.20", "25.83", "45.20"), ("nan", "nan", "nan"), ("7.3.1", "...", "abc")])
def test_bad_nccl_figures_are_noted_and_wrong_still_counts(capsys, tmp_path, t, a, b):
    path = _write(tmp_path, "all_reduce.txt", NCCL.format(t=t, a=a, b=b, w="3"))
    code, data, _ = _run(capsys, "doctor", "interconnect-slow", "--from", path, "--json")
    assert code == 1 and data["findings"][0]["cause"] == "data_corruption_in_transfer"
    assert data["findings"][0]["evidence"]["sizes"] == [2097152]
    assert any("negative, NaN or unreadable" in n for n in data["notes"])


def test_wrong_as_na_means_validation_off_not_corruption(capsys, tmp_path):
    text = NCCL.format(t="81.20", a="25.83", b="45.20", w="N/A").replace("      0    ", "    N/A    ")
    code, data, _ = _run(capsys, "doctor", "interconnect-slow", "--from", _write(tmp_path, "a.txt", text), "--json")
    assert "data_corruption_in_transfer" not in {f["cause"] for f in data["findings"]}
    assert {r.wrong for r in read(str(tmp_path / "a.txt")).nccl.results[0].rows} == {None}


# --- other numbers nobody checked ----------------------------------------------------------
@pytest.mark.parametrize("cell", ["7.3.1", "...", "abc", "nan", "-5.0"])
def test_nvbandwidth_cells_that_are_not_numbers(capsys, tmp_path, cell):
    text = ("Running device_to_device_memcpy_read_ce.\nmemcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)\n"
            f"           0         1\n 0       N/A     {cell}\n 1     24.85       N/A\n\n"
            "SUM device_to_device_memcpy_read_ce 24.85\n")
    code, data, _ = _run(capsys, "doctor", "--from", _write(tmp_path, "nvb.txt", text), "--json")
    assert code in (0, 1) and read(str(tmp_path / "nvb.txt")).nvb.matrices["device_to_device_memcpy_read_ce"][0][1] is None


@pytest.mark.parametrize("value", ["7.3.1", "...", "abc"])
def test_smi_text_fields_that_are_not_numbers(capsys, tmp_path, value):
    text = (f"GPU 00000000:18:00.0\n    Product Name                    : NVIDIA H100 80GB HBM3\n"
            f"    FB Memory Usage\n        Total                       : {value} MiB\n    PCI\n        GPU Link Info\n"
            f"            Link Width\n                Max                 : 16x\n                Current   : {value}x\n")
    code, data, _ = _run(capsys, "inventory", "--from", _write(tmp_path, "smi.txt", text), "--json")
    assert code == 0 and data["modules"][0]["model"] == "NVIDIA H100 80GB HBM3"


# --- the ways people paste -----------------------------------------------------------------
PREFIXES = {"srun --label": lambda i: f"{i % 2}: ", "mpirun --tag-output": lambda i: f"[1,{i % 2}]<stdout>:",
            "pdsh": lambda i: "node07: "}


@pytest.mark.parametrize("launcher", sorted(PREFIXES))
@pytest.mark.parametrize("name", ["nccl_tests232_tree_2node.txt", "smi_q_nvdocker954_1080.txt",
                                  "nvb_15_4090_v02_cut.txt", "topo_nccl1617_4h100_nv6.txt"])
def test_launcher_prefixes_are_removed(tmp_path, launcher, name):
    lines = (REAL / name).read_text().splitlines()
    prefixed = [lines[0]] + [PREFIXES[launcher](i) + ln for i, ln in enumerate(lines[1:])]
    plain, wrapped = read(str(REAL / name)), read(_write(tmp_path, name, "\n".join(prefixed) + "\n"))
    assert wrapped.kinds == plain.kinds and any("prefix, removed" in n for n in wrapped.notes)
    assert [r.rows for r in wrapped.nccl.results] == [r.rows for r in plain.nccl.results]
    assert wrapped.nvb.matrices == plain.nvb.matrices
    assert (wrapped.smi and [m.fields for m in wrapped.smi.modules]) == (plain.smi and [m.fields for m in plain.smi.modules])
    assert (wrapped.topo and wrapped.topo.cells) == (plain.topo and plain.topo.cells)


def test_unreadable_file_gets_exit_2_with_what_was_expected(capsys, tmp_path):
    code, _, err = _run(capsys, "doctor", "--from", _write(tmp_path, "notes.txt", "lunch at noon\nno GPU here\n"))
    assert code == 2 and "notes.txt" in err and "gpuvet doctor --help" in err and "docs/doctor.md" in err
    bad = tmp_path / "nvidia-bug-report.log.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage")
    code, _, err = _run(capsys, "doctor", "--from", str(bad))
    assert code == 2 and "gzip" in err
    binary = tmp_path / "core"
    binary.write_bytes(b"\x7fELF\x00\x00\x01\x02")
    code, _, err = _run(capsys, "doctor", "--from", str(binary))
    assert code == 2 and "binary" in err


# --- new inputs ----------------------------------------------------------------------------
def _body(name: str) -> str:
    return "\n".join((REAL / name).read_text().splitlines()[1:])


def test_bug_report_bundle_is_read_section_by_section(capsys, tmp_path):
    """A bundle laid out like nvidia-bug-report.log, assembled from corpus captures (synthetic)."""
    sep = "\n____________________________________________\n\n"
    sections = ["Start of NVIDIA bug report log file.  Please include this file, along\nwith a detailed description "
                "of your problem, when reporting a graphics\ndriver bug.\n\nnvidia-bug-report.sh Version: 34082325",
                "/usr/bin/nvidia-smi --query\n\n" + _body("smi_q_gpud80_remapped_pending.txt"),
                "/bin/dmesg\n\n" + _body("xid_nvdocker849_48_63.txt"),
                "/sbin/lspci -nnDvvvxxxx\n\n" + _body("lspci_geerling480_rtx8000_x1.txt"),
                "nvidia-smi topo -m\n\n" + _body("topo_nccl1617_4h100_nv6.txt"),
                "uname -a\nLinux gpu07 6.8.0-45-generic #45-Ubuntu SMP x86_64 GNU/Linux"]
    path = tmp_path / "nvidia-bug-report.log.gz"
    path.write_bytes(gzip.compress(sep.join(sections).encode()))
    fc = read(str(path))
    assert {"nvidia-smi -q", "kernel log", "lspci -vvv", "nvidia-smi topo -m"} <= set(fc.kinds)
    assert fc.notes[0].startswith("nvidia-bug-report: read")
    code, data, _ = _run(capsys, "doctor", "--from", str(path), "--json", "--all")
    causes = {f["cause"] for f in data["findings"]}
    assert code == 1 and {"row_remap_pending", "xid", "pcie_link_downgraded", "pcie_aer_corrected_bits"} <= causes
    assert len(CaptureBackend([str(path)]).node().modules) == 4


NVLINK_E = """GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1c2a3b4d-0000-1111-2222-333344445555)
         Link 0: Replay Errors: 0
         Link 0: Recovery Errors: 0
         Link 0: CRC Errors: 0
         Link 1: Replay Errors: 12
         Link 1: Recovery Errors: 1
         Link 1: CRC Errors: 4031
"""


def test_nvlink_error_counters(capsys, tmp_path):
    code, data, _ = _run(capsys, "doctor", "interconnect-slow", "--from", _write(tmp_path, "nvlink_e.txt", NVLINK_E),
                         "--json")
    f = next(f for f in data["findings"] if f["cause"] == "nvlink_errors")
    assert code == 1 and f["module"] == "GPU 0" and f["evidence"]["counters"]["link 1 CRC"] == 4031
    assert "link 0 CRC" not in f["evidence"]["counters"]


ROW_REMAP = """
==============NVSMI LOG==============

Timestamp                                 : Mon Mar  3 10:12:44 2025
Driver Version                            : 550.127.05
CUDA Version                              : 12.4

Attached GPUs                             : 1
GPU 00000000:3B:00.0
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 9
        Pending                           : No
        Remapping Failure Occurred        : Yes
        Bank Remap Availability Histogram
            Max                           : 639 bank(s)
            High                          : 0 bank(s)
"""
PERFORMANCE = """GPU 00000000:3B:00.0
    Performance State                     : P0
    Clocks Event Reasons
        Idle                              : Not Active
        Applications Clocks Setting       : Not Active
        SW Power Cap                      : Not Active
        HW Slowdown                       : Active
            HW Thermal Slowdown           : Not Active
            HW Power Brake Slowdown       : Active
        Sync Boost                        : Not Active
        SW Thermal Slowdown               : Not Active
        Display Clock Setting             : Not Active
"""
ECC = """GPU 00000000:3B:00.0
    ECC Mode
        Current                           : Enabled
        Pending                           : Enabled
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 12
            DRAM Uncorrectable            : 2
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 40
            DRAM Uncorrectable            : 2
"""


@pytest.mark.parametrize(("text", "symptom", "cause"), [
    (ROW_REMAP, "compute-errors", "row_remap_failure"), (PERFORMANCE, "compute-below-peak", "hw_power_brake"),
    (ECC, "compute-errors", "ecc_uncorrectable_since_boot")])
def test_partial_smi_outputs_name_the_action(capsys, tmp_path, text, symptom, cause):
    code, data, _ = _run(capsys, "doctor", symptom, "--from", _write(tmp_path, "smi_d.txt", text), "--json")
    f = next(f for f in data["findings"] if f["cause"] == cause)
    assert code == 1 and f["module"] == "0000:3B:00.0"
    action = {"row_remap_failure": "RMA", "hw_power_brake": "power", "ecc_uncorrectable_since_boot": "drain"}
    assert action[cause] in f["fix"]


def test_old_and_new_throttle_section_names_read_alike(tmp_path):
    old = PERFORMANCE.replace("Clocks Event Reasons", "Clocks Throttle Reasons")
    a, b = read(_write(tmp_path, "a.txt", PERFORMANCE)), read(_write(tmp_path, "b.txt", old))
    from gpuvet.captures.smi_text import health

    assert a.smi and b.smi and health(a.smi.modules[0]).clock_events == health(b.smi.modules[0]).clock_events == {
        "hw_slowdown", "hw_power_brake_slowdown"}


DCGM_FAIL = """+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Metadata  ----------+------------------------------------------------|
| DCGM Version              | 3.3.5                                          |
|-----  Deployment  --------+------------------------------------------------|
| Denylist                  | Pass                                           |
+-----  Integration  -------+------------------------------------------------+
| PCIe                      | Fail - All                                     |
| Warning                   | GPU 2 GPU 2 has a PCIe link width of x8, lower |
|                           | than its capability of x16                     |
+---------------------------+------------------------------------------------+
"""


def test_dcgm_text_failure_is_evidence(capsys, tmp_path):
    code, data, _ = _run(capsys, "doctor", "compute-errors", "--from", _write(tmp_path, "diag.txt", DCGM_FAIL),
                         "--json", "--all")
    f = next(f for f in data["findings"] if f["cause"] == "dcgm_diag_failed")
    assert code == 1 and f["evidence"]["test"] == "PCIe" and f["evidence"]["category"] == "Integration"


def test_dcgm_json_4x_shape(capsys, tmp_path):
    doc = {"DCGM Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [{"name": "memory", "results": [
        {"entity_group": "GPU", "entity_id": 3, "status": "Fail", "warnings": [
            {"warning": "GPU 3 had uncorrectable memory errors", "error_id": 24}]}]}]}], "version": "4.1.1"}}
    code, data, _ = _run(capsys, "doctor", "compute-errors", "--from", _write(tmp_path, "d.json", json.dumps(doc)),
                         "--json", "--all")
    f = next(f for f in data["findings"] if f["cause"] == "dcgm_diag_failed")
    assert f["module"] == "GPU3" and "uncorrectable" in f["evidence"]["detail"]
