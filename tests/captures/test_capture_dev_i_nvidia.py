"""The NVIDIA side of round I's development set (issue 46), each miss fixed for its class of input and tested
on lines written here in the tool's own format: lspci naming a module from pci.ids' product or, where the
words name none, from its PCI device id (the catalog's pci.ids table; a memory variant the words name is
kept); PyTorch's 'CUDA unknown error' at CUDA's initialisation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuvet.captures.lspci_list import product_name
from gpuvet.node.catalog import CATALOG, PCI_IDS, find_model, pci_product
from tests.captures.test_captures_fresh_c import run_json


def _run(tmp_path: Path, command: str, text: str) -> dict[str, Any]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    _, data = run_json(command, "--from", str(path))
    return data


def _modules(tmp_path: Path, text: str) -> list[tuple[str, str, bool]]:
    return [(m["bus_id"], m["model"], m["in_catalog"]) for m in _run(tmp_path, "inventory", text)["modules"]]


def test_lspci_nn_names_a_module_by_its_device_id_where_its_pci_ids_has_no_name(tmp_path: Path) -> None:
    """An older pci.ids prints 'Device [10de:2330]': the id names the catalog's H100 SXM5 80GB; a line that
    names its product keeps it, the 94 GB variant never read as the 80 GB one."""
    text = ("41:00.0 3D controller [0302]: NVIDIA Corporation Device [10de:2330] (rev a1)\n"
            "c1:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H100 SXM5 94GB] [10de:2339] (rev a1)\n"
            "e1:00.0 3D controller [0302]: NVIDIA Corporation GH100 [10de:2337] (rev a1)\n")
    assert _modules(tmp_path, text) == [("41:00.0", "NVIDIA H100 SXM5 80GB", True),
                                        ("C1:00.0", "NVIDIA GH100 [H100 SXM5 94GB]", False),
                                        ("E1:00.0", "NVIDIA H100 SXM5 64GB", False)]


def test_lspci_nnm_quoted_fields_name_the_catalog_model_from_the_product_or_the_id(tmp_path: Path) -> None:
    text = ('41:00.0 "3D controller [0302]" "NVIDIA Corporation [10de]" "GH100 [H100 SXM5 80GB] [2330]" -ra1 '
            '"NVIDIA Corporation [10de]" "Device [16c1]"\n'
            '42:00.0 "3D controller [0302]" "NVIDIA Corporation [10de]" "Device [2335]" -ra1 '
            '"NVIDIA Corporation [10de]" "Device [18be]"\n')
    assert _modules(tmp_path, text) == [("41:00.0", "NVIDIA H100 SXM5 80GB", True),
                                        ("42:00.0", "NVIDIA H200 SXM 141GB", True)]


def test_lspci_device_lines_lose_their_id_and_revision_not_their_product(tmp_path: Path) -> None:
    """An `lspci -nn` line read as lspci's device lines: the [vendor:device] id is no part of the name."""
    text = ("$ lspci -nn | grep -i -E 'vga|3d'\n"
            "02:00.0 3D controller [0302]: NVIDIA Corporation GM108M [GeForce MX130] [10de:174d] (rev a2)\n"
            "08:00.0 VGA compatible controller [0300]: NVIDIA Corporation GM204 [GeForce GTX 970] [10de:13c2] "
            "(rev a1)\n")
    models = [model for _, model, _ in _modules(tmp_path, text)]
    assert models == ["NVIDIA GM108M [GeForce MX130]", "NVIDIA GM204 [GeForce GTX 970]"]
    assert product_name("NVIDIA", "TU104 [GeForce RTX 2080] (rev a1) (prog-if 00 [VGA controller])") == \
        "GeForce RTX 2080"
    assert product_name("AMD", "Aldebaran/MI200 [Instinct MI250X/MI250] [1002:740c]") == "Instinct MI250X/MI250"


