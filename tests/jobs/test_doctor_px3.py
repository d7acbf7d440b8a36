"""Issue 46, batches N, O and P's leftovers (PX3): each a class of file an engineer expects read, on
lines written here in the tools' own formats."""

from __future__ import annotations

import json
from functools import partial

from gpuvet.cli.app import main
from tests.support.helpers import doctor_capture, found_causes, smi_table

_doctor = partial(doctor_capture, name="capture.txt")


def _rows_only() -> str:
    """nccl-tests all_reduce rows with no header (about 1 GB/s past 20 us): no device line names the hardware."""
    rows = []
    for size in (65536, 1048576, 4194304):
        t = 20.0 + size / 1e3
        alg = size / t / 1e3
        rows.append(f"{size:12d}  {size // 4:12d}     float     sum      -1  {t:7.1f}  {alg:6.2f}  {alg * 1.5:6.2f}"
                    f"      0  {t:7.1f}  {alg:6.2f}  {alg * 1.5:6.2f}      0")
    return "\n".join(rows) + "\n"


def test_a_busbw_with_no_hardware_named_says_can_t_tell_in_the_answer_s_first_line(capsys, tmp_path):
    path = tmp_path / "allreduce.txt"
    path.write_text(_rows_only(), encoding="utf-8")
    code = main(["doctor", "--from", str(path)])
    out = capsys.readouterr().out
    head = " ".join(out.split("\ncan't tell:")[0].split())  # the verdict, before the checks' summary line
    assert code == 0 and head.startswith("doctor (triage across all playbooks): no cause found, but can't tell"), out
    assert "names no module" in head and "device lines" in head and "nvidia-smi -L" in head, head


def test_the_json_answer_lists_the_figure_it_could_not_judge(capsys, tmp_path):
    _, data = _doctor(capsys, tmp_path, _rows_only())
    (said,) = data["cant_tell"]["figures"]
    assert "busbw" in said and "nvidia-smi -L" in said and not found_causes(data)


# amd-smi metric --json pasted from inside: the usage and power sections, the opening and the end cut
_AMD_FRAGMENT = """\
            "usage": {
                "gfx_activity": {
                    "value": 97,
                    "unit": "%"
                },
                "umc_activity": {
                    "value": 41,
                    "unit": "%"
                }
            },
            "power": {
                "socket_power": {
                    "value": 288,
                    "unit": "W"
                },
                "gfx_voltage": "N/A"
            },
            "clock": {
                "gfx_0": {
                    "clk": {
"""


def test_an_amd_smi_json_fragment_is_read_for_what_it_holds_without_a_finding(capsys, tmp_path):
    code, data = _doctor(capsys, tmp_path, _AMD_FRAGMENT)
    assert code == 0 and not data["findings"]
    (note,) = [n for n in data["notes"] if "a fragment" in n]
    assert "USAGE/GFX_ACTIVITY 97 %" in note and "POWER/SOCKET_POWER 288 W" in note, note
    assert "no module is listed" in note


