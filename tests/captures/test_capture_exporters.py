"""The GPU monitoring agents' own text (issue 46, batch I): the exporters' Prometheus text (dcgm-exporter's
DCGM_FI_* samples, AMD device-metrics-exporter's gpu_* samples) read as modules from their labels and judged by
their error counters, zeros saying nothing and a sample cut mid-line not read; gpud's event text and its JSON
events (the Xid in extra_info's escaped JSON) read as the Xid they report on the module they name. The lines are
written here in each tool's format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuvet.captures.prom_metrics import parse_dcgm, sample
from gpuvet.captures.text import Line
from tests.captures.test_captures_fresh_c import run_json


def _run(tmp_path: Path, command: str, text: str) -> dict[str, Any]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    _, data = run_json(command, "--from", str(path))
    return data


def _causes(tmp_path: Path, text: str) -> list[tuple[str, str, str | None]]:
    found = _run(tmp_path, "doctor", text)["findings"]
    return [(f["cause"], f["severity"], f.get("module")) for f in found if f["severity"] in ("warn", "critical")]


def _dcgm(metric: str, kind: str, values: tuple[str, str]) -> str:
    head = f"# HELP {metric} a counter\n# TYPE {metric} {kind}\n"
    return head + "".join(
        f'{metric}{{gpu="{i}",UUID="GPU-5e1d0c2b-0000-4000-8000-00000000000{i}",pci_bus_id="00000000:{b}:00.0",'
        f'device="nvidia{i}",modelName="NVIDIA H100 80GB HBM3",Hostname="node-17",DCGM_FI_DRIVER_VERSION="550.54.15"}}'
        f" {v}\n" for i, (b, v) in enumerate(zip(("1B", "43"), values, strict=True)))


def test_prometheus_samples_with_labels_escapes_and_timestamps_are_read_whole() -> None:
    s = sample('gpu_power_usage{gpu_id="1",card_model="a \\"quoted\\" {model}",hostname="h"} 312.5 1712000000000')
    assert s is not None and s.name == "gpu_power_usage" and s.value == 312.5 and s.labels["gpu_id"] == "1"
    assert sample("DCGM_FI_DEV_GPU_TEMP 41") is not None
    assert sample('DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-1') is None  # cut mid-line
    assert sample("# TYPE DCGM_FI_DEV_GPU_TEMP gauge") is None


def test_dcgm_exporter_text_lists_its_modules_from_the_labels_and_zeros_say_nothing(tmp_path: Path) -> None:
    text = (_dcgm("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter", ("0", "0"))
            + _dcgm("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", ("0", "0"))
            + 'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu="1",UUID="GPU-5e1d0c2b-00')  # the paste's last line, cut
    modules = _run(tmp_path, "inventory", text)["modules"]
    assert [(m["id"], m["model"], m["bus_id"]) for m in modules] == [
        ("gpu0", "NVIDIA H100 80GB HBM3", "0000:1B:00.0"), ("gpu1", "NVIDIA H100 80GB HBM3", "0000:43:00.0")]
    assert _causes(tmp_path, text) == []
    got = parse_dcgm([Line(no, t) for no, t in enumerate(text.splitlines(), 1)])
    assert len(got.claimed) == 8 and any("cut mid-line" in n for n in got.notes)  # the cut sample is not read


def test_dcgm_exporter_uncorrectable_ecc_and_a_remap_failure_are_judged_on_their_module(tmp_path: Path) -> None:
    text = _dcgm("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", ("0", "3"))
    causes = _causes(tmp_path, text)
    assert causes and all(module == "0000:43:00.0" for _, _, module in causes)
    remap = _dcgm("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", ("1", "0"))
    causes = _causes(tmp_path, remap)
    assert causes and all(module == "0000:1B:00.0" for _, _, module in causes)


def test_amd_device_metrics_exporter_text_lists_its_modules_and_judges_uncorrectable_ecc(tmp_path: Path) -> None:
    def amd(value: str) -> str:
        return "".join(
            f"# HELP gpu_ecc_{kind}_total ECC error count\n# TYPE gpu_ecc_{kind}_total gauge\n" + "".join(
                f'gpu_ecc_{kind}_total{{card_model="AMD Instinct MI300X",gpu_id="{g}",hostname="mi-04",'
                f'serial_number="PHX00{g}"}} {value if (kind, g) == ("uncorrect", 1) else 0}\n' for g in (0, 1))
            for kind in ("correct", "uncorrect"))
    modules = _run(tmp_path, "inventory", amd("0"))["modules"]
    assert [m["model"] for m in modules] == ["AMD Instinct MI300X"] * 2
    assert _causes(tmp_path, amd("0")) == []
    assert [sev for _, sev, _ in _causes(tmp_path, amd("12"))] and _causes(tmp_path, amd("12"))[0][1] == "critical"


def test_gpuds_event_text_is_the_xid_on_the_pci_id_it_names(tmp_path: Path) -> None:
    text = ("component accelerator-nvidia-error-xid: unhealthy\n"
            "reason: XID 79(GPU has fallen off the bus) detected on PCI:0000:3b:00\n")
    assert _causes(tmp_path, text) == [("module_fell_off_bus", "critical", "0000:3B:00.0")]


def test_gpuds_json_event_reads_the_xid_in_its_escaped_extra_info_even_cut(tmp_path: Path) -> None:
    """The message names the Xid; extra_info's data (an escaped JSON string) names it again with the device's UUID,
    where the message line is left out; a string cut before its end is read up to the cut."""
    data = ('        "data": "{\\"time\\":\\"2025-02-01T09:00:00Z\\",\\"data_source\\":\\"dmesg\\",'
            '\\"device_uuid\\":\\"GPU-9a8b7c6d-1111-2222-3333-444455556666\\",\\"xid\\":48,\\"suggested_act')
    with_message = '{\n  "events": [\n    {\n      "message": "xid 48 detected by dmesg (3 minutes ago)",\n' + data
    assert [c[1] for c in _causes(tmp_path, with_message)] == ["critical"]
    assert _causes(tmp_path, data + "\n") == [("xid", "critical", "GPU-9a8b7c6d-1111-2222-3333-444455556666")]


def test_dcgm_exporter_nvlink_error_counters_are_judged_per_module_and_zeros_say_nothing(tmp_path: Path) -> None:
    """CRC, replay and recovery counters (a module's total or one link's) as nvidia-smi nvlink -e's counters."""
    zeros = (_dcgm("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter", ("0", "0"))
             + _dcgm("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter", ("0", "0")))
    assert _causes(tmp_path, zeros) == []
    assert _causes(tmp_path, zeros.replace('"00000000:43:00.0",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",'
                                           'Hostname="node-17",DCGM_FI_DRIVER_VERSION="550.54.15"} 0\n# HELP DCGM_FI_DEV_'
                                           'NVLINK_REPLAY', '"00000000:43:00.0",device="nvidia1",modelName="NVIDIA H100 '
                                           '80GB HBM3",Hostname="node-17",DCGM_FI_DRIVER_VERSION="550.54.15"} 4096\n'
                                           '# HELP DCGM_FI_DEV_NVLINK_REPLAY')) == [
        ("nvlink_errors", "warn", "0000:43:00.0")]
    per_link = _dcgm("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_L7", "counter", ("2", "0"))
    assert _causes(tmp_path, per_link) == [("nvlink_errors", "warn", "0000:1B:00.0")]


