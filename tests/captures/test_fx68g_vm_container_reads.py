"""Issue 46 (batch BJ, FX68G): GPUs seen from VMs and containers. Inputs written in the tools' own layouts (nvidia-smi
--query-gpu's CSV per its --help-query-gpu and --format options; nvidia-container-cli info; lspci)."""

from __future__ import annotations

import pytest

from gpuvet.captures import smi_query
from gpuvet.captures.text import clean

UUIDS = ("GPU-0a1b2c3d-0000-1111-2222-333344445555", "GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff")


@pytest.mark.parametrize(("command", "header", "rows"), [
    ("nvidia-smi --query-gpu=uuid --format=csv", "uuid", list(UUIDS)),
    ("nvidia-smi --query-gpu=name --format=csv", "name", ["NVIDIA A10", "NVIDIA A10"]),
    ("nvidia-smi --query-gpu=memory.total --format=csv", "memory.total [MiB]", ["23028 MiB", "23028 MiB"]),
    ("nvidia-smi --query-gpu=memory.total --format=csv,nounits", "memory.total [MiB]", ["23028", "23028"]),
    ("nvidia-smi --query-gpu=gpu_uuid --format=csv", "gpu_uuid", list(UUIDS)),
])
def test_a_one_name_header_is_never_a_module(command: str, header: str, rows: list[str]) -> None:
    text = f"$ {command}\n{header}\n" + "".join(r + "\n" for r in rows)
    got = smi_query.parse(clean(text).lines)
    assert len(got.modules) == 2, got.notes
    assert all(header not in m.fields.values() for m in got.modules)
    assert got.claimed == {1, 2, 3, 4}


def test_noheader_one_name_rows_are_all_modules() -> None:
    text = "$ nvidia-smi --query-gpu=uuid --format=csv,noheader\n" + "".join(u + "\n" for u in UUIDS)
    got = smi_query.parse(clean(text).lines)
    assert [m.fields.get("GPU UUID") for m in got.modules] == list(UUIDS)


def test_a_two_name_header_is_the_header_not_a_row() -> None:
    text = ("$ nvidia-smi --query-gpu=index,uuid --format=csv\nindex, uuid\n"
            + "".join(f"{i}, {u}\n" for i, u in enumerate(UUIDS)))
    got = smi_query.parse(clean(text).lines)
    assert len(got.modules) == 2


CLI_INFO = ("$ nvidia-container-cli info\nNVRM version:   550.54.15\nCUDA version:   12.4\n\n"
            "Device Index:   0\nDevice Minor:   0\nModel:          NVIDIA A100-SXM4-40GB\nBrand:          Nvidia\n"
            "GPU UUID:       GPU-0a1b2c3d-0000-1111-2222-333344445555\nBus Location:   00000000:07:00.0\n"
            "Architecture:   8.0\n")


def test_container_cli_info_architecture_is_the_compute_capability(tmp_path) -> None:
    from tests.support.helpers import capture_json
    data = capture_json(tmp_path, CLI_INFO, "inventory")
    modules = data["modules"]
    assert isinstance(modules, list) and [m["compute_capability"] for m in modules] == ["8.0"]


def test_container_cli_info_command_line_is_read(tmp_path) -> None:
    from tests.support.helpers import capture_json
    notes = " ".join(str(n) for n in capture_json(tmp_path, CLI_INFO)["notes"])  # type: ignore[union-attr]
    assert "nvidia-container-cli info" in notes and "not output gpuvet reads" not in notes