def test_the_inventory_of_an_amd_smi_json_fragment_lists_its_fields_and_no_module(capsys, tmp_path):
    path = tmp_path / "metric.json"
    path.write_text(_AMD_FRAGMENT, encoding="utf-8")
    code = main(["inventory", "--from", str(path), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["modules"] == [] and any("USAGE/UMC_ACTIVITY 41 %" in n for n in data["notes"])


def test_a_json_fragment_is_closed_under_cut_keys_and_nothing_after_its_last_whole_field():
    from gpuvet.captures.json_cut import fragment

    cut = fragment('"a": {"b": 1}, "c": 2}, "d": [3, 4], "e": {"f": ')
    assert cut is not None and cut.text == '{"(cut)": {"a": {"b": 1}, "c": 2}, "d": [3, 4]}'
    assert fragment('plain text, "a": 1') is None


# a rig report's GPU section pasted from below its first GPU's bullet: that GPU's PCIe line still places it
_RIG = """\
  - **PCIe:** x8 lanes negotiated (GPU max x16, Gen up to 4) | bus 00000000:41:00.0
- **GPU 1:** NVIDIA GeForce RTX 3060 | 12288 MiB | driver 550.90.07 | VBIOS 94.06.2f.00.9a | persistence=Enabled
  - **Power:** limit=170.00 W (default=170.00 W, max=170.00 W) | current_draw=21.50 W
  - **PCIe:** x16 lanes negotiated (GPU max x16, Gen up to 4) | bus 00000000:61:00.0
"""


def test_a_pcie_bullet_above_the_first_gpu_bullet_is_its_own_module(capsys, tmp_path):
    code, data = _doctor(capsys, tmp_path, _RIG)
    assert code == 1 and ("pcie_link_downgraded", "0000:41:00.0") in found_causes(data), found_causes(data)
    assert not [f for f in data["findings"] if f.get("module") == "0000:61:00.0"]
    path = tmp_path / "inv.txt"
    path.write_text(_RIG, encoding="utf-8")
    main(["inventory", "--from", str(path), "--json"])
    modules = json.loads(capsys.readouterr().out)["modules"]
    assert sorted(m["bus_id"] for m in modules) == ["0000:41:00.0", "0000:61:00.0"], modules


def _table(name: str, temp: int) -> str:
    return smi_table((name, temp))


def test_a_table_temperature_at_its_design_slowdown_is_throttling(capsys, tmp_path):
    code, data = _doctor(capsys, tmp_path, _table("NVIDIA H100 80GB HBM3", 90))
    (f,) = [f for f in data["findings"] if f["cause"] == "thermal_throttling"]
    assert code == 1 and f["module"] == "0000:19:00.0" and f["evidence"]["slowdown_c"] == 89, f


def test_a_table_temperature_below_its_design_slowdown_is_clear_with_the_basis(capsys, tmp_path):
    _, data = _doctor(capsys, tmp_path, _table("NVIDIA H100 80GB HBM3", 61), "--all")
    (step,) = {s["summary"]: s for s in data["steps"] if s["check"] == "thermal_state"}.values()
    assert step["status"] == "clear" and "61 °C of 89 °C" in json.dumps(step["evidence"], ensure_ascii=False)


def test_a_temperature_of_a_module_whose_name_the_table_cut_is_can_t_tell_in_the_answer(capsys, tmp_path):
    """Said once, in the closing line (issue 46: a headline per module was noise); the step keeps the why."""
    path = tmp_path / "smi.txt"
    path.write_text(_table("NVIDIA GeForce ...", 71), encoding="utf-8")
    code = main(["doctor", "--from", str(path)])
    head, tail = (" ".join(part.split()) for part in capsys.readouterr().out.split("\ncan't tell:"))
    assert code == 0 and "71 °C" not in head and "too hot" not in head, head
    assert "1 temperature(s) read whose model publishes no slowdown or shutdown figure" in tail, tail
    _, data = _doctor(capsys, tmp_path, _table("NVIDIA GeForce ...", 71), "--all")
    (step,) = {s["summary"]: s for s in data["steps"] if s["check"] == "thermal_state"}.values()
    assert step["status"] == "inconclusive" and "0000:19:00.0 at 71 °C" in step["summary"]
    assert "name cut by the table" in step["summary"] and "can't tell whether it is too hot" in step["summary"]


def test_rocm_smi_1x_names_a_radeon_by_its_device_id_and_its_temperature_is_not_its_own_limit(capsys, tmp_path):
    table = "\n".join([
        "====================    ROCm System Management Interface    ====================",
        "================================================================================",
        " GPU  DID    Temp     AvgPwr   SCLK     MCLK     Fan      Perf    OverDrive  ECC",
        "  0   73bf   88.0c    241.0W   2250Mhz  1000Mhz  35.0%    auto      0%       N/A",
        "================================================================================",
        "====================           End of ROCm SMI Log          ====================", ""])
    path = tmp_path / "rocm.txt"
    path.write_text(table, encoding="utf-8")
    main(["inventory", "--from", str(path), "--json"])
    (module,) = json.loads(capsys.readouterr().out)["modules"]
    assert "Radeon RX 6800/6800 XT / 6900 XT (Navi 21)" in json.dumps(module), module
    code, data = _doctor(capsys, tmp_path, table)
    (note,) = [n for n in data["notes"] if "88 °C" in n]
    assert code == 0 and "Navi 21" in note and "can't tell whether it is too hot" in note, note


def test_a_net_socket_channel_over_a_docker_bridge_names_the_interface_from_one_host_s_log(capsys, tmp_path):
    """One host's NCCL_DEBUG=INFO: a ring channel via NET joins a rank on another node, and the sockets NCCL
    listed include docker's bridge: the interface, and NCCL_SOCKET_IFNAME, are the answer."""
    host = "gpu-a17:2210:2240 [0]"
    log = "\n".join([
        f"{host} NCCL INFO Bootstrap : Using eth0:10.4.7.21<0> docker0:172.17.0.1<0>",
        f"{host} NCCL INFO NET/Socket : Using [0]eth0:10.4.7.21<0> [1]docker0:172.17.0.1<0>",
        f"{host} NCCL INFO Using network Socket",
        "NCCL version 2.10.3+cuda11.4",
        f"{host} NCCL INFO Channel 00 : 1[3b000] -> 0[3b000] [receive] via NET/Socket/1", ""])
    code, data = _doctor(capsys, tmp_path, log, "--all")
    (f,) = [f for f in data["findings"] if f["cause"] == "nccl_socket_wrong_interface"]
    assert code == 1 and "docker0:172.17.0.1" in json.dumps(f["evidence"]) and "NCCL_SOCKET_IFNAME" in f["fix"]
    assert f["module"] == "gpu-a17"


def test_one_host_on_sockets_without_a_net_channel_is_still_can_t_tell(capsys, tmp_path):
    host = "gpu-a17:2210:2240 [0]"
    log = "\n".join([f"{host} NCCL INFO NET/Socket : Using [0]eth0:10.4.7.21<0> [1]docker0:172.17.0.1<0>",
                     f"{host} NCCL INFO Using network Socket", ""])
    _, data = _doctor(capsys, tmp_path, log, "--all")
    assert not [f for f in data["findings"] if f["cause"] == "nccl_socket_wrong_interface"]


def test_amdgpu_firmware_loader_lines_name_the_chip_in_inventory_without_a_bus_id(capsys, tmp_path):
    log = "\n".join([
        "sienna_cichlid_pfp.bin: could not load binary firmware /boot/firmware/sienna_cichlid_pfp.bin either",
        "drmn0: successfully loaded firmware image 'amdgpu/sienna_cichlid_pfp.bin'",
        "drmn0: successfully loaded firmware image 'amdgpu/sienna_cichlid_me.bin'", ""])
    path = tmp_path / "dmesg.txt"
    path.write_text(log, encoding="utf-8")
    assert main(["inventory", "--from", str(path), "--json"]) == 0
    (module,) = json.loads(capsys.readouterr().out)["modules"]
    assert "AMD Navi 21 (sienna_cichlid)" in json.dumps(module), module
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 0 and not data["findings"]