def test_an_older_dcgm_exporter_without_the_bus_id_label_lists_its_modules_by_index_and_uuid(tmp_path: Path) -> None:
    text = "".join(f'DCGM_FI_DEV_GPU_TEMP{{gpu="{i}",UUID="GPU-604ac76c-d9cf-4ef3-82e9-d92044ab6e5{i}",'
                   f'device="nvidia{i}",modelName="Tesla T4",Hostname="exporter-pod"}} 3{i}\n' for i in (1, 0))
    modules = _run(tmp_path, "inventory", text)["modules"]
    assert [(m["id"], m["model"]) for m in modules] == [("gpu0", "Tesla T4"), ("gpu1", "Tesla T4")]
    assert _causes(tmp_path, text) == []


def test_an_infinite_or_impossible_counter_is_no_reading_not_a_crash() -> None:
    """Prometheus prints +Inf and NaN as values; a counter can hold neither, nor more than 64 bits."""
    for value in ("+Inf", "-Inf", "NaN", "1e300"):
        s = sample(f'DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL{{gpu="0",UUID="GPU-1"}} {value}')
        assert s is not None and s.value != s.value  # NaN: read as a sample, judged as no reading
    kept = sample('DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL{gpu="0",UUID="GPU-1"} 12')
    assert kept is not None and kept.value == 12