def test_the_catalog_pci_ids_name_catalog_models_with_their_source() -> None:
    """Every catalog model pci.ids lists has its id (Ascend 910B is not in pci.ids); each id names a model the
    catalog has, or none (another variant of the chip), and its source."""
    named = {p.model for p in PCI_IDS if p.model is not None}
    assert named <= set(CATALOG)
    # MI250X and MI250 share 740c (the name decides); MI50/MI60 share Vega 20's ids with the Radeon Pro VII
    assert set(CATALOG) - named == {"MI250X", "MI250", "MI50", "MI60", "A800-SXM-80GB", "Ascend910B"}
    assert all(p.source.startswith("pci.ids") for p in PCI_IDS)
    hit = pci_product("10DE:2330")
    assert hit is not None and hit.model == "H100-SXM"
    assert find_model("NVIDIA H100 SXM5 80GB") is CATALOG["H100-SXM"]
    assert find_model("NVIDIA H100 SXM5 94GB") is None and find_model("AMD Instinct MI250X/MI250") is None
    assert find_model("NVIDIA A100-SXM4-80GB") is CATALOG["A100-SXM-80GB"]  # the existing aliases still name it


def test_pytorchs_cuda_unknown_error_at_init_is_the_framework_seeing_no_module(tmp_path: Path) -> None:
    """torch.cuda.is_available()'s UserWarning (cudaErrorUnknown at init): a warn on the node, no module named."""
    text = ("/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py:129: UserWarning: CUDA initialization: "
            "CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable "
            "CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero. (Triggered "
            "internally at ../c10/cuda/CUDAFunctions.cpp:108.)\n  return torch._C._cuda_getDeviceCount() > 0\n"
            "False\n")
    findings = _run(tmp_path, "doctor", text)["findings"]
    assert [(f["cause"], f["severity"]) for f in findings] == [("framework_sees_no_module", "warn")]
    said = "RuntimeError: No CUDA GPUs are available\n"
    assert [f["cause"] for f in _run(tmp_path, "doctor", said)["findings"]] == ["no_modules_visible"]


def test_an_uncorrectable_nvlink_error_is_the_link_and_a_missing_nvml_library_the_runtimes_setup(tmp_path: Path) -> None:
    """cudaErrorNvlinkUncorrectable is the NVLink's fault, not the application's; nvidia-smi without
    libnvidia-ml.so (a container started without the NVIDIA runtime) is the runtime's set-up, a warn (issue 46,
    batch Z: one verdict for every tool that cannot load the library)."""
    nvlink = ("Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    loss.backward()\n"
              "RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution\n")
    assert [(f["cause"], f["severity"]) for f in _run(tmp_path, "doctor", nvlink)["findings"]] == \
        [("nvlink_uncorrectable", "critical")]
    smi = ("root@4f2c1d:/workspace# nvidia-smi\nNVIDIA-SMI couldn't find libnvidia-ml.so library in your system. "
           "Please make sure that the NVIDIA Display Driver is properly installed and present in your system.\n")
    assert [(f["cause"], f["severity"]) for f in _run(tmp_path, "doctor", smi)["findings"]] == \
        [("nvml_library_not_loadable", "warn")]


_Q = """GPU 00000000:3B:00.0
    Product Name                          : NVIDIA A100-SXM4-80GB
    GPU Reset Status
        Reset Required                    : {required}
        Drain and Reset Recommended       : {drain}
    GPU Recovery Action                   : {action}
"""
_X = """<?xml version="1.0" ?>
<nvidia_smi_log>
	<driver_version>575.51.02</driver_version>
	<attached_gpus>1</attached_gpus>
	<gpu id="00000000:3B:00.0">
		<product_name>NVIDIA H100 80GB HBM3</product_name>
		<gpu_reset_status>
			<reset_required>{required}</reset_required>
			<drain_and_reset_recommended>{drain}</drain_and_reset_recommended>
		</gpu_reset_status>
		<gpu_recovery_action>{action}</gpu_recovery_action>
	</gpu>
</nvidia_smi_log>
"""