@pytest.mark.parametrize("text", [
    "01:00.0 VGA compatible controller: NVIDIA Corporation TU102 [GeForce RTX 2080 Ti] (rev a1)\n"
    "01:00.1 Audio device: NVIDIA Corporation TU102 High Definition Audio Controller (rev a1)\n"
    "01:00.2 USB controller: NVIDIA Corporation TU102 USB 3.1 Host Controller (rev a1)\n"
    "01:00.3 Serial bus controller: NVIDIA Corporation TU102 USB Type-C UCSI Controller (rev a1)\n",
    "0b:00.0 VGA compatible controller [0300]: NVIDIA Corporation GA102 [GeForce RTX 3090] [10de:2204] (rev a1)\n"
    "0b:00.1 Audio device [0403]: NVIDIA Corporation GA102 High Definition Audio Controller [10de:1aef] (rev a1)\n"
    "\tKernel driver in use: vfio-pci\n",
    "03:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 21 [Radeon RX 6800] (rev c1)\n"
    "03:00.1 Audio device: Advanced Micro Devices, Inc. [AMD/ATI] Navi 21/23 HDMI/DP Audio Controller\n",
])
def test_a_gpu_cards_audio_and_usb_functions_belong_to_its_gpu(tmp_path, text: str) -> None:
    from tests.support.helpers import capture_json
    data = capture_json(tmp_path, text, "doctor")
    notes = " ".join(str(n) for n in data["notes"])  # type: ignore[union-attr]
    assert "not output gpuvet reads" not in notes and "is a function of the GPU card at" in notes
    inventory = capture_json(tmp_path, text, "inventory")
    assert len(inventory["modules"]) == 1  # type: ignore[arg-type]


def test_an_audio_function_of_no_gpu_is_not_said_to_be_one(tmp_path) -> None:
    from tests.support.helpers import capture_json
    text = ("00:1f.3 Audio device: Intel Corporation Cannon Lake PCH cAVS (rev 10)\n"
            "01:00.0 VGA compatible controller: NVIDIA Corporation GK104 [GeForce GTX 770] (rev a1)\n")
    notes = " ".join(str(n) for n in capture_json(tmp_path, text, "doctor")["notes"])  # type: ignore[union-attr]
    assert "is a function of the GPU card" not in notes


def _vgpu_q(status: str) -> str:
    """A vGPU guest's nvidia-smi -q block (the vGPU software licensing guide's layout)."""
    return ("==============NVSMI LOG==============\n\nDriver Version                            : 550.90.07\n"
            "Attached GPUs                             : 1\nGPU 00000000:02:01.0\n"
            "    Product Name                          : GRID A100-4C\n"
            "    vGPU Software Licensed Product\n"
            "        Product Name                      : NVIDIA Virtual Compute Server\n"
            f"        License Status                    : {status}\n")


@pytest.mark.parametrize("status", ["Unlicensed", "Unlicensed (Restricted)", "Unlicensed (Unrestricted)"])
def test_an_unlicensed_vgpu_is_a_warn(tmp_path, status: str) -> None:
    from tests.support.helpers import capture_findings, capture_json
    assert capture_findings(tmp_path, _vgpu_q(status)) == {("vgpu_unlicensed", None): "warn"}
    models = [m["model"] for m in capture_json(tmp_path, _vgpu_q(status), "inventory")["modules"]]  # type: ignore
    assert models == ["GRID A100-4C"]  # the licensed edition is no GPU model


def test_a_licensed_vgpu_is_quiet(tmp_path) -> None:
    from tests.support.helpers import capture_findings
    found = capture_findings(tmp_path, _vgpu_q("Licensed (Expiry: 2026-12-31 23:59:59 GMT)"))
    assert not [k for k, sev in found.items() if sev in ("warn", "critical")]


def test_the_licence_excerpt_alone_names_no_model(tmp_path) -> None:
    from tests.support.helpers import capture_findings, capture_json
    text = ("    vGPU Software Licensed Product\n        Product Name                      : NVIDIA RTX Virtual "
            "Workstation\n        License Status                    : Unlicensed (Restricted)\n")
    assert capture_findings(tmp_path, text) == {("vgpu_unlicensed", None): "warn"}
    models = [m["model"] for m in capture_json(tmp_path, text, "inventory")["modules"]]  # type: ignore
    assert "NVIDIA RTX Virtual Workstation" not in models


