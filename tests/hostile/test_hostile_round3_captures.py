"""Issue 41, captures: a vendor tool's own verdict is a finding; one file holding several vendors'
captures never joins their modules; a module listed twice is one module; an absurd figure is a
corrupt reading, never another number; a name without bound is cut.

Every capture here is a real one from tests/data/captures (its source named in its header) with
the one edit each test names: the tools' formats are as they print them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuvet.backends.capture.backend import CaptureBackend
from gpuvet.cli.app import main

DATA = Path(__file__).parent.parent / "data" / "captures"
REAL = DATA / "real"


def _body(name: str) -> str:
    """A real capture without the corpus header (# source, # shows …) and without the poster's cut mark."""
    lines = (REAL / name).read_text(encoding="utf-8").splitlines()
    return "\n".join(ln for ln in lines if not ln.startswith("#") and ln.strip() != "...") + "\n"


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out) if "--json" in args and out.strip() else out, err


def _doctor(capsys: pytest.CaptureFixture[str], *paths: str) -> tuple[int, dict[str, Any]]:
    code, data, _ = _run(capsys, "doctor", *[a for p in paths for a in ("--from", p)], "--json")
    return code, data


# --- 1. the tool's own verdict is a finding -------------------------------------------------------
NPU = "ascend_vllmascend2534_910_8chips.txt"  # 910 chips, Health OK, bus ids 0000:9D/9F/99


@pytest.mark.parametrize(("word", "cause", "severity"), [
    ("Critical", "module_reported_critical", "critical"),
    ("Alarm", "module_reported_warning", "warn"),
    ("Warning", "module_reported_warning", "warn"),
])
def test_an_npu_that_npu_smi_marks_unhealthy_is_a_finding_in_doctor_and_inventory(capsys, tmp_path, word, cause,
                                                                                  severity):
    # npu-smi info's own Health column said Critical: doctor said "no cause found", exit 0
    text = _body(NPU).replace("| OK            | 178.5", f"| {word:<13} | 178.5", 1)
    path = _write(tmp_path, "npu.txt", text)
    code, data = _doctor(capsys, path)
    (f,) = [f for f in data["findings"] if f["cause"] == cause]
    assert code == 1 and f["severity"] == severity
    assert f["module"] == "NPU 0 chip 0 (0000:9D:00.0)" and f["evidence"]["value"] == word
    code, out, _ = _run(capsys, "inventory", "--from", path, "--json")
    assert any("gpu0" in n and f"Health: {word}" in n for n in out["notes"])


def test_a_healthy_npu_listing_is_clear_and_cites_what_it_read(capsys, tmp_path):
    code, data = _doctor(capsys, _write(tmp_path, "npu.txt", _body(NPU)))
    step = next(s for s in data["steps"] if s["check"] == "tool_verdicts")
    assert step["status"] == "clear" and len(step["evidence"]) == 3
    assert not [f for f in data["findings"] if f["cause"].startswith("module_reported")]


def _amd_static(block_state: str) -> str:
    """amd-smi static --ras as it prints the ECC block states (ROCm's amdsmi CLI docs), under the real MI350X."""
    return _body("amd_rocmsystems2987_mi350x_static.txt") + (
        "        ECC_BLOCK_STATE:\n"
        f"            UMC: {block_state}\n"
        "            SDMA: ENABLED\n"
        "            GFX: ENABLED\n")


@pytest.mark.parametrize(("state", "cause"), [("MULT_UC", "module_reported_critical"),
                                              ("POISON", "module_reported_critical"),
                                              ("SING_C", "module_reported_warning")])
def test_an_amd_smi_ras_block_in_an_error_state_is_a_finding(capsys, tmp_path, state, cause):
    code, data = _doctor(capsys, _write(tmp_path, "static.txt", _amd_static(state)))
    (f,) = [f for f in data["findings"] if f["cause"].startswith("module_reported")]
    assert code == 1 and f["cause"] == cause
    assert f["evidence"]["field"] == "RAS/ECC_BLOCK_STATE/UMC" and f["evidence"]["value"] == state
    assert "amd-smi" in f["fix"]


def test_an_older_amd_smi_block_status_pair_is_read_per_block(capsys, tmp_path):
    # older amd-smi printed each block as 'BLOCK: UMC' then 'STATUS: …': the last pair overwrote the others
    text = _body("amd_rocmsystems2987_mi350x_static.txt") + (
        "        ECC_BLOCK_STATE:\n            BLOCK: UMC\n            STATUS: MULT_UC\n"
        "            BLOCK: SDMA\n            STATUS: ENABLED\n")
    _, data = _doctor(capsys, _write(tmp_path, "static.txt", text))
    assert [f["evidence"]["field"] for f in data["findings"]] == ["RAS/ECC_BLOCK_STATE/UMC"]