def _causes(tmp_path: Path, text: str) -> list[tuple[str, str, str | None]]:
    return [(f["cause"], f["severity"], f.get("module")) for f in _run(tmp_path, "doctor", text)["findings"]]


def test_the_drivers_reset_status_and_recovery_action_name_a_module_that_needs_a_reset(tmp_path: Path) -> None:
    """-q's GPU Reset Status (Yes) and the newer GPU Recovery Action (Reset, Node Reboot Required) are the driver's
    own word; No, None, N/A and 'Requested functionality has been deprecated' are not, in -q and -q -x alike."""
    needs = [("module_needs_reset", "critical", "0000:3B:00.0")]
    assert _causes(tmp_path, _Q.format(required="Yes", drain="No", action="None")) == needs
    assert _causes(tmp_path, _Q.format(required="No", drain="No", action="Node Reboot Required")) == needs
    assert _causes(tmp_path, _Q.format(required="No", drain="N/A", action="None")) == []
    deprecated = "Requested functionality has been deprecated"
    assert _causes(tmp_path, _X.format(required=deprecated, drain=deprecated, action="Reset")) == needs
    assert _causes(tmp_path, _X.format(required=deprecated, drain=deprecated, action="None")) == []


def test_a_table_row_whose_memory_cell_reads_unknown_error_is_a_module_nvidia_smi_cannot_read(tmp_path: Path) -> None:
    """nvidia-smi's table for a lost module: ERR! in every reading and 'Unknown Error' for its memory. The row was
    no module (the memory cell is no 'used / total'): now the module, unreadable (critical), its peer clean."""
    text = ("| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |\n"
            "|=========================================+======================+======================|\n"
            "|   0  NVIDIA A100-SXM4-80GB          On  | 00000000:07:00.0 Off |                    0 |\n"
            "| N/A   33C    P0              61W / 400W |      4MiB / 81920MiB |      0%      Default |\n"
            "+-----------------------------------------+----------------------+----------------------+\n"
            "|   1  ERR!                           On  | 00000000:0B:00.0 Off |                 ERR! |\n"
            "|ERR!  ERR! ERR!             ERR! / ERR!  |   Unknown Error      |    ERR!      Default |\n"
            "+-----------------------------------------+----------------------+----------------------+\n")
    assert _causes(tmp_path, text) == [("module_unreadable", "critical", "0000:0B:00.0")]
    assert [m for _, m, _ in _modules(tmp_path, text)] == ["NVIDIA A100-SXM4-80GB", "ERR!"]


def test_nvidia_smis_device_handle_error_in_lower_case_names_the_module(tmp_path: Path) -> None:
    """Newer nvidia-smi prints 'for gpu 0000:3B:00.0: GPU is lost', older 'for GPU0000:04:00.0: Unknown Error'."""
    for line in ("Unable to determine the device handle for gpu 0000:3B:00.0: GPU is lost.  Reboot the system to "
                 "recover this GPU\n", "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n"):
        assert _causes(tmp_path, "$ nvidia-smi\n" + line) == [("module_fell_off_bus", "critical", "0000:3B:00.0")]


def test_nvidia_smi_L_lines_quoted_in_backticks_inside_prose_are_its_modules(tmp_path: Path) -> None:
    text = ("My machine has these: `GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-6a7b8c9d-0e1f-2a3b-4c5d-6e7f8a9b0c1d)` "
            "and `GPU 1: NVIDIA GeForce RTX 4090 (UUID: GPU-6a7b8c9d-0e1f-2a3b-4c5d-6e7f8a9b0c1e)`\n")
    assert [m for _, m, _ in _modules(tmp_path, text)] == ["NVIDIA GeForce RTX 4090"] * 2


