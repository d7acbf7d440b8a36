"""Blender Cycles' CUDA error placed on the device Cycles activated before it (issue 46, AGX2): a render script's
CyclesDeviceSettings("…") print, Cycles' debug 'Added device … with id "CUDA_…_0000:01:00"' (its bus id); several
devices named leave it unplaced. Lines in Blender's formats, names and addresses made up; the batch AG row as one
check."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings

AG = Path(__file__).parents[1] / "data" / "captures" / "fresh_ag"
HEAD = "Blender 3.6.0 (hash c7fc78b81ecb built 2023-06-27 08:35:04)\nRead blend: /work/scene.blend\n"
FAILED = "Failed to create CUDA context (Unknown error)\n"


def test_the_error_is_the_one_device_cycles_activated(tmp_path: Path) -> None:
    script = HEAD + 'Activating <bpy_struct, CyclesDeviceSettings("Tesla T4") at 0x7fe9995f5f88>\n' + FAILED
    assert capture_findings(tmp_path, script) == {
        ("application_cuda_error", "Tesla T4 (the device Cycles activated)"): "warn"
    }
    debug = (
        HEAD + 'I0607 10:00:01.120 device_cuda.cpp:52] Added device "NVIDIA GeForce RTX 3080" with id '
        '"CUDA_NVIDIA GeForce RTX 3080_0000:01:00".\n' + FAILED
    )
    assert capture_findings(tmp_path, debug) == {("application_cuda_error", "0000:01:00.0"): "warn"}


def test_several_devices_or_none_named_leave_it_unplaced(tmp_path: Path) -> None:
    two = (
        HEAD + 'Activating <bpy_struct, CyclesDeviceSettings("Tesla T4") at 0x1>\n'
        'Activating <bpy_struct, CyclesDeviceSettings("Tesla P100-PCIE-16GB") at 0x2>\n' + FAILED
    )
    assert capture_findings(tmp_path, two) == {("application_cuda_error", None): "warn"}
    assert capture_findings(tmp_path, HEAD + FAILED) == {("application_cuda_error", None): "warn"}


def test_batch_ag_row(tmp_path: Path) -> None:
    text = (AG / "blender_blendercolab5_cuda_context_k80.txt").read_text()
    assert capture_findings(tmp_path, text) == {
        ("application_cuda_error", "Tesla K80 (the device Cycles activated)"): "warn"
    }
