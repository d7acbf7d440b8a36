"""Issue 46: the SYCL runtime's device lists (one module per card, however many backends list it; CPUs and FPGA
emulation host devices), Axera's axcl-smi table and Gaudi's hl-smi-async telemetry, read as modules."""

from __future__ import annotations

import time
from pathlib import Path

from gpuvet.captures import accel_tools, axcl_smi, compute_listing, hl_smi_async, npu_smi, sycl_devices
from gpuvet.captures.records import ListedParse
from gpuvet.captures.text import Line, clean
from tests.support.helpers import capture_json

_SYCL_LS = (
    "[opencl:acc][opencl:0] Intel(R) FPGA Emulation Platform for OpenCL(TM), "
    "Intel(R) FPGA Emulation Device 1.2 [2024.18.7.0.11_160000]\n"
    "[opencl:cpu][opencl:1] Intel(R) OpenCL, INTEL(R) XEON(R) PLATINUM 8580 3.0 [2024.18.7.0.11_160000]\n"
    "[opencl:gpu][opencl:2] Intel(R) OpenCL Graphics, Intel(R) Data Center GPU Max 1550 OpenCL 3.0 NEO  [24.22.29735.27]\n"
    "[opencl:gpu][opencl:3] Intel(R) OpenCL Graphics, Intel(R) Data Center GPU Max 1550 OpenCL 3.0 NEO  [24.22.29735.27]\n"
    "[level_zero:gpu][level_zero:0] Intel(R) Level-Zero, Intel(R) Data Center GPU Max 1550 12.60.7 [1.3.29735]\n"
    "[level_zero:gpu][level_zero:1] Intel(R) Level-Zero, Intel(R) Data Center GPU Max 1550 12.60.7 [1.3.29735]\n"
)


def _read(reader: object, text: str) -> ListedParse:
    out = ListedParse()
    reader(clean(text).lines, out)  # type: ignore[operator]
    return out


def test_sycl_ls_two_cards_through_two_backends_are_two_modules() -> None:
    out = _read(sycl_devices.read, _SYCL_LS)
    assert [m.name for m in out.modules] == ["Intel(R) Data Center GPU Max 1550"] * 2
    assert out.host_cpus == ["INTEL(R) XEON(R) PLATINUM 8580"]
    said = " ".join(out.notes)
    assert "opencl, level_zero" in said and "level_zero 1.3.29735" in said and "FPGA Emulation Device (acc" in said
    assert out.driver == "24.22.29735.27"


def test_sycl_ls_2022_form_and_a_cuda_backend() -> None:
    out = _read(sycl_devices.read, "[opencl:0] GPU : Intel(R) OpenCL HD Graphics 3.0 [21.49.21786]\n"
                                   "[ext_oneapi_cuda:gpu:0] NVIDIA CUDA BACKEND, NVIDIA A100-SXM4-80GB 8.0 [CUDA 12.2]\n"
                                   "[host:0] HOST: SYCL host platform 1.2 [1.2]\n")
    # before 2023 a GPU line names its platform ('Intel(R) OpenCL HD Graphics'), never the device: model unknown
    assert [m.name for m in out.modules] == [None, "NVIDIA A100-SXM4-80GB"]
    assert any("cuda" in n for n in out.notes)


def test_only_cpus_and_emulation_list_no_module() -> None:
    out = _read(sycl_devices.read, _SYCL_LS.split("\n", 2)[0] + "\n" + _SYCL_LS.split("\n", 2)[1] + "\n")
    assert out.modules == [] and out.host_cpus == ["INTEL(R) XEON(R) PLATINUM 8580"]


def test_syclinfo_listing_and_its_driver_version() -> None:
    out = _read(sycl_devices.read, "Available SYCL Devices:\n"
                                   "[0] Intel(R) UHD Graphics 770 | Intel(R) Level-Zero\n"
                                   "[1] Intel(R) UHD Graphics 770 | Intel(R) OpenCL Graphics\n"
                                   "[2] 12th Gen Intel(R) Core(TM) i9-12900K | Intel(R) OpenCL\n\n"
                                   "Platform: Intel(R) Level-Zero  |  Device Name: Intel(R) UHD Graphics 770\n"
                                   "Driver Version: 1.3.26241\nGlobal Mem Size: 2147483648\n")
    assert [(m.name, m.memory_mib) for m in out.modules] == [("Intel(R) UHD Graphics 770", 2048.0)]
    assert out.driver == "1.3.26241" and out.host_cpus == ["12th Gen Intel(R) Core(TM) i9-12900K"]


