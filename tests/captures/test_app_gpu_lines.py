"""The GPU lines of programs people run on their own GPUs (issue 46, APPX): miners, hashcat, Folding@home and
ffmpeg's encoders. Each card is named by the program's index or by the bus id its log lists for that index; each
message is one fact (an unstable card, a sensor NVML cannot read, a card at its temperature limit, a stopped fan,
CUDA not ready at start, an encoder the driver refuses); their healthy lines are read and judge nothing. Lines
written in the programs' formats (their sources or logs as printed), figures and addresses made up; the batch AC
rows are read as one check each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.captures import app_gpu_lines
from gpuvet.captures.text import clean
from gpuvet.cli.app import main

ROWS = Path(__file__).parents[1] / "data" / "captures" / "fresh_ac"

TREX_LIST = """20211219 17:26:44 NVIDIA Driver v472.12
20211219 17:26:44 + GPU #0: [00:01.0|1f06] Colorful GeForce RTX 2060 SUPER, 8192 MB
20211219 17:26:44 + GPU #1: [00:03.0|1f06] Colorful GeForce RTX 2060 SUPER, 8192 MB
20211219 17:26:44 + GPU #2: [00:04.0|1f06] Colorful GeForce RTX 2060 SUPER, 8192 MB
"""
TREX_OK = """20211219 17:30:01 [ OK ] 12/12 - 120.31 MH/s, 31ms ... GPU #0
20211219 17:30:02 GPU #1: Colorful GeForce RTX 2060 SUPER - 40.11 MH/s, [T:61C, P:120W, F:70%, E:334kH/W], 4/4 R:0%
"""


def _doctor(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> tuple[int, list[tuple[str, str, str]]]:
    path = tmp_path / "log.txt"
    path.write_text(text)
    code = main(["doctor", "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    if not out.strip():
        return code, []
    return code, [(f["cause"], str(f["module"]), f["severity"]) for f in json.loads(out)["findings"]]


def _events(text: str) -> list[tuple[str, str, int]]:
    return [(e.kind, e.module, e.count) for e in app_gpu_lines.parse(clean(text).lines).events]


def test_a_miners_cuda_error_on_one_card_is_that_card_unstable_by_its_bus_where_the_log_lists_it() -> None:
    bad = "20211219 17:31:00 TREX: Can't find nonce with device [ID=2, GPU #2], cuda exception: CUDA_ERROR_UNKNOWN\n"
    assert _events(TREX_LIST + TREX_OK + bad + bad) == [("app_compute_error", "0000:00:04.0", 2)]
    phoenix = "2021.09.24:22:57:10.022: GPU3: CUDA error in CudaProgram.cu:474 : an illegal memory access was " \
              "encountered (700)\n"
    assert _events(phoenix) == [("app_compute_error", "GPU #3", 1)]  # no list: the miner's own index


def test_xmrig_compute_errors_and_a_stopped_fan_on_a_hot_card_beside_a_spinning_peer() -> None:
    text = ("[2024-02-01 10:00:00.100]  cuda     #0 0a:00.0 190W 84C 1800/7000 MHz fan0:0%\n"
            "[2024-02-01 10:00:00.101]  cuda     #1 0b:00.0 150W 70C 1800/7000 MHz fan0:45%\n"
            "[2024-02-01 10:00:05.000]  cuda     GPU #0 COMPUTE ERROR\n")
    assert sorted(_events(text)) == [("app_compute_error", "0000:0A:00.0", 1),
                                     ("app_fan_stopped_hot", "0000:0A:00.0", 1)]
    alone = "[2024-02-01 10:00:00.100]  cuda     #0 0a:00.0 190W 84C 1800/7000 MHz fan0:0%\n"
    assert _events(alone) == []  # no peer spins: a fan that reads 0 on its own says nothing certain


def test_nvml_999_is_that_cards_sensors_and_not_supported_is_a_passive_board() -> None:
    text = ("20211219 17:26:36 WARN: NVML: can't get fan speed for GPU #1, error code 999\n"
            "20211219 17:26:37 WARN: NVML: can't get power for GPU #1, error code 999\n"
            "2018.07.23:11:10:42.908: hwmc GPU4: unable to get fan speed - Unknown Error (999)\n"
            " WARN: NVML: can't get fan speed for GPU #0, not supported\n")
    assert _events(text) == [("app_nvml_unknown", "GPU #1", 2), ("app_nvml_unknown", "GPU #4", 1)]


def test_hashcat_temperature_lines_are_the_card_at_its_limit_or_throttling() -> None:
    text = ("Hardware.Mon.#2..: Temp: 91c Fan: 100% Util:100% Core:1700MHz Mem:5000MHz Bus:16\n"
            "Driver temperature threshold met on GPU #2. Expect reduced performance.\n"
            "Temperature limit on GPU #2 reached, aborting...\n")
    assert sorted(_events(text)) == [("app_temp_abort", "GPU #2", 1), ("app_temp_threshold", "GPU #2", 1)]


def test_ffmpeg_encoder_refusals_are_the_driver_its_libraries_or_the_product() -> None:
    lines = {"app_nvenc_driver_old": "[h264_nvenc @ 0x5600] Driver does not support the required nvenc API version. "
                                     "Required: 13.0 Found: 12.2",
             "app_nvenc_library": "[hevc_nvenc @ 0x5600] Cannot load libnvidia-encode.so.1",
             "app_nvenc_unsupported": "[h264_nvenc @ 0x5600] OpenEncodeSessionEx failed: unsupported device (2): (no "
                                      "details)",
             "app_nvenc_failed": "[h264_nvenc @ 0x5600] Failed locking bitstream buffer: invalid param (8):",
             "app_vaapi_failed": "[AVHWDeviceContext @ 0x5600] Failed to initialise VAAPI connection: -1 (unknown "
                                 "libva error).",
             "app_qsv_failed": "[AVHWDeviceContext @ 0x5600] Error initializing an MFX session: -9."}
    for kind, line in lines.items():
        assert _events(line + "\n") == [(kind, "bus id not in the log", 1)], kind
    assert _events("[AVHWDeviceContext @ 0x5600] Cannot load libcuda.so.1\n") == [
        ("app_nvenc_library", "bus id not in the log", 1)]  # nv-codec-headers' loader: the driver's CUDA library


def test_cuda_no_device_in_a_container_started_with_the_gpu_is_the_runtime_not_the_module() -> None:
    line = "[AVHWDeviceContext @ 0x5600] cu->cuInit(0) failed -> CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected\n"
    started = "$ docker run --rm --gpus all -e NVIDIA_DRIVER_CAPABILITIES=all jellyfin/jellyfin\n"
    assert _events(started + line) == [("app_cuda_container", "bus id not in the log", 1)]
    assert _events(line) == []  # no container shown: CUDA's no device is app_errors' (no module visible)


def test_folding_at_home_cuinit_100_then_its_gpu_listed_is_the_driver_late_at_start() -> None:
    text = ('10:00:01:E :CUDA not supported: cuInit() returned 100\n10:00:01:I3:gpus = {\n'
            '10:00:01:I3: "gpu:2b:00:00": {"vendor": 4318, "device": 9348, "type": "nvidia", "supported": false}\n'
            '10:00:06:I3: "gpu:2b:00:00": {\n10:00:06:I3: "uuid": "0f3c1b2a-0000-1111-2222-333344445555",\n')
    assert _events(text) == [("app_cuda_late", "0000:2B:00.0", 1)]
    assert _events(text.split("10:00:06")[0]) == [("app_cuda_init_failed", "0000:2B:00.0", 1)]


def test_healthy_program_lines_are_read_and_judge_nothing(capsys, tmp_path: Path) -> None:
    text = (TREX_LIST + TREX_OK + " WARN: NVML: can't get fan speed for GPU #0, not supported\n"
            "2018.07.23:11:10:43.033: main GPU1: 57C 61%, GPU2: 59C 66%\n"
            "Hardware.Mon.#1..: Temp: 63c Fan: 33% Util:100% Core:1873MHz Mem:5005MHz Bus:16\n"
            "19:57:59:WU01:FS01:0x22:ERROR:exception: Illegal value for DeviceIndex: 4\n"
            "frame= 1200 fps=310 q=25.0 size=   10240kB time=00:00:50.00 bitrate=1677.7kbits/s speed=12.9x\n")
    code, found = _doctor(capsys, tmp_path, text)
    assert code != 2 and not [f for f in found if f[2] in ("warn", "critical")], found


def test_a_poster_quoting_a_line_in_a_question_is_still_the_line() -> None:
    text = "Why does my rig show '[h264_nvenc @ 0x1] Cannot load libnvidia-encode.so.1' since the update?\n"
    assert _events(text) == [("app_nvenc_library", "bus id not in the log", 1)]
    assert _events("why is GPU #2 COMPUTE ERROR so frequent?\n") == []  # the poster's own question, no line


@pytest.mark.parametrize(("row", "want"), [
    ("minerlog_trex574_illegal_address_gpu2", {("module_unstable_compute", "GPU #2", "warn")}),
    ("minerlog_trex945_cuda_unknown_nvml999", {("module_unstable_compute", "0000:00:07.0", "warn"),
                                               ("module_sensors_unreadable", "0000:00:03.0", "warn")}),
    ("minerlog_xmrig1812_compute_error_fan0", {("module_unstable_compute", "0000:01:00.0", "warn"),
                                               ("module_unstable_compute", "0000:04:00.0", "warn"),
                                               ("module_fan_stopped", "0000:01:00.0", "warn")}),
    ("hashcat_hashcat2396_driver_temp_threshold_win", {("thermal_throttling", f"GPU #{n}", "warn") for n in (1, 3, 4)}),
    ("fahlog_fahbastet252_cuinit100_t600", {("api_reports_driver_state", "0000:01:00.0", "warn")}),
    ("fahlog_fahissues1379_deviceindex_fedora", set()),
    ("ffmpeg_jellyfin9504_cuda_no_device_container", {("container_gpu_access", "bus id not in the log", "warn")}),
    ("minerlog_trex296_v100_fan_not_supported", set()),
])
def test_batch_ac_rows(capsys, tmp_path: Path, row: str, want: set[tuple[str, str, str]]) -> None:
    code, found = _doctor(capsys, tmp_path, (ROWS / f"{row}.txt").read_text())
    assert code != 2 and {f for f in found if f[2] in ("warn", "critical")} == want, found
