"""Issue 46, dev set dev_m_mon: the monitors users paste beside nvidia-smi (gpustat and its --json, nvidia-smi
pmon, --query-compute-apps, nvidia-top, nvtop -s) read as NVIDIA's modules, and other accelerators' tools
(hl-smi, the habanalabs driver, neuron-ls, tt-smi's reset) read as their vendor's, never as nvidia-smi's.
Each capture is written here in the tool's own format (not copied from the dev set)."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures import read, smi_text
from gpuvet.captures.formats import FileCapture
from gpuvet.captures.records import SmiProcess

GPUSTAT = ("node7                    Tue Mar  4 10:11:12 2025  550.54.15\n"
           "[0] NVIDIA A100-SXM4-80GB | 33°C,  41 %,  87 % (E:   0 %  D:   0 %),  312 / 400 W | 61234 / 81920 MB | "
           "alice:python/41235(61200M)\n"
           "[1] NVIDIA A100-SXM4-80GB | 31°C,  40 %,   0 %,   62 / 400 W |     4 / 81920 MB |\n")

HL_SMI = """+-----------------------------------------------------------------------------+
| HL-SMI Version:                              hl-1.21.0-fw-59.2.1.0          |
| Driver Version:                                     1.21.0-4c4a1b2          |
| Nic Driver Version:                                 1.21.0-4c4a1b2          |
|-------------------------------+----------------------+----------------------+
| AIP  Name       Persistence-M| Bus-Id        Disp.A | Volatile Uncor-Events|
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | AIP-Util  Compute M. |
|===============================+======================+======================|
|   0  HL-325L             N/A  | 0000:97:00.0     N/A |                   0  |
| N/A   34C   P0   231W /  900W |    672MiB / 131072MiB |     0%           N/A |
|-------------------------------+----------------------+----------------------+
|   1  HL-325L             N/A  | 0000:83:00.0     N/A |                   2  |
| N/A   36C   P0   226W /  900W |    672MiB / 131072MiB |     0%           N/A |
|-------------------------------+----------------------+----------------------+
| Compute Processes:                                               AIP Memory |
|  AIP       PID   Type   Process name                             Usage      |
|=============================================================================|
|   0        N/A   N/A    N/A                                      N/A        |
|   1        N/A   N/A    N/A                                      N/A        |
+=============================================================================+
"""


def _read(tmp_path: Path, text: str, name: str = "capture.txt") -> FileCapture:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return read.read(str(path))


def test_gpustat_rows_fill_the_fields_nvidia_smi_would(tmp_path: Path) -> None:
    """Its header's driver, each row's name, temperature, fan, utilisation, power / cap and memory (MiB), the
    processes placed among -q's Processes fields (pid, name, memory); a row showing none lists none."""
    fc = _read(tmp_path, GPUSTAT)
    assert fc.kinds == ["gpustat"] and fc.smi is not None and fc.smi.driver == "550.54.15"
    first, second = fc.smi.modules
    assert first.product == "NVIDIA A100-SXM4-80GB" and first.fields["Index"] == "0"
    assert first.fields["Temperature/GPU Current Temp"] == "33 C" and first.fields["Fan Speed"] == "41 %"
    assert first.fields["Utilization/Gpu"] == "87 %" and first.fields["GPU Power Readings/Current Power Limit"] == "400 W"
    assert first.fields["FB Memory Usage/Total"] == "81920 MiB" and second.fields["FB Memory Usage/Used"] == "4 MiB"
    assert [(p.pid, p.name, p.memory) for p in smi_text.processes(first.fields) or ()] == [
        ("41235", "alice:python", "61200 MiB")]
    assert smi_text.processes(second.fields) == ()


def test_gpustat_without_header_old_quote_unknown_and_cut_rows(tmp_path: Path) -> None:
    """A paste without the header, an older release's 'C, a reading NVML did not give (??), a module NVML
    could not read ((Unknown Error)) and a last row cut after its name."""
    text = ("[0] GeForce GTX 1080 | 61'C,  12 % |  2101 /  8119 MB | bob(2091M)\n"
            "[1] GeForce GTX 1080 | ??'C,  ?? % |    10 /  8119 MB |\n"
            "[2] ((Unknown Error))\n"
            "[3] GeForce GTX 1080 |\n")
    fc = _read(tmp_path, text)
    assert fc.smi is not None and [m.fields.get("Index") for m in fc.smi.modules] == ["0", "1", "2", "3"]
    zero, one, lost, cut = fc.smi.modules
    assert zero.fields["Temperature/GPU Current Temp"] == "61 C" and "Temperature/GPU Current Temp" not in one.fields
    assert len(lost.unread) >= 2 and cut.product == "GeForce GTX 1080" and len(cut.fields) == 2