def test_amd_smi_uncorrectable_ecc_count_is_a_finding_and_zero_is_clear(capsys, tmp_path):
    metric = "GPU: 0\n    ECC:\n        TOTAL_CORRECTABLE_COUNT: 0\n        TOTAL_UNCORRECTABLE_COUNT: {n}\n" \
             "    BDF: 0000:05:00.0\n"  # amd-smi metric --ecc (test_captures_amd's constructed excerpt)
    _, data = _doctor(capsys, _write(tmp_path, "metric.txt", metric.format(n=3)))
    (f,) = data["findings"]
    assert f["cause"] == "module_reported_critical" and f["evidence"]["value"] == "3"
    _, data = _doctor(capsys, _write(tmp_path, "metric0.txt", metric.format(n=0)))
    assert not data["findings"]
    assert next(s for s in data["steps"] if s["check"] == "tool_verdicts")["status"] == "clear"


def test_a_dcgmi_diag_fail_was_already_a_finding(capsys):
    # checked, not changed: the headerless real table's 'Fail - GPU: 0' is dcgm_diag_failed
    code, data = _doctor(capsys, str(REAL / "dcgm_godcgm52_headerless_fail.txt"))
    assert code == 1 and [(f["cause"], f["module"]) for f in data["findings"]] == [("dcgm_diag_failed", "GPU0")]


# --- 2. several vendors in one file ---------------------------------------------------------------
def _mixed() -> str:
    """nvidia-smi -q of two H100s, amd-smi static of an MI350X and npu-smi topo + info of eight 910B3."""
    return ((DATA / "smi_q_h100_2gpu.txt").read_text(encoding="utf-8") + _body("amd_rocmsystems2987_mi350x_static.txt")
            + _body("ascend_msswift_910b3_topo.txt"))


def test_one_file_of_three_vendors_joins_nothing_and_names_the_others(capsys, tmp_path):
    # the MI350X was dropped without a word and the two H100s were joined to six NPUs over HCCS
    path = _write(tmp_path, "mixed.txt", _mixed())
    node = CaptureBackend([path]).node()
    assert [m.model.name for m in node.modules] == ["H100-SXM", "H100-SXM"]
    assert not [ln for ln in node.links if ln.kind.is_fabric]
    code, out, _ = _run(capsys, "inventory", "--from", path, "--json")
    notes = [n for n in out["notes"] if "also holds" in n]
    assert len(notes) == 2 and "AMD's amd-smi" in notes[0] and "AMD Instinct MI350X" in notes[0]
    assert "Ascend's npu-smi info -t topo" in notes[1] and "8 module(s): 910B3" in notes[1]
    code, data = _doctor(capsys, path)
    assert sum("also holds" in n for n in data["notes"]) == 2


def test_the_vendor_read_first_makes_the_node_whichever_it_is(tmp_path):
    amd_first = _body("amd_rocmsystems2987_mi350x_static.txt") + (DATA / "smi_q_h100_2gpu.txt").read_text()
    backend = CaptureBackend([_write(tmp_path, "amd_first.txt", amd_first)])
    assert [m.model.name for m in backend.node().modules] == ["AMD Instinct MI350X"]
    assert any("NVIDIA's nvidia-smi -q (2 module(s)" in n for n in backend.notes())


def test_two_files_of_two_vendors_are_not_joined_either(tmp_path):
    smi = _write(tmp_path, "smi.txt", (DATA / "smi_q_h100_2gpu.txt").read_text())
    npu = _write(tmp_path, "npu.txt", _body("ascend_msswift_910b3_topo.txt"))
    node = CaptureBackend([smi, npu]).node()
    assert len(node.modules) == 2 and not [ln for ln in node.links if ln.kind.is_fabric]


# --- 3. a module listed twice is one module ----------------------------------------------------------
def _twice(name: str) -> str:
    body = _body(name)
    return body + body


def _q_twice() -> str:
    """nvidia-smi -q twice, as a bug report holds it; the second run read gpu0 4 °C warmer."""
    q = (DATA / "smi_q_h100_2gpu.txt").read_text(encoding="utf-8")
    return q + q.replace("GPU Current Temp                  : 71 C", "GPU Current Temp                  : 75 C", 1)