def test_llama_cpp_old_list_and_its_table() -> None:
    old = _read(sycl_devices.read, "found 3 SYCL devices:\n"
                                   "  Device 0: Intel(R) Arc(TM) A750 Graphics,\tcompute capability 1.3,\n"
                                   "\tmax compute_units 448,\tmax work group size 1024,\tglobal mem size 8096681984\n"
                                   "  Device 1: Intel(R) Arc(TM) A750 Graphics,\tcompute capability 3.0,\n"
                                   "\tmax compute_units 448,\tmax work group size 1024,\tglobal mem size 8096681984\n"
                                   "  Device 2: Intel(R) FPGA Emulation Device,\tcompute capability 1.2,\n")
    assert [m.name for m in old.modules] == ["Intel(R) Arc(TM) A750 Graphics"]
    assert old.modules[0].memory_mib == 8096681984 / 2**20 and old.host_cpus == []
    table = _read(sycl_devices.read,
                  "|ID|        Device Type|                 Name|Version|units  |group   |group|size   |  Driver version|\n"
                  "|--|-------------------|---------------------|-------|-------|--------|-----|-------|----------------|\n"
                  "| 0| [level_zero:gpu:0]| Intel Arc A770 Graphics|    1.3|    512|    1024|   32| 16225M|  1.3.27642|\n"
                  "| 1| [opencl:gpu:0]| Intel Arc A770 Graphics|    3.0|    512|    1024|   32| 16225M| 23.43.27642.40|\n"
                  "| 2| [opencl:cpu:0]| 13th Gen Intel Core i7-13700K|    3.0|     24|    8192|   64| 67065M| 2023.16|\n")
    assert [(m.name, m.memory_mib) for m in table.modules] == [("Intel Arc A770 Graphics", 16225.0)]
    assert table.host_cpus == ["13th Gen Intel Core i7-13700K"]


_AXCL = """+------------------------------------------------------------------------------------------------+
| AXCL-SMI  V3.0.0                                                               Driver  V3.0.0  |
+-----------------------------------------+--------------+---------------------------------------+
| Card  Name                     Firmware | Bus-Id       |                          Memory-Usage |
| Fan   Temp                Pwr:Usage/Cap | CPU      NPU |                             CMM-Usage |
|=========================================+==============+=======================================|
|    0  AX650N                     V3.0.0 | 0000:01:00.0 |                170 MiB /      945 MiB |
|   --   61C                      -- / -- | 2%       40% |                 18 MiB /     7040 MiB |
+-----------------------------------------+--------------+---------------------------------------+
|    1  AX650N                     V3.0.0 | 0000:02:00.0 |                170 MiB /      945 MiB |
|   --   58C                      -- / -- | 1%        0% |                 18 MiB /     7040 MiB |
+-----------------------------------------+--------------+---------------------------------------+
| Processes:                                                                                     |
| Card      PID  Process Name                                                   NPU Memory Usage |
|================================================================================================|
|    0     1201  ./ax_yolo                                                               4096 KiB |
"""


def test_axcl_smi_cards_and_processes() -> None:
    out = _read(axcl_smi.read, _AXCL)
    assert [(m.label, m.name, m.bus_id, m.temperature_c) for m in out.modules] == [
        ("Card 0", "Axera AX650N", "0000:01:00.0", 61.0), ("Card 1", "Axera AX650N", "0000:02:00.0", 58.0)]
    assert out.driver == "V3.0.0" and out.modules[0].memory_mib == 945
    assert out.modules[0].state is not None and out.modules[0].state.busy_pct == 40
    assert [p.pid for p in out.modules[0].processes or ()] == ["1201"] and out.modules[1].processes == ()
    assert accel_tools.vendor(out) == "Axera"


def test_hl_smi_async_telemetry_is_one_device_s_readings() -> None:
    out = _read(hl_smi_async.read, "$ sudo hl-smi-async -D 0000:b1:00.0 -O console -L info -I 5\n"
                                   "Timestamp: 100 ms, Packet: Temperature, Field: temperature.aip, Data: 52\n"
                                   "Timestamp: 110 ms, Packet: Power, Field: power.draw.54v, Data: 420\n"
                                   "Timestamp: 120 ms, Packet: Perf, Field: utilization.aip, Data: 97\n")
    [m] = out.modules
    assert (m.bus_id, m.temperature_c) == ("0000:B1:00.0", 52.0)
    assert m.state is not None and (m.state.power_w, m.state.busy_pct) == (420.0, 97.0)
    assert accel_tools.vendor(out) == "Intel Gaudi"