VGPU_BOX = """Mon Dec  7 10:12:01 2026
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 550.90.05              Driver Version: 550.90.05                 |
|---------------------------------+------------------------------+------------+
| GPU  Name                       | Bus-Id                       | GPU-Util   |
|      vGPU ID     Name           | VM ID     VM Name            | vGPU-Util  |
|=================================+==============================+============|
|   0  NVIDIA A40                 | 00000000:41:00.0             |  12%       |
|      3251634178  NVIDIA A40-8Q  | 993087    win11-vdi-1        |     9%     |
|      3251634179  NVIDIA A40-8Q  | 993088    rhel9-cuda-2       |     3%     |
+---------------------------------+------------------------------+------------+
|   1  NVIDIA A40                 | 00000000:C1:00.0             |   0%       |
+---------------------------------+------------------------------+------------+
"""


def test_the_vgpu_box_alone_is_its_gpus_with_their_vgpus(tmp_path) -> None:
    from tests.support.helpers import capture_json
    inv = capture_json(tmp_path, VGPU_BOX, "inventory")
    assert [(m["model"], m["bus_id"]) for m in inv["modules"]] == [  # type: ignore[union-attr]
        ("NVIDIA A40", "0000:41:00.0"), ("NVIDIA A40", "0000:C1:00.0")]
    data = capture_json(tmp_path, VGPU_BOX)
    notes = " ".join(str(n) for n in data["notes"])  # type: ignore[union-attr]
    assert "2 vGPU(s) running: vGPU 3251634178 NVIDIA A40-8Q on VM win11-vdi-1 (993087), 9% busy" in notes
    assert "GPU 1 NVIDIA A40 at 0000:C1:00.0 (a vGPU host's GPU): no vGPU running" in notes
    assert "not output gpuvet reads" not in notes
    assert not [f for f in data["findings"] if f["severity"] in ("warn", "critical")]  # type: ignore[union-attr]


def test_a_vgpu_hosts_q_with_a_grep_cut_is_one_gpu_and_says_its_mode(tmp_path) -> None:
    from tests.support.helpers import capture_json
    text = ("==============NVSMI LOG==============\n\nDriver Version                            : 550.90.05\n"
            "Attached GPUs                             : 1\nGPU 00000000:41:00.0\n"
            "    Product Name                          : NVIDIA A40\n    vGPU Device Capability\n"
            "        Fractional Multi-vGPU             : Supported\n    MIG Mode\n"
            "        Current                           : N/A\n--\n    GPU Virtualization Mode\n"
            "        Virtualization Mode               : Host VGPU\n        Host VGPU Mode                    : SR-IOV\n")
    inv = capture_json(tmp_path, text, "inventory")
    assert [m["model"] for m in inv["modules"]] == ["NVIDIA A40"]  # type: ignore[union-attr]
    notes = " ".join(str(n) for n in capture_json(tmp_path, text)["notes"])  # type: ignore[union-attr]
    assert "GPU Virtualization Mode: Host VGPU (SR-IOV)" in notes


LS_NODES = ("$ ls -l /dev/nvidia*\n"
            "crw-rw-rw- 1 root root 195,   0 Mar  3 09:12 /dev/nvidia0\n"
            "crw-rw-rw- 1 root root 195,   1 Mar  3 09:12 /dev/nvidia1\n"
            "crw-rw-rw- 1 root root 195, 255 Mar  3 09:12 /dev/nvidiactl\n"
            "crw-rw-rw- 1 root root 507,   0 Mar  3 09:12 /dev/nvidia-uvm\n"
            "crw-rw-rw- 1 root root 507,   1 Mar  3 09:12 /dev/nvidia-uvm-tools\n")


def test_ls_dev_nvidia_lists_a_module_per_gpu_node_and_judges_nothing(tmp_path) -> None:
    from tests.support.helpers import capture_json
    inv = capture_json(tmp_path, LS_NODES, "inventory")
    assert len(inv["modules"]) == 2  # type: ignore[arg-type]
    data = capture_json(tmp_path, LS_NODES)
    notes = " ".join(str(n) for n in data["notes"])  # type: ignore[union-attr]
    assert "2 GPU node(s) (/dev/nvidia0, 1)" in notes and "/dev/nvidia-uvm (507, 0)" in notes
    assert "not output gpuvet reads" not in notes and not data["findings"]