def test_nvidia_smi_q_twice_in_one_file_is_two_modules_and_the_differing_reading_is_named(capsys, tmp_path):
    # a 2-GPU node read as 4 modules with repeated UUIDs
    path = _write(tmp_path, "bug.txt", _q_twice())
    code, out, _ = _run(capsys, "inventory", "--from", path, "--json")
    assert [m["uuid"] for m in out["modules"]] == ["GPU-8f6d2c1e-3a44-4b0e-9c51-2b7e5f0a1c11",
                                                   "GPU-1b0e7d3a-9c2f-4e61-8a77-5d3c9e2b4f22"]
    (differ,) = [n for n in out["notes"] if "readings differ" in n]
    assert "GPU 0000:18:00.0 is listed 2 times" in differ and "'71 C' then '75 C'" in differ
    assert any("GPU 0000:2A:00.0 2 times" in n and "same readings" in n for n in out["notes"])
    _, data = _doctor(capsys, path)  # each module judged once: gpu0's x8 link is one finding, not two
    assert [f["module"] for f in data["findings"] if f["cause"] == "pcie_link_downgraded"] == ["0000:18:00.0"]


@pytest.mark.parametrize(("name", "modules"), [
    ("amd_rbt129_mi210_devices.txt", 8),  # rocm-bandwidth-test's device list pasted twice (by UUID)
    ("ascend_vllmascend2534_910_8chips.txt", 3),  # npu-smi info twice (by bus id)
    ("amd_rocmsmi_easybuild3978_mi100_product.txt", 2),  # rocm-smi --csv, its rows twice (no bus id: by card)
])
def test_a_vendor_listing_pasted_twice_is_one_module_each(tmp_path, name, modules):
    text = _twice(name)
    if name.startswith("amd_rocmsmi"):  # a CSV has one header: its rows repeated under it
        head, *rows = _body(name).splitlines()
        text = "\n".join([head, *rows, *rows]) + "\n"
    backend = CaptureBackend([_write(tmp_path, "twice.txt", text)])
    assert len(backend.node().modules) == modules
    assert any("listed more than once with the same readings" in n for n in backend.notes())


def test_amd_smi_json_with_a_gpu_twice_is_one_module_and_a_conflict_is_named(tmp_path):
    gpu = {"gpu": 0, "asic": {"market_name": "AMD Instinct MI300X"}, "bus": {"bdf": "0000:05:00.0"},
           "vram": {"size": {"value": 196592, "unit": "MB"}}}
    other = {**gpu, "vram": {"size": {"value": 98296, "unit": "MB"}}}
    backend = CaptureBackend([_write(tmp_path, "amd.json", json.dumps([gpu, other]))])
    (m,) = backend.inventory().modules
    assert m.memory_bytes == 196592 * 2**20
    assert any("GPU 0 (0000:05:00.0) is listed 2 times" in n and "196592.0 then 98296.0" in n and "first kept" in n
               for n in backend.notes())


def test_amd_smi_static_and_metric_of_one_gpu_are_one_module(capsys, tmp_path):
    # two commands in one post: the metric block's uncorrectable count lands on the static block's MI350X
    metric = "GPU: 0\n    ECC:\n        TOTAL_CORRECTABLE_COUNT: 0\n        TOTAL_UNCORRECTABLE_COUNT: 2\n"
    path = _write(tmp_path, "amd.txt", _body("amd_rocmsystems2987_mi350x_static.txt") + metric)
    backend = CaptureBackend([path])
    assert [m.model.name for m in backend.node().modules] == ["AMD Instinct MI350X"]
    _, data = _doctor(capsys, path)
    (f,) = [f for f in data["findings"] if f["cause"] == "module_reported_critical"]
    assert f["module"] == "GPU 0 (0000:05:00.0)"


def test_one_bus_id_under_two_uuids_is_two_machines_not_one_module(tmp_path):
    rbt = _body("amd_rbt129_mi210_devices.txt")
    other = rbt.replace("GPU-06c9d21390bc2e70", "GPU-1111111111111111")
    backend = CaptureBackend([_write(tmp_path, "two.txt", rbt + other)])
    assert len(backend.node().modules) == 9
    assert any("bus id 05:00.0 is listed with two UUIDs" in n for n in backend.notes())


def test_a_rocm_smi_topology_header_naming_a_gpu_twice_is_refused(capsys, tmp_path):
    # GPU1 twice: its two columns were read as one module's, the second overwriting the first
    text = _body("amd_rocmsmilib108_showtopo_pcie.txt").replace(
        "       GPU0         GPU1         GPU2", "       GPU0         GPU1         GPU1", 1)
    code, _, err = _run(capsys, "topo", "--from", _write(tmp_path, "topo.txt", text))
    assert code == 2 and "header names GPU1 twice" in err and "line 3" in err


