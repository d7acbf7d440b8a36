"""Issue 46, batches S and T: inventory lists every module a capture names, on lines written here: the GPUs of
an NCCL debug log's path dump or its processes' [n] devices, a MIG-enabled module of the nvidia-smi table (its
memory cell N/A), and never deviceQuery's CPU emulator as a module."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.helpers import capture_json


def _modules(tmp_path: Path, text: str) -> list[dict[str, Any]]:
    modules: list[dict[str, Any]] = capture_json(tmp_path, text, "inventory")["modules"]  # type: ignore[assignment]
    return modules


_PATHS = """\
gpunode7:3100:3180 [1] NCCL INFO GPU/2000 :GPU/2000 (0/5000.000000/LOC) GPU/41000 (1/40.000000/NVL) CPU/0 (1/24.000000/PHB)
gpunode7:3100:3180 [1] NCCL INFO GPU/41000 :GPU/2000 (1/40.000000/NVL) GPU/41000 (0/5000.000000/LOC) CPU/0 (1/24.000000/PHB)
gpunode7:3100:3180 [1] NCCL INFO NET/0 :GPU/2000 (3/12.000000/PHB) GPU/41000 (3/12.000000/PHB)
"""


def test_the_gpus_of_nccls_path_dump_are_listed_by_bus_id(tmp_path: Path) -> None:
    assert [m["bus_id"] for m in _modules(tmp_path, _PATHS)] == ["0000:02:00.0", "0000:41:00.0"]


_DEVICES = """\
trainbox:9001:9040 [0] NCCL INFO Setting affinity for GPU 0 to ff,ffffffff
trainbox:9002:9041 [1] NCCL INFO Setting affinity for GPU 1 to ff,ffffffff
trainbox:9002:9041 [1] transport/p2p.cc:310 NCCL WARN Cuda failure 2 'out of memory'
"""


def test_the_devices_of_an_nccl_logs_processes_are_listed_by_cuda_index(tmp_path: Path) -> None:
    assert [m["id"] for m in _modules(tmp_path, _DEVICES)] == ["gpu0", "gpu1"]


def test_every_process_on_device_0_names_no_module(tmp_path: Path) -> None:
    """CUDA_VISIBLE_DEVICES gives each process its one GPU as [0]: the index names no module, none is listed."""
    text = _DEVICES.replace("[1]", "[0]")
    assert _modules(tmp_path, text) == []


def test_a_log_of_two_hosts_lists_no_module_by_device(tmp_path: Path) -> None:
    text = _DEVICES.replace("trainbox:9002", "trainbox2:9002")
    assert _modules(tmp_path, text) == []


_MIG_TABLE = """\
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|                                         |                      |               MIG M. |
|=========================================+======================+======================|
|   0  NVIDIA A100-SXM4-40GB          On  | 00000000:07:00.0 Off |                    0 |
| N/A   31C    P0              52W / 400W |      4MiB / 40960MiB |      0%      Default |
|                                         |                      |             Disabled |
+-----------------------------------------+----------------------+----------------------+
|   1  NVIDIA A100-SXM4-40GB          On  | 00000000:0F:00.0 Off |                   On |
| N/A   30C    P0              48W / 400W |                  N/A |     N/A      Default |
|                                         |                      |              Enabled |
+-----------------------------------------+----------------------+----------------------+
"""


def test_a_mig_enabled_module_of_the_table_is_listed(tmp_path: Path) -> None:
    modules = _modules(tmp_path, _MIG_TABLE)
    assert [m["bus_id"] for m in modules] == ["0000:07:00.0", "0000:0F:00.0"]
    assert [m["mig_mode"] for m in modules] == [False, True]


_EMULATED = """\
CUDA Device Query (Runtime API) version (CUDART static linking)
There is no device supporting CUDA.

Device 0: "Device Emulation (CPU)"
  CUDA Capability Major revision number:         9999
  CUDA Capability Minor revision number:         9999
  Total amount of global memory:                 4294967295 bytes
  Number of multiprocessors:                     16
"""


def test_deviceQuerys_cpu_emulator_is_no_module(tmp_path: Path) -> None:
    data = capture_json(tmp_path, "nvidia 0000:03:00.0: enabling device (0000 -> 0003)\n" + _EMULATED, "inventory")
    assert [m["bus_id"] for m in data["modules"]] == ["0000:03:00.0"]  # type: ignore[index,union-attr]


_LSPCI_N_THEN_NAMED = """\
$ lspci -n -s 3b:00.0
0000:3b:00.0 0302: 10de:20b5 (rev a1)
$ lspci -n -s 3b:00.1
0000:3b:00.1 0403: 10de:1aef (rev a1)
$ lspci | grep -i nvidia
0000:3b:00.0 3D controller: NVIDIA Corporation GA100 [A100 PCIe 80GB] (rev a1)
0000:3b:00.1 Audio device: NVIDIA Corporation Device 1aef (rev a1)
"""


def test_lspci_n_then_lspci_of_one_gpu_lists_it_by_lspcis_words(tmp_path: Path) -> None:
    """'lspci -n' prints class and ids alone; the named listing after it says which function is the GPU."""
    modules = _modules(tmp_path, _LSPCI_N_THEN_NAMED)
    assert [m["bus_id"] for m in modules] == ["0000:3B:00.0"] and "A100" in modules[0]["model"]


_AMD_PROCESSES = """\
+------------------------------------------------------------------------------+
| Processes:                                                                   |
|  GPU        PID  Process Name          GTT_MEM  VRAM_MEM  MEM_USAGE     CU % |
|==============================================================================|
|    1      40211  llama-server         12.0 MB   20.1 GB    20.1 GB  N/A     |
|    3      40377  python3               2.1 MB    8.4 GB     8.4 GB  N/A     |
+------------------------------------------------------------------------------+
"""


def test_the_gpus_amd_smis_process_box_names_are_listed_by_index(tmp_path: Path) -> None:
    assert [m["id"] for m in _modules(tmp_path, _AMD_PROCESSES)] == ["gpu1", "gpu3"]