def test_topo_m_pasted_as_a_markdown_table_is_read_as_the_matrix(tmp_path: Path) -> None:
    """A poster's markdown rendering of topo -m: the cells between the pipes, the |---| row none."""
    text = ("|      | GPU0 | GPU1 | GPU2 | GPU3 | CPU Affinity | NUMA Affinity |\n"
            "|------|------|------|------|------|--------------|---------------|\n"
            "| GPU0 | X    | NV4  | SYS  | SYS  | 0-31         | 0             |\n"
            "| GPU1 | NV4  | X    | SYS  | SYS  | 0-31         | 0             |\n"
            "| GPU2 | SYS  | SYS  | X    | NV4  | 32-63        | 1             |\n"
            "| GPU3 | SYS  | SYS  | NV4  | X    | 32-63        | 1             |\n")
    modules = _run(tmp_path, "inventory", text)["modules"]
    assert [(m["id"], m["numa_node"]) for m in modules] == [("gpu0", 0), ("gpu1", 0), ("gpu2", 1), ("gpu3", 1)]


def test_the_device_plugins_and_dcgm_exporters_xids_are_xids_on_the_module_they_name(tmp_path: Path) -> None:
    """NVIDIA's Kubernetes device plugin ('XidCriticalError: Xid=79 on Device=GPU-…') and dcgm-exporter's
    DCGM_FI_DEV_XID_ERRORS metric (the last Xid; 0 is none) were refused: each is an Xid on its module."""
    plugin = ("I0315 10:22:11.123500       1 health.go:185] XidCriticalError: Xid=48 on "
              "Device=GPU-7d1a3c9e-55aa-4e2b-9c1d-0f6e8a2b4c11; marking device as unhealthy.\n")
    assert _causes(tmp_path, plugin) == [("xid", "critical", "GPU-7d1a3c9e-55aa-4e2b-9c1d-0f6e8a2b4c11")]
    metric = ('# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.\n'
              '# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n'
              'DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-0a1b2c3d-1111-2222-3333-444455556666",'
              'pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="n7"} 0\n'
              'DCGM_FI_DEV_XID_ERRORS{gpu="3",UUID="GPU-0a1b2c3d-1111-2222-3333-444455556669",'
              'pci_bus_id="00000000:9B:00.0",device="nvidia3",modelName="NVIDIA H100 80GB HBM3",Hostname="n7"} 79\n')
    assert _causes(tmp_path, metric) == [("module_fell_off_bus", "critical", "0000:9B:00.0")]
    assert _causes(tmp_path, metric.replace("} 79", "} 0")) == []  # every GPU's last Xid 0: nothing to say


def test_the_drivers_api_mismatch_and_busy_devices_in_either_wording(tmp_path: Path) -> None:
    """NVRM's 'API mismatch' (client libraries of another version than the loaded module) is the driver/library
    mismatch; 'CUDA-capable device(s) is/are busy or unavailable' (newer CUDA) is the busy-devices error."""
    mismatch = ("[   12.345678] NVRM: API mismatch: the client has the version 535.129.03, but\n"
                "               NVRM: this kernel module has the version 535.104.05.  Please\n")
    assert [c for c, _, _ in _causes(tmp_path, mismatch)] == ["driver_library_mismatch"]
    for said in ("RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable\n",
                 "RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable\n"):
        assert [c for c, _, _ in _causes(tmp_path, said)] == ["other_processes"]


def test_a_ptx_newer_than_the_driver_and_error_803_are_the_driver_and_runtime_mismatched(tmp_path: Path) -> None:
    """'the provided PTX was compiled with an unsupported toolchain' (the driver's JIT older than the compiler) and
    803 'system has unsupported display driver / cuda driver combination' are no application bug."""
    for said in ("RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.\n",
                 "CUDA error: system has unsupported display driver / cuda driver combination (error 803)\n"):
        assert [c for c, _, _ in _causes(tmp_path, said)] == ["driver_runtime_mismatch"]