# --- 4. an absurd figure is a corrupt reading, never another number ----------------------------------
def test_an_npu_smi_hbm_total_of_1e308_is_not_read_as_1_mib(capsys, tmp_path):
    # '3416 / 1e308' matched '(\d+) / (\d+)' as 3416 / 1: the chip showed 1 MiB of memory
    text = _body(NPU).replace("3416 / 65536", "3416 / 1e308", 1)
    code, out, _ = _run(capsys, "inventory", "--from", _write(tmp_path, "npu.txt", text), "--json")
    memory = [m["memory_bytes"] for m in out["modules"]]
    assert memory[0] is None and memory[1:] == [65536 * 2**20] * 2
    assert any("NPU 0 chip 0: HBM total (MB) '1e308'" in n and "corrupt reading" in n for n in out["notes"])


@pytest.mark.parametrize("temp", ["99999", "-40", "nan", "inf"])
def test_an_impossible_npu_temperature_is_noted_and_left_out(tmp_path, temp):
    text = _body(NPU).replace("| 178.5       36 ", f"| 178.5       {temp:<3}", 1)
    from gpuvet.captures.read import read
    fc = read(_write(tmp_path, "npu.txt", text))
    assert fc.npu.modules[0].temperature_c is None and fc.npu.modules[1].temperature_c == 36
    assert any(f"Temp(C) '{temp}'" in n and "corrupt reading" in n for n in fc.notes)


@pytest.mark.parametrize("temp", ["99999 C", "nan C", "-273 C"])
def test_a_corrupt_nvidia_smi_temperature_is_no_finding_and_is_said(capsys, tmp_path, temp):
    # GPU Current Temp 99999 C was 'at its maximum operating temperature (57 C)': a finding on a corrupt reading
    text = (REAL / "smi_q_thermald300_mx330_maxop.txt").read_text(encoding="utf-8").replace(
        "GPU Current Temp                  : 56 C", f"GPU Current Temp                  : {temp}", 1)
    _, data = _doctor(capsys, _write(tmp_path, "q.txt", text))
    assert "at_max_operating_temp" not in {f["cause"] for f in data["findings"]}
    assert any(f"GPU Current Temp '{temp}'" in n and "corrupt reading" in n for n in data["notes"])


@pytest.mark.parametrize(("total", "said"), [("3000000 MiB", "not physical"), ("nan MiB", "not a finite number"),
                                             ("-4046 MiB", "not physical")])
def test_a_memory_total_beyond_any_module_is_n_a_with_a_note(capsys, tmp_path, total, said):
    # 10x the largest catalog module (MI325X, 256 GiB) is the bound: 3,000,000 MiB (2.9 TiB) was kept (the bound
    # was 16 TiB); NaN was left out without a word
    text = (REAL / "smi_q_nvdocker1090_excerpt.txt").read_text(encoding="utf-8").replace(
        "Total                       : 4046 MiB", f"Total                       : {total}", 1)
    _, out, _ = _run(capsys, "inventory", "--from", _write(tmp_path, "q.txt", text), "--json")
    assert out["modules"][0]["memory_bytes"] is None
    assert any("memory" in n and said in n for n in out["notes"])


# --- 5. size without bound --------------------------------------------------------------------------
def test_a_model_name_longer_than_any_tool_prints_is_cut_with_a_note(tmp_path):
    # a 60 MB amd-smi MARKET_NAME ran past 60 s at 1.35 GB and was printed whole; a modest one shows the bound
    text = "GPU: 0\n    ASIC:\n        MARKET_NAME: " + "AMD Instinct MI300X " * 5_000 + \
           "\n    BUS:\n        BDF: 0000:05:00.0\n"
    backend = CaptureBackend([_write(tmp_path, "long.txt", text)])
    (m,) = backend.inventory().modules
    assert len(m.model) == 256 and m.model.startswith("AMD Instinct MI300X AMD")
    assert any("GPU 0: name of 99,999 characters cut to its first 256" in n for n in backend.notes())