def test_hostile_lines_read_in_linear_time() -> None:
    def cpu_time(n: int) -> float:
        text = ("[opencl:gpu][opencl:0] " + "a" * 50_000 + ", " + "b " * 25_000 + "\n"
                + "|    0  AX650N  V1 | " + "9" * 100_000 + "\n" + "Timestamp: 1 ms, Packet: " + "x" * 100_000 + "\n"
                + _SYCL_LS * n + _AXCL * n + "Timestamp: 1 ms, Packet: Power, Field: power.draw, Data: 1\n" * n)
        lines = clean(text).lines
        t = time.process_time()
        for reader in (sycl_devices.read, axcl_smi.read, hl_smi_async.read):
            reader(lines, ListedParse())
        return time.process_time() - t

    small, big = cpu_time(100), cpu_time(1600)
    assert big < 40 * max(small, 1e-3)  # 16x the input: linear ~16x, quadratic ~256x


def test_sycl_ls_2022_cpu_entry_names_its_platform_not_the_host_cpu() -> None:
    out = _read(sycl_devices.read, "[opencl:0] GPU : Intel(R) OpenCL HD Graphics 3.0 [21.49.21786]\n"
                                   "[opencl:0] CPU : Intel(R) OpenCL 3.0 [2021.12.9.0.24_005321]\n")
    assert [m.name for m in out.modules] == [None] and out.host_cpus == []


_SYCL_2022 = ("[opencl:0] ACC : Intel(R) FPGA Emulation Platform for OpenCL(TM) 1.2 [2021.12.9.0.24_005321]\n"
              "[opencl:0] CPU : Intel(R) OpenCL 3.0 [2021.12.9.0.24_005321]\n"
              "[opencl:0] GPU : Intel(R) OpenCL HD Graphics 3.0 [21.49.21786]\n"
              "[level_zero:0] GPU : Intel(R) Level-Zero 1.3 [1.3.21786]\n"
              "[host:0] HOST: SYCL host platform 1.2 [1.2]\n")


def test_sycl_ls_2022_one_gpu_through_two_platforms_is_one_card_of_unknown_model() -> None:
    """Intel's docs: before 2023 one GPU is two lines, each naming its platform (OpenCL, Level-Zero)."""
    out = _read(sycl_devices.read, _SYCL_2022)
    assert [m.name for m in out.modules] == [None] and out.host_cpus == []
    said = " ".join(out.notes)
    assert "model not printed" in said and "Intel(R) OpenCL (cpu platform" in said  # 'Intel(R) OpenCL', not 'Intel(R)'


def test_syclinfo_gpus_of_cuda_and_hip_backends_are_gpus_never_the_host_cpu() -> None:
    out = _read(sycl_devices.read, "Available SYCL Devices:\n"
                                   "[0] NVIDIA A100-SXM4-80GB | NVIDIA CUDA BACKEND\n"
                                   "[1] NVIDIA A100-SXM4-80GB | NVIDIA CUDA BACKEND\n"
                                   "[2] AMD Instinct MI210 | AMD HIP BACKEND\n"
                                   "[3] AMD EPYC 7763 64-Core Processor | Intel(R) OpenCL\n")
    assert [m.name for m in out.modules] == ["NVIDIA A100-SXM4-80GB"] * 2 + ["AMD Instinct MI210"]
    assert out.host_cpus == ["AMD EPYC 7763 64-Core Processor"]


def test_two_identical_cuda_cards_are_two_and_one_listing_is_one_reader() -> None:
    text = ("[cuda:gpu][cuda:0] NVIDIA CUDA BACKEND, NVIDIA A100-SXM4-80GB 8.0 [CUDA 12.2]\n"
            "[cuda:gpu][cuda:1] NVIDIA CUDA BACKEND, NVIDIA A100-SXM4-80GB 8.0 [CUDA 12.2]\n")
    assert [m.name for m in _read(sycl_devices.read, text).modules] == ["NVIDIA A100-SXM4-80GB"] * 2
    devices, claimed = compute_listing.sycl_ls(clean(text).lines)
    assert [d.name for d in devices] == ["NVIDIA A100-SXM4-80GB"] * 2 and len(claimed) == 2