def test_uvm_nodes_alone_are_read_with_no_module(tmp_path) -> None:
    from tests.support.helpers import capture_json
    text = "".join(ln + "\n" for ln in LS_NODES.splitlines()[4:])
    data = capture_json(tmp_path, text)
    notes = " ".join(str(n) for n in data["notes"])  # type: ignore[union-attr]
    assert "no /dev/nvidiaN node" in notes and "not output gpuvet reads" not in notes and not data["findings"]


@pytest.mark.parametrize("form", ["INFO[0000] {}", 'time="2025-01-02T03:04:05Z" level=info msg="{}"'])
def test_nvidia_ctk_cdi_generate_log_gives_the_driver_and_its_nodes(tmp_path, form: str) -> None:
    from tests.support.helpers import capture_json
    msgs = ["Auto-detected mode as \"nvml\"", "Selecting /dev/nvidia0 as /dev/nvidia0",
            "Selecting /dev/nvidia1 as /dev/nvidia1", "Using driver version 535.183.01",
            "Selecting /dev/nvidiactl as /dev/nvidiactl", "Generated CDI spec with version 0.8.0"]
    text = "".join(form.format(m.replace('"', '\\"') if "level=" in form else m) + "\n" for m in msgs)
    text += "WARN[0000] Could not locate libnvidia-vulkan-producer.so.535.183.01: pattern not found\n"
    inv = capture_json(tmp_path, text, "inventory")
    assert len(inv["modules"]) == 2 and inv["software"]["driver_version"] == "535.183.01"  # type: ignore
    notes = " ".join(str(n) for n in capture_json(tmp_path, text)["notes"])  # type: ignore[union-attr]
    assert "nvidia-ctk warned: Could not locate libnvidia-vulkan-producer" in notes


def test_amd_ctk_gpu_list_lists_its_gpus(tmp_path) -> None:
    from tests.support.helpers import capture_json
    text = ("$ amd-ctk gpu list\nFound 2 AMD GPU devices\namd.com/gpu=all\namd.com/gpu=0\n  /dev/dri/card1\n"
            "  /dev/dri/renderD128\namd.com/gpu=1\n  /dev/dri/card2\n  /dev/dri/renderD129\n")
    inv = capture_json(tmp_path, text, "inventory")
    assert len(inv["modules"]) == 2  # type: ignore[arg-type]
    data = capture_json(tmp_path, text)
    notes = " ".join(str(n) for n in data["notes"])  # type: ignore[union-attr]
    assert "amd-ctk gpu list: 2 AMD GPU(s) listed; GPU 0: /dev/dri/card1" in notes
    assert "not output gpuvet reads" not in notes and not data["findings"]


def test_a_100kb_line_and_a_long_listing_read_in_linear_time() -> None:
    import time

    from gpuvet.captures import ctk_nodes, smi_vgpu, vgpu_license
    from gpuvet.captures.text import Line

    def cost(n: int) -> float:
        lines = [Line(i + 1, t) for i in range(n) for t in (
            "crw-rw-rw- 1 root root 195,   0 Mar  3 09:12 /dev/nvidia" + "x" * 20, "INFO[0000] Selecting " + "/" * 50,
            "|      3251634178  " + "a" * 60 + " |", "License Status : " + "U" * 60)]
        start = time.process_time()
        ctk_nodes.listing(lines), ctk_nodes.amd(lines), smi_vgpu.listing(lines), vgpu_license.parse(lines)
        return time.process_time() - start

    long_line = [Line(1, "crw " + "c" * 100_000 + " /dev/nvidia0 level=x msg=\"" + "|" * 1000)]
    start = time.process_time()
    ctk_nodes.listing(long_line), smi_vgpu.listing(long_line), vgpu_license.parse(long_line)
    assert time.process_time() - start < max(1.0, 50 * cost(1000))
    assert cost(40_000) < 80 * max(cost(2_000), 1e-3)  # 20x the lines: linear within a generous margin