def test_every_nvrm_message_kind_is_still_found_behind_its_word_filter():
    # each kind is searched only on lines holding one of its words; one line of each wording must still be found
    from gpuvet.captures import kernel
    from gpuvet.captures.text import clean
    said = {"gfw_boot_failed": "NVRM: GPU 0000:18:00.0: failed to wait for GFW boot complete",
            "fsp_boot_failed": "NVRM: GPU 0000:18:00.0: kfspSendBootCommands_GH100: FSP boot timed out",
            "needs_reset": "NVRM: GPU 0000:18:00.0: WPR2 already up",
            "gsp_failed": "NVRM: GPU 0000:18:00.0: Cannot initialize GSP firmware RM",
            "cannot_attach": "NVRM: GPU 0000:18:00.0: osInitNvMapping failed",
            "gpu_lost": "NVRM: GPU 0000:18:00.0: GPU lost from the bus",
            "power_cables": "NVRM: GPU 0000:18:00.0: does not have the necessary power cables connected",
            "init_failed": "NVRM: GPU 0000:18:00.0: RmInitAdapter failed! (0x25:0x65:1457)",
            # issue 46's open-module wordings
            "unsupported_by_driver": "NVRM: GPU 0000:18:00.0: is not supported by open nvidia.ko because it does "
                                     "not include the required GPU System Processor (GSP)",
            "probe_failed": "NVRM: The NVIDIA probe routine failed for 1 device(s).",
            # batch E: the open modules' GSP RPCs, and the kernel's AER recovery giving up on the module
            "gsp_rpc_failed": "NVRM: GPU2 _issueRpcAndWait: rpcRecvPoll timedout for fn 76!",
            "aer_unrecovered": "nvidia 0000:18:00.0: AER: can't recover (no error_detected callback)",
            # batch H: another driver (nouveau, vfio-pci) owns the modules, so NVIDIA's probe never ran
            "probe_not_called": "NVRM: The NVIDIA probe routine was not called for 3 device(s).",
            # batch I's dev set: the driver's user-space of another version than the loaded module
            "api_mismatch": "NVRM: API mismatch: the client has the version 535.129.03, but",
            # batch J: the driver loaded and bound no module (a laptop's switched-off GPU, a VM without one)
            "no_adapter": "NVRM: No NVIDIA graphics adapter found!",
            # session 60's kinds from the open modules' source (captures/kernel_phrases.py)
            "nv_not_back_on_bus": "NVRM: GPU 0000:18:00.0: Timeout GPU not back on the bus after reset",
            "nv_vbios_boot_failed": "NVRM: GPU 0000:18:00.0: VBIOS boot failed!!",
            "nv_device_start_failed": "NVRM: GPU 0000:18:00.0: pci_enable_device failed, aborting",
            "nv_bar1_lost": "NVRM: GPU 0000:18:00.0: Failed to re-allocate BAR1.",
            # session 65 (R9A, captures/nv_driver_faults.py): the stack frame the driver dumps when a GSP RPC times
            # out, and the NVLink discovery failure of the open modules' knvlink code
            "nv_gsp_rpc_stack": "[ 5000.000001]  _kgspRpcRecvPoll+0x1c5/0x5d0 [nvidia]",
            "nv_nvlink_discovery_failed": "NVRM: knvlinkDiscoverPostRxDetLinks_GH100: Getting peer0's "
                                          "postRxDetLinkMask failed!"}
    assert set(said) == {k.kind for k in kernel.NVRM_MESSAGES}
    for kind, line in said.items():
        assert [e.kind for e in kernel.parse(clean(line + "\n").lines).events] == [kind], kind


def test_a_line_longer_than_any_tool_prints_is_said(tmp_path):
    from gpuvet.captures.read import read

    log = tmp_path / "dmesg.txt"
    log.write_text("[ 1.0] NVRM: " + "x" * 200_000 + "\n[ 2.0] NVRM: Xid (PCI:0000:18:00): 79, pid=0, GPU has "
                   "fallen off the bus.\n")
    fc = read(str(log))
    assert [x.code for x in fc.kernel.xids] == [79]
    assert any("line(s) 1: longer than 65,536 characters" in n and "read whole" in n for n in fc.notes), fc.notes


def test_the_same_file_given_twice_is_read_once_and_said(tmp_path):
    from gpuvet.backends.capture.backend import CaptureBackend

    smi = Path(__file__).parent.parent / "data" / "captures" / "smi_q_h100_2gpu.txt"
    backend = CaptureBackend([str(smi), str(smi)])
    assert len(backend.inventory().modules) == 2
    assert any("the same file given twice" in n for n in backend.notes()), backend.notes()


def test_xids_on_buses_no_listed_module_has_are_said(capsys):
    """A kernel log of another machine beside a module listing: its Xids stay, named by bus, with a note."""
    data_dir = Path(__file__).parent.parent / "data" / "captures"
    code = main(["doctor", "--from", str(data_dir / "smi_q_h100_2gpu.txt"), "--from", str(data_dir / "dmesg_xid.txt"),
                 "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and any("which no listed module has" in n for n in data["notes"]), data["notes"]
