"""Issue 46 (AX1): nvidia-smi's and the CUDA runtime's own messages about a module's state, each a finding on the right
module at the severity an engineer gives it: NVML's words after nvidia-smi's 'Unable to determine the device handle'
(nvmlErrorString's table, NVIDIA/DCGM sdk/nvidia/nvml/nvml_error_strings.h), its infoROM warning, -i's target it
cannot open, `nvidia-smi -r`'s answers and its notices (no fault, never refused), NVML's words in other programs
(nvidia-ml-py's NVMLError_*), and the CUDA runtime's errors read with the listing beside them (gpu-burn's and
deviceQuery's 'no device' on an NVSwitch board's eight listed modules, error 46 on a module in Exclusive_Process,
cudaErrorNvlinkUncorrectable). Lines written here in the tools' formats; benchmarks/smi_phrasebook.py scores the class;
batch AA's five rows are read once each at the end."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_triples

BUS = "0000:3B:00.0"
AA = Path(__file__).parents[1] / "data" / "captures" / "fresh_aa"
HANDLE = f"Unable to determine the device handle for GPU {BUS}: "


_doctor = doctor_triples  # tests/support/helpers.py


@pytest.mark.parametrize(
    ("words", "want"),
    [
        ("GPU is lost.  Reboot the system to recover this GPU", ("module_fell_off_bus", "critical", BUS)),
        ("Unknown Error", ("module_fell_off_bus", "critical", BUS)),
        ("GPU requires reset", ("module_needs_reset", "critical", BUS)),
        ("Insufficient External Power", ("module_power_cables", "critical", BUS)),
        ("Corrupted infoROM", ("module_inforom_corrupted", "warn", BUS)),
        ("Interrupt Request Issue", ("api_reports_module_fault", "critical", BUS)),
        ("Insufficient Permissions", ("device_permissions", "warn", BUS)),
    ],
)
def test_nvidia_smi_names_the_state_of_a_module_it_cannot_open_in_nvmls_words(
    words: str, want: tuple[str, str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for text in (
        HANDLE + words,
        f"user@node07:~$ nvidia-smi\n{HANDLE}{words}",
        f"Mar 03 10:14:03 node07 gpu-check[2211]: {HANDLE}{words}",
    ):
        assert _doctor(text, tmp_path, capsys)[1] == [want], text


def test_the_newer_handle_line_with_its_index_reads_alike(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = f"Unable to determine the device handle for GPU3: {BUS}: GPU requires reset"
    assert _doctor(text, tmp_path, capsys)[1] == [("module_needs_reset", "critical", BUS)]


def test_the_inforom_warning_is_a_warning_on_its_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = f"WARNING: infoROM is corrupted at gpu {BUS}"
    table = (
        "+-----------------------------------------------------------------------------+\n"
        "|  No running processes found                                                 |\n"
        "+-----------------------------------------------------------------------------+"
    )
    for text in (line, f"$ nvidia-smi\n{table}\n{line}", f"when i run nvidia-smi i got the following warning :\n{line}"):
        assert _doctor(text, tmp_path, capsys) == (1, [("module_inforom_corrupted", "warn", BUS)]), text
    quoted = f'Since this morning nvidia-smi on this node prints "{line}" and our jobs fail.'
    assert _doctor(quoted, tmp_path, capsys)[1] == [("module_inforom_corrupted", "warn", BUS)]


def test_the_target_nvidia_smi_cannot_open_is_the_index_its_command_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = "Unable to determine the PCI bus id for the target device: GPU is lost"
    assert _doctor(f"~]$ nvidia-smi -r -i 0\n{line}", tmp_path, capsys)[1] == [("module_fell_off_bus", "critical", "GPU 0")]
    assert _doctor(line, tmp_path, capsys)[1] == [("module_fell_off_bus", "critical", "bus id not in the log")]
    reset = "Unable to determine the PCI bus id for the target device: GPU requires reset"
    assert _doctor(f"# nvidia-smi -q -i 2\n{reset}", tmp_path, capsys)[1] == [("module_needs_reset", "critical", "GPU 2")]


@pytest.mark.parametrize(
    "text",
    [
        f"$ sudo nvidia-smi -r -i 0\nGPU 0000000{BUS[1:]} was successfully reset.\nAll done.",
        "GPU Reset couldn't run because GPU 00000000:01:00.0 is the primary GPU.",
        "Resetting GPU 00000000:00:04.0 is not supported.",
        "Unable to reset this GPU because it's being used by some other process (e.g. CUDA application, \n"
        "graphics application like X server, monitoring application like other instance of nvidia-smi). \n"
        "Please first kill all processes using this GPU and all compute applications running in the system \n"
        "(even when they are running on other GPUs) and then try to reset the GPU again.\n"
        "Terminating early due to previous errors.",
        f"The following GPUs could not be reset:\n  GPU 0000{BUS}: In use by another client\n\n1 device is currently "
        "being used by one or more other processes (e.g., Fabric Manager, CUDA application, graphics application such "
        "as an X server, or a monitoring application such as another instance of nvidia-smi). Please first kill all "
        "processes using this device and all compute applications running in the system.",
        f"Enabled MIG Mode for GPU 0000{BUS}\n\nWarning: persistence mode is disabled on device 0000{BUS}. See the "
        "Known Issues section of the nvidia-smi(1) man page for more information. Run with [--help | -h] switch to get "
        "more information on how to enable persistence mode.\nAll done.",
        f"Set compute mode to EXCLUSIVE_PROCESS for GPU 0000{BUS}.\nAll done.",
        f'GPU clocks set to "(gpuClkMin 1410, gpuClkMax 1410)" for GPU 0000{BUS}\nAll done.',
    ],
)
def test_a_reset_refused_or_done_and_a_settings_answer_are_read_and_no_fault(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found = _doctor(text, tmp_path, capsys)
    assert code == 0 and not [f for f in found if f[1] != "info"], (text, found)


def test_a_module_a_reset_could_not_reset_for_its_own_fault_is_that_fault(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = f"# nvidia-smi -r\nThe following GPUs could not be reset:\n  GPU 0000{BUS}: GPU is lost\n"
    assert _doctor(text, tmp_path, capsys)[1] == [("module_fell_off_bus", "critical", BUS)]


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("pynvml.nvml.NVMLError_ResetRequired: GPU requires reset", ("module_needs_reset", "critical")),
        ("pynvml.nvml.NVMLError_CorruptedInforom: Corrupted infoROM", ("module_inforom_corrupted", "warn")),
        ("pynvml.nvml.NVMLError_InsufficientPower: Insufficient External Power", ("module_power_cables", "critical")),
        ("nvmlDeviceGetHandleByIndex failed: NVML_ERROR_RESET_REQUIRED", ("module_needs_reset", "critical")),
    ],
)
def test_nvmls_words_for_a_modules_state_in_a_program_are_that_state(
    line: str, want: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = f'Traceback (most recent call last):\n  File "mon.py", line 12, in <module>\n{line}'
    assert _doctor(text, tmp_path, capsys)[1] == [(*want, "bus id not in the log")]


def test_an_uncorrectable_nvlink_error_is_critical_on_its_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = "RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution"
    assert _doctor(line, tmp_path, capsys)[1] == [("nvlink_uncorrectable", "critical", "bus id not in the log")]
    named = f"{line}\nnvidia-smi -q:\nGPU 0000{BUS}\n    Product Name : NVIDIA A100-SXM4-80GB"
    assert ("nvlink_uncorrectable", "critical", BUS) in _doctor(named, tmp_path, capsys)[1]


def _listing(model: str, n: int) -> str:
    return "\n".join(f"GPU {i}: {model} (UUID: GPU-{i:08x}-3273-c6e2-90f0-39d86b34e76d)" for i in range(n))


BURN = (
    "terminate called after throwing an instance of 'std::__cxx11::basic_string<char, std::char_traits<char>, "
    "std::allocator<char> >'\nNo CUDA devices"
)


def test_no_cuda_device_on_an_nvswitch_boards_listed_modules_is_cuda_unable_to_use_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for text in (f"{BURN}\n{_listing('NVIDIA A100-SXM4-80GB', 8)}", f"{_listing('NVIDIA H100 80GB HBM3', 8)}\n{BURN}"):
        assert _doctor(text, tmp_path, capsys)[1] == [("cuda_cannot_use_listed_modules", "warn", "")]
    # a PCIe card listed: the program's own view of it (CUDA_VISIBLE_DEVICES, its container), as before
    pcie = _doctor(f"{BURN}\n{_listing('NVIDIA A100-PCIE-40GB', 8)}", tmp_path, capsys)[1]
    assert pcie == [("program_sees_no_listed_module", "info", "")]
    assert _doctor(BURN, tmp_path, capsys)[1] == [("no_modules_visible", "critical", "")]  # no listing: none visible


def test_no_cuda_device_beside_a_lost_module_is_that_modules_echo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    query = (
        "./deviceQuery Starting...\n\n CUDA Device Query (Runtime API) version (CUDART static linking)\n\n"
        "cudaGetDeviceCount returned 38\n-> no CUDA-capable device is detected\nResult = FAIL"
    )
    text = f"$ nvidia-smi\n{HANDLE}GPU is lost.  Reboot the system to recover this GPU\n\n{query}"
    assert _doctor(text, tmp_path, capsys)[1] == [("module_fell_off_bus", "critical", BUS)]


_TABLE = """+-----------------------------------------------------------------------------+
| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla V100-PCIE...  On   | 00000000:3B:00.0 Off |                    0 |
| N/A   35C    P0    38W / 250W |    312MiB / 16160MiB |      0%   {mode} |
+-------------------------------+----------------------+----------------------+"""


def test_error_46_on_a_module_in_exclusive_process_is_that_mode_said_on_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = "Check failed: error == cudaSuccess (46 vs. 0)  all CUDA-capable devices are busy or unavailable"
    assert _doctor(f"{err}\n{_TABLE.format(mode='E. Process')}", tmp_path, capsys) == (
        0,
        [("module_compute_exclusive", "info", BUS)],
    )
    assert _doctor(f"{err}\n{_TABLE.format(mode='   Default')}", tmp_path, capsys)[1] == [("other_processes", "warn", "")]


@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("gpuburn_checkbox119_no_cuda_devices_a100", [("cuda_cannot_use_listed_modules", "warn", "")]),
        ("devicequery_cudaminer41_gpu_lost", [("module_fell_off_bus", "critical", "GPU 0")]),
        ("nvidia_smi_microk8s3097_inforom_corrupted", [("module_inforom_corrupted", "warn", "0000:00:05.0")]),
        ("pytorch_pytorch58155_uncorrectable_nvlink_a100", [("nvlink_uncorrectable", "critical", "bus id not in the log")]),
        ("nvidia_smi_digits2005_k40m_exclusive_process", [("module_compute_exclusive", "info", "0000:04:00.0")]),
    ],
)
def test_batch_aa_rows_of_the_class(
    name: str, want: list[tuple[str, str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (AA / f"{name}.txt").read_text(encoding="utf-8")
    assert _doctor(text, tmp_path, capsys)[1] == want


def test_doctor_cites_the_files_read_as_nvidia_smis_messages_by_their_formats_name() -> None:
    from gpuvet.captures.formats import FORMATS
    from gpuvet.captures.records import SMI_MESSAGES

    assert SMI_MESSAGES in {f.name for f in FORMATS}
