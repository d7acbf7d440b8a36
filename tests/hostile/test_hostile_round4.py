"""Issue 41, round 4 (benchmarks/hostile_round.py, a blind round of awkward inputs), and issue 46's
fields: every field a captured `nvidia-smi -q` (text or -q -x XML) holds is read, and what cannot be
read, or is there twice, or stops short, is said in a note or refused — never dropped silently.

The -q text below is the driver-535 layout as nvidia-smi prints it (GPU Power Readings, Ecc Mode)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuvet.cli.app import main

PROCESS = """    Processes
        GPU instance ID                   : N/A
        Compute instance ID               : N/A
        Process ID                        : 2456
            Type                          : C
            Name                          : python3
            Used GPU Memory               : 70000 MiB
        GPU instance ID                   : N/A
        Compute instance ID               : N/A
        Process ID                        : 1999
            Type                          : G
            Name                          : /usr/lib/xorg/Xorg
            Used GPU Memory               : 4 MiB
"""
NO_PROCESS = "    Processes                             : None\n"


def _bus(i: int) -> str:
    return f"00000000:{0x18 + i * 0x11:02X}:00.0"


def _gpu(i: int, limit: str = "700.00 W", processes: str = NO_PROCESS, persistence: str = "Enabled") -> str:
    b = _bus(i)
    return f"""GPU {b}
    Product Name                          : NVIDIA H100 80GB HBM3
    Persistence Mode                      : {persistence}
    GPU UUID                              : GPU-{i:08x}-aaaa-aaaa-aaaa-{i:012x}
    PCI
        Bus Id                            : {b}
        GPU Link Info
            PCIe Generation
                Max                       : 5
                Current                   : 5
            Link Width
                Max                       : 16x
                Current                   : 16x
    FB Memory Usage
        Total                             : 81559 MiB
    Ecc Mode
        Current                           : Enabled
        Pending                           : Enabled
    Retired Pages
        Single Bit ECC                    : 1
        Double Bit ECC                    : 2
        Pending Page Blacklist            : No
    GPU Power Readings
        Power Draw                        : 70.11 W
        Current Power Limit               : {limit}
        Default Power Limit               : 700.00 W
        Min Power Limit                   : 200.00 W
        Max Power Limit                   : 700.00 W
    Clocks
        SM                                : 1980 MHz
        Memory                            : 2619 MHz
    Max Clocks
        SM                                : 1980 MHz
        Memory                            : 2619 MHz
{processes}"""


def smi_q(n: int = 4, **kw: str) -> str:
    head = ("\n==============NVSMI LOG==============\n\n"
            "Timestamp                                 : Mon Jan 15 10:00:00 2024\n"
            "Driver Version                            : 535.129.03\nCUDA Version                              : 12.2\n\n"
            f"Attached GPUs                             : {n}\n")
    return head + "".join(_gpu(i, **kw) + "\n" for i in range(n))


def _write(tmp_path: Path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return str(path)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out) if "--json" in args and out.strip() and code != 2 else out, err


def _inventory(capsys: pytest.CaptureFixture[str], path: str) -> dict[str, Any]:
    code, data, err = _run(capsys, "inventory", "--from", path, "--json")
    assert code in (0, 1), err
    return data


def _step(data: dict[str, Any], check: str) -> dict[str, Any]:
    steps = [s for s in data["steps"] if s["check"] == check]
    assert steps, f"no {check} step"
    return steps[0]


# --- 1. nvidia-smi -q: every field the driver-535 layout holds --------------------------------------
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_the_driver_535_layout_gives_ecc_power_limits_persistence_and_max_clocks(capsys, tmp_path, eol):
    # q_plain_8, q_crlf: ecc_enabled and the three power limits were null ("not in the captured file")
    data = _inventory(capsys, _write(tmp_path, "smi-q.txt", smi_q(4).replace("\n", eol)))
    assert len(data["modules"]) == 4
    for m in data["modules"]:
        assert m["ecc_enabled"] is True
        assert (m["power_limit_w"], m["power_limit_default_w"], m["power_limit_max_w"]) == (700.0, 700.0, 700.0)
        assert m["persistence_mode"] is True
        assert (m["sm_clock_max_mhz"], m["mem_clock_max_mhz"]) == (1980, 2619)
        assert m["processes"] == []


def test_the_older_power_readings_layout_is_still_read(capsys, tmp_path):
    text = smi_q(2).replace("GPU Power Readings", "Power Readings").replace("Current Power Limit", "Power Limit")
    data = _inventory(capsys, _write(tmp_path, "smi-q.txt", text))
    assert [m["power_limit_w"] for m in data["modules"]] == [700.0, 700.0]


def test_a_decimal_comma_power_limit_is_left_out_with_a_note_never_another_number(capsys, tmp_path):
    # q_decimal_comma: '700,00 W' became null with no note
    data = _inventory(capsys, _write(tmp_path, "smi-q.txt", smi_q(2, limit="700,00 W")))
    assert [m["power_limit_w"] for m in data["modules"]] == [None, None]
    assert "700,00 W" in data["modules"][0]["unavailable"]["power_limit_w"]
    said = [n for n in data["notes"] if "700,00 W" in n]
    assert len(said) == 2 and "decimal comma" in said[0]


def test_a_compute_process_in_the_q_makes_doctor_see_other_processes(capsys, tmp_path):
    # issue 46: a python3 process using 70,000 MiB; doctor's other_processes said "can't tell"
    text = smi_q(2).replace(NO_PROCESS, PROCESS, 1)
    path = _write(tmp_path, "smi-q.txt", text)
    data = _inventory(capsys, path)
    assert [m["processes"] for m in data["modules"]] == [[2456], []]  # Xorg (type G) is not a compute process
    assert any("python3" in n and "70000 MiB" in n for n in data["notes"])
    code, doc, _ = _run(capsys, "doctor", "--from", path, "--all", "--json")
    step = _step(doc, "other_processes")  # no symptom, no benchmark: the machine's workload, read and cited
    assert step["status"] == "clear" and "2456" in json.dumps(step)
    code, doc, _ = _run(capsys, "doctor", "compute-below-peak", "--from", path, "--all", "--json")
    step = _step(doc, "other_processes")
    assert step["status"] == "confirmed"
    assert any(f["cause"] == "other_processes" and f.get("evidence", {}).get("pids") == [2456]
               for f in doc["findings"]), doc["findings"]


def test_a_power_limit_below_the_maximum_in_the_new_layout_is_judged(capsys, tmp_path):
    path = _write(tmp_path, "smi-q.txt", smi_q(2, limit="500.00 W"))
    _, doc, _ = _run(capsys, "doctor", "--from", path, "--all", "--json")
    assert _step(doc, "power_limit")["status"] == "confirmed"
    assert any(f["cause"] == "power_cap_low" for f in doc["findings"])


def test_persistence_mode_disabled_is_read_not_unknown(capsys, tmp_path):
    data = _inventory(capsys, _write(tmp_path, "smi-q.txt", smi_q(2, persistence="Disabled")))
    assert [m["persistence_mode"] for m in data["modules"]] == [False, False]


XML_GPU = """<gpu id="{b}">
<product_name>NVIDIA H100 80GB HBM3</product_name><persistence_mode>Enabled</persistence_mode>
<uuid>GPU-{i:08x}-aaaa</uuid><pci><pci_bus_id>{b}</pci_bus_id></pci>
<ecc_mode><current_ecc>Enabled</current_ecc></ecc_mode>
<retired_pages><multiple_single_bit_retirement><retired_count>1</retired_count></multiple_single_bit_retirement>
<double_bit_retirement><retired_count>2</retired_count></double_bit_retirement>
<pending_blacklist>No</pending_blacklist></retired_pages>
<gpu_power_readings><current_power_limit>700.00 W</current_power_limit><default_power_limit>700.00 W</default_power_limit>
<max_power_limit>700.00 W</max_power_limit></gpu_power_readings>
<max_clocks><sm_clock>1980 MHz</sm_clock><mem_clock>2619 MHz</mem_clock></max_clocks>
<processes>{procs}</processes>
</gpu>"""
XML_PROCESS = ("<process_info><gpu_instance_id>N/A</gpu_instance_id><compute_instance_id>N/A</compute_instance_id>"
               "<pid>2456</pid><type>C</type><process_name>python3</process_name><used_memory>70000 MiB</used_memory>"
               "</process_info>")


def test_the_xml_gives_the_same_fields_as_the_text(capsys, tmp_path):
    gpus = [XML_GPU.format(b=_bus(i), i=i, procs=XML_PROCESS if i == 0 else "\n") for i in range(2)]
    text = ('<?xml version="1.0" ?>\n<nvidia_smi_log><driver_version>535.129.03</driver_version>\n'
            + "\n".join(gpus) + "\n</nvidia_smi_log>\n")
    path = _write(tmp_path, "smi.xml", text)
    data = _inventory(capsys, path)
    assert [m["processes"] for m in data["modules"]] == [[2456], []]
    assert [m["persistence_mode"] for m in data["modules"]] == [True, True]
    assert [(m["sm_clock_max_mhz"], m["power_limit_max_w"]) for m in data["modules"]] == [(1980, 700.0)] * 2
    text_path = _write(tmp_path, "smi-q.txt", smi_q(2).replace(NO_PROCESS, PROCESS, 1))
    from gpuvet.captures import read, smi_text, smi_xml

    xml = read.read(path).xml
    assert xml is not None
    from_xml = [smi_xml.health(f"gpu{i}", g).retired_pages for i, g in enumerate(xml.root.findall("gpu"))]
    smi = read.read(text_path).smi
    assert smi is not None
    assert from_xml == [smi_text.health(m).retired_pages for m in smi.modules] == [3, 3]


# --- 6. a -q cut inside a GPU's block ------------------------------------------------------------
def test_a_q_cut_inside_a_gpus_block_is_said_to_be_cut(capsys, tmp_path):
    text = smi_q(8)
    cut = text[: text.index("Max Power Limit", text.index(_bus(4)))]
    data = _inventory(capsys, _write(tmp_path, "smi-q.txt", cut))
    assert len(data["modules"]) == 5
    said = [n for n in data["notes"] if "cut short" in n]
    assert len(said) == 1 and "0000:5C:00.0" in said[0]


def test_a_whole_q_whose_last_gpu_has_no_process_is_not_called_cut(capsys, tmp_path):
    text = smi_q(3).replace(NO_PROCESS, PROCESS, 2)  # the first two have processes, the last none
    data = _inventory(capsys, _write(tmp_path, "smi-q.txt", text))
    assert not [n for n in data["notes"] if "cut short" in n]


# --- 8. one bound of 4,096 modules for -q, -q -x and the AMD listings -------------------------------
def test_a_q_of_more_than_4096_gpus_is_refused_like_the_xml(capsys, tmp_path):
    blocks = "".join(f"GPU 0000{k // 256 + 1:04X}:{k % 256:02X}:00.0\n    Product Name : X\n    GPU UUID : G-{k}\n"
                     for k in range(4097))
    code, _, err = _run(capsys, "inventory", "--from", _write(tmp_path, "smi-q.txt", blocks), "--json")
    assert code == 2
    assert "4,097 GPUs" in err and "4,096" in err


# --- 2, 10. AMD listings: a quoted comma in rocm-smi --csv, a key twice in rocm-smi --json --------------
ROCM_FIELDS = ("Device Name", "Card Series", "Card Vendor", "PCI Bus", "VRAM Total Memory (B)")


def _rocm_card(i: int) -> dict[str, str]:
    return {"Device Name": "AMD Instinct MI300X OAM", "Card Series": "AMD Instinct MI300X OAM",
            "Card Vendor": "Advanced Micro Devices, Inc. [AMD/ATI]", "PCI Bus": f"0000:{0x0C + i * 0x10:02X}:00.0",
            "VRAM Total Memory (B)": "206141652992"}


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_rocm_smi_csv_with_a_quoted_comma_in_the_vendor_reads_every_card(capsys, tmp_path, eol):
    # rocmsmi_csv_8: 0 modules instead of 8 ("Advanced Micro Devices, Inc. [AMD/ATI]" split at its comma)
    rows = ["device," + ",".join(ROCM_FIELDS)]
    rows += [f"card{i}," + ",".join(f'"{v}"' if "," in v else v for v in _rocm_card(i).values()) for i in range(8)]
    data = _inventory(capsys, _write(tmp_path, "rocm.csv", "\ufeff" + eol.join(rows) + eol))
    assert len(data["modules"]) == 8
    assert data["modules"][7]["bus_id"] == "0000:7C:00.0"


def test_rocm_smi_json_with_a_card_twice_says_so_and_keeps_the_first(capsys, tmp_path):
    body = json.dumps({f"card{i}": _rocm_card(i) for i in range(8)})
    text = body[:-1] + ', "card3": ' + json.dumps(_rocm_card(3)) + "}"
    data = _inventory(capsys, _write(tmp_path, "rocm.json", text))
    assert len(data["modules"]) == 8
    assert any("'card3'" in n and "twice" in n for n in data["notes"]), data["notes"]


# --- 3, 5. topo -m: an unknown column title; a second matrix in the file -----------------------------
def topo_m(n: int = 8, cell: str = "NV18", odd: dict[frozenset[int], str] | None = None,
           titles: str = "CPU Affinity\tNUMA Affinity\tGPU NUMA ID") -> str:
    odd = odd or {}
    lines = ["\t" + "\t".join(f"GPU{i}" for i in range(n)) + "\t" + titles]
    for i in range(n):
        cells = [" X " if i == j else odd.get(frozenset((i, j)), cell) for j in range(n)]
        lines.append(f"GPU{i}\t" + "\t".join(cells) + f"\t0-55\t{0 if i < n // 2 else 1}\t\tN/A")
    return "\n".join(lines + ["", "Legend:", "", "  X    = Self", "  NV#  = Connection traversing a bonded set of # "
                              "NVLinks", ""])


def _topo(capsys: pytest.CaptureFixture[str], path: str) -> dict[str, Any]:
    code, data, err = _run(capsys, "topo", "--from", path, "--json")
    assert code in (0, 1), err
    return data


def test_an_unknown_column_title_costs_that_column_not_the_matrix(capsys, tmp_path):
    # topo_nonascii_header: exit 2, "nothing in it is output gpuvet can read"
    text = topo_m(8, titles="Afinidad de CPU ñ\tNUMA Affinity\tGPU NUMA ID")
    data = _topo(capsys, _write(tmp_path, "topo.txt", text))
    assert len(data["modules"]) == 8
    assert any("'Afinidad de CPU ñ'" in n for n in data["notes"]), data["notes"]
    assert any("gpu4 1" in n for n in data["notes"])  # the NUMA Affinity column after it is still read


def test_prose_that_names_gpu0_is_still_no_header(capsys, tmp_path):
    code, _, err = _run(capsys, "topo", "--from", _write(tmp_path, "t.txt", "GPU0\tis slow today\n"), "--json")
    assert code == 2


@pytest.mark.parametrize(("odd", "said"), [
    ({}, "the same as the first"),
    ({frozenset((0, 1)): "NV12"}, "differs from the first (GPU0-GPU1 NV18 then NV12)"),
])
def test_a_second_matrix_in_the_file_is_named_and_compared(capsys, tmp_path, odd, said):
    # topo_twice_in_file, topo_second_capture_differs: "line(s) 21–29: not output gpuvet reads"
    data = _topo(capsys, _write(tmp_path, "topo.txt", topo_m(8) + "\n" + topo_m(8, odd=odd)))
    second = [n for n in data["notes"] if "second matrix" in n]
    assert len(second) == 1 and said in second[0] and "the first one (line 1) is used" in second[0]
    assert not [n for n in data["notes"] if "not output gpuvet reads" in n]
    assert data["matrix"]["gpu0"]["gpu1"]["label"] == "NV18"  # the first matrix's cell


# --- 7. an nccl-tests table that stops mid-run ----------------------------------------------------------
def nccl(tail: bool = True, rows: int = 30) -> str:
    out = ["# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20",
           "#", "# Using devices"]
    out += [f"#  Rank  {r} Group  0 Pid  4242{r} on     node01 device  {r} [0x{0x18 + r:02x}] NVIDIA H100 80GB HBM3"
            for r in range(8)]
    out += ["#", "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
            "   busbw #wrong", "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
            "     (us)  (GB/s)  (GB/s)       "]
    for k in range(rows):
        size = 8 << k
        t = 30.0 + size / 300e3
        cells = f"{t:8.2f} {size / t / 1e3:7.2f} {size / t / 1e3 * 1.75:7.2f}"
        out.append(f"{size:>12} {max(size // 4, 1):>13}     float     sum      -1 {cells}      0 {cells}      0")
    if tail:
        out += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 145.221 ", "#", ""]
    return "\n".join(out) + "\n"


def test_an_nccl_table_without_its_closing_line_is_said_to_be_cut(capsys, tmp_path):
    # nccl_truncated: read as a normal run
    code, doc, _ = _run(capsys, "doctor", "--from", _write(tmp_path, "nccl.log", nccl(tail=False, rows=20)), "--json")
    said = [n for n in doc["notes"] if "Avg bus bandwidth" in n]
    assert len(said) == 1 and "cut" in said[0]
    _, whole, _ = _run(capsys, "doctor", "--from", _write(tmp_path, "whole.log", nccl()), "--json")
    assert not [n for n in whole["notes"] if "Avg bus bandwidth" in n]


# --- 9. a key given twice: spec YAML refused naming the line; a fleet envelope refused naming the file ---
SPEC = """name: dup
modules:
  count: 8
  model: H100-SXM