def test_gpustat_json_is_read(tmp_path: Path) -> None:
    text = ('{\n    "hostname": "node7",\n    "driver_version": "535.104.05",\n    "query_time": "2024-01-02T03:04:05",\n'
            '    "gpus": [\n        {\n            "index": 0,\n'
            '            "uuid": "GPU-0b1c2d3e-aaaa-bbbb-cccc-0123456789ab",\n'
            '            "name": "NVIDIA H100 80GB HBM3",\n            "temperature.gpu": 41,\n'
            '            "fan.speed": null,\n            "utilization.gpu": 0,\n            "power.draw": 71,\n'
            '            "enforced.power.limit": 700,\n            "memory.used": 0,\n            "memory.total": 81559,\n'
            '            "processes": []\n        }\n    ]\n}\n')
    fc = _read(tmp_path, text)
    assert fc.smi is not None and fc.smi.driver == "535.104.05"
    (m,) = fc.smi.modules
    assert m.product == "NVIDIA H100 80GB HBM3" and m.fields["FB Memory Usage/Total"] == "81559 MiB"
    assert m.fields["GPU UUID"].startswith("GPU-0b1c") and "Fan Speed" not in m.fields


def test_pmon_is_read_as_processes_not_as_dmon_samples(tmp_path: Path) -> None:
    """550's column set (jpg, ofa) and a module without a process ('-' in every cell)."""
    text = ("# gpu         pid   type     sm    mem    enc    dec    jpg    ofa    command\n"
            "# Idx           #    C/G      %      %      %      %      %      %    name\n"
            "    0     2231001     C     97     41      -      -      -      -    python3\n"
            "    1          -     -      -      -      -      -      -      -    -\n")
    fc = _read(tmp_path, text)
    assert fc.kinds == ["nvidia-smi pmon"] and not fc.dmon.samples
    assert fc.smi is not None and [m.fields["Index"] for m in fc.smi.modules] == ["0", "1"]
    zero, one = fc.smi.modules
    assert [(p.pid, p.type, p.name) for p in smi_text.processes(zero.fields) or ()] == [("2231001", "C", "python3")]
    assert smi_text.processes(one.fields) == ()


def test_processes_without_a_pid_are_said_never_none(tmp_path: Path) -> None:
    """gpustat without -p prints the user alone: no pid to place; no module's list is then 'none'."""
    fc = _read(tmp_path, GPUSTAT.replace("alice:python/41235", "alice"))
    assert fc.smi is not None and all(smi_text.processes(m.fields) is None for m in fc.smi.modules)
    assert any("1 process(es) without a pid: alice (61200 MiB)" in n for n in fc.smi.notes)


def test_hl_smi_processes_land_on_their_aip(tmp_path: Path) -> None:
    """hl-smi's Compute Processes rows by AIP index, as nvidia-smi's table's; an AIP with an N/A row lists none."""
    fc = _read(tmp_path, HL_SMI.replace("|   0        N/A   N/A    N/A                                      N/A        |",
                                        "|   0      52311     C    python3                                  all        |"))
    first, second = fc.accel.modules
    assert first.processes == (SmiProcess("52311", "C", "python3", "all"),) and second.processes == ()
    assert _read(tmp_path, HL_SMI, "plain.txt").accel.modules[0].processes == ()


def test_query_compute_apps_names_modules_by_bus_id(tmp_path: Path) -> None:
    text = ("$ nvidia-smi --query-compute-apps=pid,process_name,gpu_bus_id,used_memory --format=csv\n"
            "pid, process_name, gpu_bus_id, used_memory [MiB]\n"
            "81234, /usr/bin/python3, 00000000:18:00.0, 40211 MiB\n"
            "81240, /usr/bin/python3, 00000000:2A:00.0, 40211 MiB\n")
    fc = _read(tmp_path, text)
    assert fc.smi is not None and [m.bus_id for m in fc.smi.modules] == ["0000:18:00.0", "0000:2A:00.0"]


def test_hl_smi_is_intel_gaudi_not_an_nvidia_table(tmp_path: Path) -> None:
    """Gaudi 3's table (Uncor-Events column, Nic driver line): the modules are Intel's, with bus id, memory,
    temperature and power cap; nothing is read as nvidia-smi's table."""
    fc = _read(tmp_path, HL_SMI)
    assert fc.kinds == ["hl-smi"] and fc.smi is None and fc.accel.driver == "1.21.0-4c4a1b2"
    first, second = fc.accel.modules
    assert first.name == "Intel Gaudi 3 (HL-325L)" and first.bus_id == "0000:97:00.0"
    assert first.memory_mib == 131072 and first.temperature_c == 34 and first.power_limit_w == 900
    assert second.ras == (("hl-smi: volatile uncorrectable", "2"),)