def test_a_listing_pasted_twice_counts_each_backend_device_once() -> None:
    one = ("[level_zero:gpu][level_zero:0] Intel(R) Level-Zero, Intel(R) Arc(TM) A770 Graphics 12.55.8 [1.3.26918]\n"
           "[opencl:gpu][opencl:0] Intel(R) OpenCL Graphics, Intel(R) Arc(TM) A770 Graphics OpenCL 3.0 NEO  "
           "[23.30.26918.50]\n")
    text = "$ sycl-ls\n" + one + "$ ONEAPI_DEVICE_SELECTOR=level_zero:* sycl-ls\n" + one.split("\n")[0] + "\n"
    assert [m.name for m in _read(sycl_devices.read, text).modules] == ["Intel(R) Arc(TM) A770 Graphics"]


def test_ext_oneapi_level_zero_device_numbers_are_read() -> None:
    text = "".join(f"[ext_oneapi_level_zero:gpu][ext_oneapi_level_zero:{n}] Intel(R) Level-Zero, Intel(R) Data Center "
                   "GPU Max 1550 1.3 [1.3.26516]\n" for n in range(4))
    assert [m.name for m in _read(sycl_devices.read, text).modules] == ["Intel(R) Data Center GPU Max 1550"] * 4


def test_sycl_lines_of_spaces_and_an_open_bracket_read_in_linear_time() -> None:
    """A 100 KB line of spaces then an unclosed '[' (every form's tail) costs its length, never its square."""
    def cpu_time(size: int) -> float:
        lines = clean("".join(head + ", x" + " " * size + "[\n" for head in (
            "[level_zero:gpu][level_zero:0] Intel(R) Level-Zero", "[opencl:0] GPU : Intel(R) OpenCL",
            "[0] Intel(R) Arc(TM) A770 Graphics | Intel(R) Level-Zero")) + "Available SYCL Devices:\n").lines
        t = time.process_time()
        for _ in range(20):
            sycl_devices.read(lines, ListedParse())
            compute_listing.sycl_ls(lines)
            compute_listing.missing(lines, 0)
        return time.process_time() - t

    small, big = cpu_time(6_250), cpu_time(100_000)
    assert big < 40 * max(small, 1e-3)  # 16x the line: linear ~16x, quadratic ~256x


def test_syclinfo_details_of_many_entries_read_in_linear_time() -> None:
    def cpu_time(n: int) -> float:
        entry = "[0] Intel(R) UHD Graphics 770 | Intel(R) Level-Zero\n"
        detail = "Platform: Intel(R) Level-Zero | Device Name: Intel(R) UHD Graphics 770\nDriver Version: 1.3\n" \
                 "Global Mem Size: 2147483648\n"
        lines = clean("Available SYCL Devices:\n" + entry * n + detail * n).lines
        t = time.process_time()
        sycl_devices.read(lines, ListedParse())
        return time.process_time() - t

    small, big = cpu_time(250), cpu_time(4000)
    assert big < 40 * max(small, 1e-3)


def test_a_sycl_ls_of_two_nvidia_cards_is_one_node_of_two(tmp_path: Path) -> None:
    """Two identical CUDA-backend cards: two modules, named by the device, and no note of a second machine."""
    data = capture_json(tmp_path, "[cuda:gpu][cuda:0] NVIDIA CUDA BACKEND, NVIDIA A100-SXM4-80GB 8.0 [CUDA 12.2]\n"
                                  "[cuda:gpu][cuda:1] NVIDIA CUDA BACKEND, NVIDIA A100-SXM4-80GB 8.0 [CUDA 12.2]\n"
                                  "[opencl:cpu][opencl:0] Intel(R) OpenCL, AMD EPYC 7763 64-Core Processor OpenCL 3.0 "
                                  "(Build 0) [2023.16.7.0.21_160000]\n", "inventory")
    modules = data["modules"]
    assert isinstance(modules, list) and [m["model"] for m in modules] == ["NVIDIA A100-SXM4-80GB"] * 2
    assert not any("left out of this node" in n for n in data["notes"])  # type: ignore[attr-defined]