host:
  sockets: 2
modules:
  count: 4
  model: H100-SXM
"""


def test_a_spec_with_modules_twice_is_refused_naming_both_lines(capsys, tmp_path):
    # spec_dup_keys: the last `modules:` was taken silently
    code, _, err = _run(capsys, "spec", "check", _write(tmp_path, "node.yaml", SPEC), "--json")
    assert code == 2
    assert "line 7" in err and "'modules'" in err and "first at line 2" in err


def test_yaml_merge_keys_are_not_duplicates():
    from gpuvet.node.yamlload import load_bounded

    text = "base: &b\n  a: 1\n  b: 2\nnode:\n  <<: *b\n  a: 3\n"
    assert load_bounded(text, "x.yaml") == {"base": {"a": 1, "b": 2}, "node": {"a": 3, "b": 2}}


def test_an_envelope_with_a_key_twice_is_refused_by_both_readers_naming_the_file(tmp_path):
    # fm_dup_keys: environment.node given twice ('node0', then 'dupkey') was pooled as 'dupkey'
    from gpuvet.errors import GpuvetError
    from gpuvet.fleet import fold
    from gpuvet.fleet.peers import PeerTable

    env = {"schema_version": 1, "simulated": False,
           "environment": {"node": "dupkey", "node_type": "H200", "modules": [{"id": "gpu0"}]},
           "checks": [{"layer": "compute", "name": "m0", "verdict": "pass", "value": 1.0, "unit": "x", "module": "gpu0"}]}
    text = json.dumps(env).replace('"environment": {', '"environment": {"node": "node0", ', 1)
    path = _write(tmp_path, "dupkey.json", text)
    for reader in (fold.fold_file, fold.fold_figures):
        with pytest.raises(GpuvetError) as err:
            reader(PeerTable(), path)
        assert err.value.where == path
        assert "'node' is given twice" in err.value.what and '"node0", then "dupkey"' in err.value.what


@pytest.mark.parametrize(("kind", "words"), [("folder", "a folder"), ("fifo", "a named pipe (FIFO)")])
def test_a_spec_that_is_a_folder_or_a_fifo_is_named_so(capsys, tmp_path, kind, words):
    import os

    path = tmp_path / "node.yaml"
    path.mkdir() if kind == "folder" else os.mkfifo(path)
    code, _, err = _run(capsys, "spec", "check", str(path), "--json")
    assert code == 2 and words in err


# --- 11-14. watch replay and link readers: what is dropped, repeated or implausible is said ------------
def test_nan_and_inf_temperatures_in_a_prometheus_dump_are_noted_and_left_out(capsys, tmp_path):
    # prom_text_nan_inf: kept silently
    rows = ["# TYPE DCGM_FI_DEV_GPU_TEMP gauge"]
    rows += [f'DCGM_FI_DEV_GPU_TEMP{{gpu="0",UUID="GPU-0",Hostname="n1"}} {v} {(1705312800 + 60 * k) * 1000}'
             for k, v in enumerate(["40", "41", "NaN", "+Inf", "42"])]
    code, data, err = _run(capsys, "watch", "--replay", _write(tmp_path, "dump.prom", "\n".join(rows) + "\n"),
                           "--no-log", "--json")
    assert code in (0, 1), err
    said = [n for n in data["notes"] if "not a finite number" in n]
    assert len(said) == 1 and "2 reading(s)" in said[0]


def test_an_empty_telemetry_file_is_said_to_be_empty(capsys, tmp_path):
    code, _, err = _run(capsys, "watch", "--replay", _write(tmp_path, "node07.csv", b""), "--no-log", "--json")
    assert code == 2 and "empty" in err


def _nvlink(gpus: range, speed: str = "26.562 GB/s") -> str:
    return "".join(f"GPU {g}: NVIDIA H100 80GB HBM3 (UUID: GPU-{g})\n" + "".join(
        f"\t Link {k}: {speed if k == 0 else '26.562 GB/s'}\n" for k in range(18)) for g in gpus)


def test_a_gpu_block_of_nvlink_s_given_twice_is_read_once_with_a_note(capsys, tmp_path):
    from gpuvet.captures import read

    fc = read.read(_write(tmp_path, "nvlink.txt", _nvlink(range(8)) + _nvlink(range(1))))
    assert len(fc.nvlink.states) == 8 * 18
    assert any("GPU 0's links are listed again" in n and "the same states" in n for n in fc.notes)


@pytest.mark.parametrize("speed", ["1e308 GB/s", "-5 GB/s"])
def test_an_implausible_link_speed_is_named_as_such(tmp_path, speed):
    from gpuvet.captures import read

    fc = read.read(_write(tmp_path, "nvlink.txt", _nvlink(range(2), speed)))
    assert len(fc.nvlink.states) == 2 * 17
    said = [n for n in fc.notes if "not a plausible link speed" in n]
    assert len(said) == 2 and speed.split()[0] in said[0]
    assert not [n for n in fc.notes if "not output gpuvet reads" in n]


LSPCI = """{bus} 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)
\tSubsystem: NVIDIA Corporation Device 16c1
\tCapabilities: [78] Express (v2) Endpoint, MSI 00
\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported
\t\tLnkSta:\tSpeed 32GT/s, Width x16
\tKernel driver in use: nvidia

"""


def test_an_lspci_device_given_twice_is_read_once_with_a_note(tmp_path):
    from gpuvet.captures import read

    text = "".join(LSPCI.format(bus=f"{0x18 + i * 0x11:02x}:00.0") for i in range(4)) + LSPCI.format(bus="18:00.0")
    fc = read.read(_write(tmp_path, "lspci.txt", text))
    assert len(fc.lspci.links) == 4
    assert any("18:00.0 listed again" in n and "the same readings" in n for n in fc.notes)