def test_habanalabs_lines_name_the_device_not_usable(tmp_path: Path) -> None:
    text = ("[   12.100000] habanalabs 0000:4d:00.0: habanalabs device found [1da3:1020] (rev 1)\n"
            "[   40.200000] habanalabs hl3: Failed to communicate with Device CPU (CPU-CP timeout)\n"
            "[   40.200100] habanalabs 0000:4d:00.0: Failed to initialize hl3. Device is NOT usable !\n")
    fc = _read(tmp_path, text)
    (m,) = [m for m in fc.accel.modules if m.label == "hl3"]
    assert m.bus_id == "0000:4D:00.0" and m.ras and m.ras[0][0] == "habanalabs: device not usable"


def test_neuron_ls_2x_with_processes(tmp_path: Path) -> None:
    text = ("instance-type: trn1.32xlarge\ninstance-id: i-0abc123def4567890\n"
            "+--------+--------+--------+-----------+---------+--------+------------+---------+\n"
            "| NEURON | NEURON | NEURON | CONNECTED |   PCI   |  PID   |  COMMAND   | RUNTIME |\n"
            "| DEVICE | CORES  | MEMORY |  DEVICES  |   BDF   |        |            | VERSION |\n"
            "+--------+--------+--------+-----------+---------+--------+------------+---------+\n"
            "| 0      | 2      | 32 GB  | 12, 3, 4  | 10:1c.0 | 7121   | python3 …  | 2.19.0  |\n"
            "| 1      | 2      | 32 GB  | 13, 0, 5  | 10:1d.0 | 7121   | python3 …  | 2.19.0  |\n"
            "+--------+--------+--------+-----------+---------+--------+------------+---------+\n")
    fc = _read(tmp_path, text)
    assert fc.kinds == ["neuron-ls"] and [m.name for m in fc.accel.modules] == ["AWS Trainium"] * 2
    assert fc.accel.modules[0].bus_id == "10:1C.0" and fc.accel.modules[0].memory_mib == 32 * 1024


def test_tt_smi_reset_that_completed_is_ok(tmp_path: Path) -> None:
    text = (" Starting PCI link reset on WH devices at PCI indices: 0, 1 \n"
            " Finishing PCI link reset on WH devices at PCI indices: 0, 1 \n"
            " Re-initializing boards after reset.... \n Detected Chips: 2\n")
    fc = _read(tmp_path, text)
    assert [(m.name, m.ras) for m in fc.accel.modules] == [("Tenstorrent Wormhole", (("tt-smi: reset", "completed"),))] * 2


def test_nvtop_snapshot_keeps_each_vendor(tmp_path: Path) -> None:
    text = ('[\n  {\n   "device_name": "NVIDIA GeForce RTX 4090",\n   "gpu_clock": "2520MHz",\n   "mem_clock": "10501MHz",\n'
            '   "temp": "63C",\n   "fan_speed": "41%",\n   "power_draw": "402W",\n   "gpu_util": "99%",\n'
            '   "mem_util": "71%"\n  }\n]\n')
    fc = _read(tmp_path, text)
    assert fc.smi is not None and fc.smi.modules[0].product == "NVIDIA GeForce RTX 4090"
    assert fc.smi.modules[0].fields["Temperature/GPU Current Temp"] == "63 C" and not fc.accel.modules


