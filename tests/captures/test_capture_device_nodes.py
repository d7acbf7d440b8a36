"""GPU functions lspci lists against the device nodes their drivers made (issue 46, captures/device_nodes.py),
each form written here in the tools' own layout: ls /dev/dri (bare and -l), ls -l /dev/dri/by-path's links,
ls /dev/nvidia*. The expectation is the functions of the same capture; a BMC's VGA is no compute module."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures import read as capture_read
from gpuvet.captures.formats import FileCapture

BMC = "03:00.0 VGA compatible controller: ASPEED Technology, Inc. ASPEED Graphics Family (rev 41)\n"
MAX = ("3a:00.0 Display controller: Intel Corporation Ponte Vecchio XT (1 Tile) [Data Center GPU Max 1100] (rev 2f)\n"
       "bc:00.0 Display controller: Intel Corporation Ponte Vecchio XT (1 Tile) [Data Center GPU Max 1100] (rev 2f)\n")


def _kinds(tmp_path: Path, text: str) -> list[tuple[str, str | None]]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    fc: FileCapture = capture_read.read(str(path))
    return [(e.kind, e.module) for e in fc.app_errors.errors]


def test_two_intel_gpus_with_only_the_bmc_card_node_have_no_driver(tmp_path: Path) -> None:
    text = (BMC + MAX + "$ ls -l /dev/dri\ntotal 0\n"
            "drwxr-xr-x  2 root root       60 Mar  2 09:12 by-path\n"
            "crw-rw----  1 root video 226,   0 Mar  2 09:12 card0\n")
    assert _kinds(tmp_path, text) == [("gpu_no_device_node", "3A:00.0"), ("gpu_no_device_node", "BC:00.0")]


def test_every_gpu_with_its_render_node_is_quiet(tmp_path: Path) -> None:
    text = BMC + MAX + "$ ls /dev/dri\nby-path  card0  card1  card2  renderD128  renderD129\n"
    assert _kinds(tmp_path, text) == []


def test_one_render_node_short_of_four_amd_functions_is_one_finding(tmp_path: Path) -> None:
    text = "".join(f"{b}:00.0 Display controller: Advanced Micro Devices, Inc. [AMD/ATI] Aldebaran/MI200 "
                   "[Instinct MI250X/MI250] (rev 01)\n" for b in ("29", "2a", "a9", "aa"))
    text += "/dev/dri/card1  /dev/dri/card2  /dev/dri/card3  /dev/dri/renderD128  /dev/dri/renderD129  " \
            "/dev/dri/renderD130\n"
    assert _kinds(tmp_path, text) == [("gpu_no_device_node", None)]


def test_by_path_links_name_the_undriven_function(tmp_path: Path) -> None:
    text = (MAX + "$ ls -l /dev/dri/by-path\n"
            "lrwxrwxrwx 1 root root  8 Mar  2 09:12 pci-0000:3a:00.0-card -> ../card1\n"
            "lrwxrwxrwx 1 root root 13 Mar  2 09:12 pci-0000:3a:00.0-render -> ../renderD128\n")
    assert _kinds(tmp_path, text) == [("gpu_no_device_node", "BC:00.0")]


def test_a_partitioned_gpu_has_more_nodes_than_functions(tmp_path: Path) -> None:
    text = ("0000:05:00.0 Processing accelerators [1200]: Advanced Micro Devices, Inc. [AMD/ATI] Aqua Vanjaram "
            "[Instinct MI300X] [1002:74a1]\n$ ls /dev/dri\nby-path\n" +
            "".join(f"card{i}\nrenderD{128 + i}\n" for i in range(8)))
    assert _kinds(tmp_path, text) == []


def test_nvidia_nodes_short_of_the_functions(tmp_path: Path) -> None:
    text = "".join(f"{b}:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n"
                   for b in ("18", "2a", "3a", "5d"))
    text += "$ ls /dev/nvidia*\n/dev/nvidia0  /dev/nvidia1  /dev/nvidia2  /dev/nvidiactl  /dev/nvidia-uvm\n"
    assert _kinds(tmp_path, text) == [("gpu_no_device_node", None)]


def test_the_bmc_card_node_beside_nvidia_gpus_is_not_judged(tmp_path: Path) -> None:
    text = (BMC + "18:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n"
            "$ ls /dev/dri\nby-path  card0\n$ ls /dev/nvidia*\n/dev/nvidia0  /dev/nvidiactl  /dev/nvidia-uvm\n")
    assert _kinds(tmp_path, text) == []


def test_lspci_k_intel_function_with_its_module_but_no_driver_in_use(tmp_path: Path) -> None:
    text = (BMC + "\tKernel driver in use: ast\n\tKernel modules: ast\n" +
            MAX.splitlines()[0] + "\n\tSubsystem: Intel Corporation Device 0000\n\tKernel modules: i915\n" +
            MAX.splitlines()[1] + "\n\tKernel driver in use: i915\n\tKernel modules: i915\n")
    assert _kinds(tmp_path, text) == [("gpu_no_driver", "3A:00.0")]


def test_lspci_k_intel_igpu_bound_to_i915_is_said_not_judged(tmp_path: Path) -> None:
    text = ("00:02.0 VGA compatible controller [0300]: Intel Corporation AlderLake-S GT1 [8086:4680] (rev 0c)\n"
            "\tKernel driver in use: i915\n\tKernel modules: i915\n")
    assert _kinds(tmp_path, text) == []


def test_a_container_given_some_of_the_gpus_is_not_judged(tmp_path: Path) -> None:
    text = "".join(f"{b}:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n"
                   for b in ("18", "2a", "3a", "5d"))
    text += ("$ docker run --rm --gpus device=0 ubuntu ls /dev/nvidia*\n"
             "/dev/nvidia0  /dev/nvidiactl  /dev/nvidia-uvm\n")
    assert _kinds(tmp_path, text) == []