def test_a_file_of_another_vendor_names_the_sycl_list_in_plain_words(tmp_path: Path) -> None:
    data = capture_json(tmp_path, "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-12345678-1234-1234-1234-123456789abc)\n"
                                  "[level_zero:gpu][level_zero:0] Intel(R) Level-Zero, Intel(R) Arc(TM) A770 Graphics "
                                  "12.55.8 [1.3.26918]\n", "inventory")
    said = " ".join(data["notes"])  # type: ignore[arg-type]
    assert "also holds the SYCL runtime's SYCL device list" in said and "devices's" not in said


_HL_RUN = ("Timestamp: 100 ms, Packet: Temperature, Field: temperature.aip, Data: {t}\n"
           "Timestamp: 120 ms, Packet: Perf, Field: utilization.aip, Data: {u}\n")


def test_hl_smi_async_runs_of_two_devices_are_two_cards_never_one() -> None:
    out = _read(hl_smi_async.read, "$ sudo hl-smi-async -D 0000:b1:00.0 -O console -L info -I 5\n"
                + _HL_RUN.format(t=52, u=97) + "$ sudo hl-smi-async -D 0000:b2:00.0 -O console -L info -I 5\n"
                + _HL_RUN.format(t=61, u=0))
    assert [(m.bus_id, m.temperature_c) for m in out.modules] == [("0000:B1:00.0", 52.0), ("0000:B2:00.0", 61.0)]
    assert [m.state.busy_pct for m in out.modules if m.state] == [97.0, 0.0]


def test_hl_smi_async_runs_naming_no_device_put_their_readings_on_no_card() -> None:
    out = _read(hl_smi_async.read, "$ for d in 0000:b1:00.0 0000:b2:00.0; do sudo hl-smi-async -D $d -O console; done\n"
                "Starting telemetry data collection\n" + _HL_RUN.format(t=52, u=97)
                + "Starting telemetry data collection\n" + _HL_RUN.format(t=95, u=0))
    assert out.modules == [] and sum("on no card" in n for n in out.notes) == 2


def test_axcl_smi_tables_repeated_are_each_card_once_with_its_processes_once() -> None:
    out = _read(axcl_smi.read, ("$ axcl-smi\n" + _AXCL) * 3)
    assert [m.label for m in out.modules] == ["Card 0", "Card 1"]
    assert [p.pid for p in out.modules[0].processes or ()] == ["1201"] and out.modules[1].processes == ()
    assert len(out.notes) == len(set(out.notes)) == 3


def test_axcl_smi_watch_log_is_bounded_and_linear() -> None:
    def cpu_time(n: int) -> tuple[float, ListedParse]:
        lines = clean(("$ axcl-smi\n" + _AXCL) * n).lines
        t = time.process_time()
        out = _read_lines(axcl_smi.read, lines)
        return time.process_time() - t, out

    (small, _), (big, out) = cpu_time(200), cpu_time(3200)
    assert len(out.modules) == 2 and len(out.notes) == 3 and len(out.modules[0].processes or ()) == 1
    assert big < 40 * max(small, 1e-3)


def _read_lines(reader: object, lines: list[Line]) -> ListedParse:
    out = ListedParse()
    reader(lines, out)  # type: ignore[operator]
    return out


def test_npu_smi_process_row_of_dashes_is_no_process_and_no_cut_chip() -> None:
    out = npu_smi.parse(clean(
        "+-----------------------+-----------------+------------------------------------------+\n"
        "| npu-smi 23.0.rc2                      Version: 23.0.rc2                            |\n"
        "+-----------------------+-----------------+------------------------------------------+\n"
        "| NPU     Name          | Health          | Power(W)     Temp(C)    Hugepages-Usage(page) |\n"
        "| Chip    Device        | Bus-Id          | AICore(%)    Memory-Usage(MB)             |\n"
        "+=======================+=================+==========================================+\n"
        "| 0       310B4         | OK              | 0.0          52         15    / 15        |\n"
        "| 0       0             | NA              | 0            3123 / 15609                 |\n"
        "+=======================+=================+==========================================+\n"
        "| NPU     Chip          | Process id      | Process name             | Process memory(MB) |\n"
        "+=======================+=================+==========================================+\n"
        "| 0       0             | -               | -                        | -                  |\n"
        "+=======================+=================+==========================================+\n").lines)
    assert [m.name for m in out.modules] == ["310B4"]
    assert not any("cut" in n for n in out.notes) and 12 in out.claimed