def test_hl_smi_query_and_csv_are_gaudi_not_nvidia_smi(tmp_path: Path) -> None:
    """hl-smi -q's AIP blocks ('Key : value', as nvidia-smi -q prints) and -Q's CSV (as --query-gpu's): read as
    Intel Gaudi's modules, never as nvidia-smi's; the module status and pending row replacements kept as its words."""
    query = ("================ HL-SMI LOG ================\n\nDriver Version                          : 1.20.0-bd4d0b0\n"
             "Attached AIPs                           : 8\n\n[3] AIP (accel3) 0000:b3:00.0\n"
             "        Product Name                    : HL-225\n        Module status                   : Operational\n"
             "        Memory Usage\n                Total                   : 98304 MB\n"
             "        Temperature\n                [ 1] On Chip 0          :  31 C\n"
             "        Power Readings (54V PSU)\n                Power Limit             : 550 W\n"
             "        Replaced Rows\n                Pending                 : Yes\n")
    fc = _read(tmp_path, query)
    assert fc.smi is None and fc.kinds == ["hl-smi -q"]
    (m,) = fc.accel.modules
    assert (m.label, m.name, m.bus_id, m.memory_mib, m.temperature_c, m.power_limit_w) == (
        "AIP 3", "Intel Gaudi 2 (HL-225)", "0000:B3:00.0", 98304, 31, 550)
    assert ("hl-smi: Replaced Rows pending", "Yes") in m.ras
    csv = ("index, name, bus_id, temperature.aip, memory.total [MiB]\n"
           "0, HL-205, 0000:19:00.0, 35 C, 32768 MiB\n1, HL-205, 0000:b3:00.0, 28 C, 32768 MiB\n")
    fc = _read(tmp_path, csv, "q.csv")
    assert fc.smi is None and [m.name for m in fc.accel.modules] == ["Intel Gaudi (HL-205)"] * 2


def test_nvitop_once_is_read_as_nvidia_smi_table_is(tmp_path: Path) -> None:
    """nvitop -1's box-drawn table (memory in GiB with decimals, a bar column beside it) and its compact rows."""
    text = ("╒═════════════════════════════════════════════════════════════════════════════╕\n"
            "│ NVITOP 1.5.0       Driver Version: 560.35.03      CUDA Driver Version: 12.6 │\n"
            "├───────────────────────────────┬──────────────────────┬──────────────────────┤\n"
            "│ GPU  Name        Persistence-M│ Bus-Id        Disp.A │ MIG M.   Uncorr. ECC │\n"
            "│ Fan  Temp  Perf  Pwr:Usage/Cap│         Memory-Usage │ GPU-Util  Compute M. │\n"
            "╞═══════════════════════════════╪══════════════════════╪══════════════════════╪══════════════╕\n"
            "│   0  L40S                 On  │ 00000000:81:00.0 Off │ N/A                0 │ MEM: ▏ 0.1%  │\n"
            "│ N/A   29C    P8    33W / 350W │  44.25MiB / 44.99GiB │      0%      Default │ UTL: ▏ 0%    │\n"
            "╘═══════════════════════════════╧══════════════════════╧══════════════════════╧══════════════╛\n")
    fc = _read(tmp_path, text)
    assert fc.kinds == ["nvitop"] and fc.smi is not None and fc.smi.driver == "560.35.03" and fc.smi.cuda == "12.6"
    (m,) = fc.smi.modules
    assert (m.product, m.bus_id, m.fields["FB Memory Usage/Total"]) == ("L40S", "0000:81:00.0", "46070 MiB")
    assert m.fields["GPU Power Readings/Current Power Limit"] == "350 W"
    assert m.fields["Temperature/GPU Current Temp"] == "29 C"


def test_hl_smi_banner_alone_is_read_with_its_driver(tmp_path: Path) -> None:
    """A paste cut after hl-smi's banner: read as hl-smi (its driver said), no module listed, not refused."""
    fc = _read(tmp_path, "\n".join(HL_SMI.splitlines()[:5]) + "\n")
    assert fc.kinds == ["hl-smi"] and not fc.accel.modules and fc.accel.driver == "1.21.0-4c4a1b2"


def test_tt_smi_snapshot_lists_chips_and_judges_dram_and_silent_ones(tmp_path: Path) -> None:
    """tt-smi -s: each chip's board type (Wormhole n300 L/R), bus id and temperature; DRAM not trained, or a chip
    whose board_info and telemetry came back empty, is a verdict on it."""
    text = ('{\n    "time": "2025-06-01T10:00:00",\n    "device_info": [\n'
            '        {"board_info": {"bus_id": "0000:04:00.0", "board_type": "n300 L", "board_id": "0100007311523010",'
            ' "dram_status": true}, "telemetry": {"asic_temperature": "46.1"}},\n'
            '        {"board_info": {"bus_id": "N/A", "board_type": "n300 R", "board_id": "0100007311523010",'
            ' "dram_status": false}, "telemetry": {"asic_temperature": "44.0"}},\n'
            '        {"board_info": {}, "telemetry": {}}\n    ]\n}\n')
    fc = _read(tmp_path, text)
    first, second, third = fc.accel.modules
    assert fc.kinds == ["tt-smi -s"] and first.name == "Tenstorrent Wormhole n300 L" and first.bus_id == "0000:04:00.0"
    assert first.temperature_c == 46.1 and ("tt-smi: dram_status", "false") in second.ras
    assert ("tt-smi: chip not answering", "board_info and telemetry empty") in third.ras
