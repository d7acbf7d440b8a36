"""Batch J's misses on AMD, Intel, NIC, Ascend and lspci output and batch I's leftovers (issue 46), each fixed for
its class of input and tested on lines written here in the tool's own form: HCCL's error code written after its
name alone on its line; UCX's completion errors on an RDMA port; sysfs InfiniBand counters printed by a shell;
lspci's tree; lspci's one-line listings of Intel GPUs; xpu-smi discovery --dump's CSV; rocm-smi's PwrCap column;
the NPUs an Ascend error log names."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures import ascend_errors, ib_counters
from gpuvet.captures.text import Line
from gpuvet.cli.app import main
from tests.support.helpers import capture_findings, capture_json


def test_an_hccl_code_after_its_name_is_read_with_the_codes_advice(tmp_path: Path) -> None:
    data = capture_json(tmp_path, "```\nCommunication_Error_Get_Socket(EI0006)\n```\n")
    found = data["findings"]
    assert [(f["cause"], f["severity"]) for f in found] == [("collective_runtime_error", "warn")]  # type: ignore
    assert "HCCL_CONNECT_TIMEOUT" in found[0]["fix"]  # type: ignore[index]
    assert capture_findings(tmp_path, "Error_Transport_Init(EJ0001)\n") == {
        ("collective_init_failed", "host and GPU not in the log"): "critical"}  # HCCP's code: its words say init
    other = ascend_errors.parse([Line(1, "Some_Runtime_Error(EH9999)")])  # another component's code, bracketed
    assert not other.failures and not other.runtime and not other.claimed


def _ucx(prefix: str, what: str, port: str) -> str:
    return f"{prefix} ib_mlx5_log.c:177  {what} on {port} (synd 0x15 vend 0x81 hw_synd 0/0)\n"


def test_ucx_completion_errors_are_one_warn_per_port_and_status(tmp_path: Path) -> None:
    log = "".join(_ucx(f"[node7:{pid}:0:{pid}]", "Transport retry count exceeded", "mlx5_3:1/IB") +
                  f"[node7:{pid}:0:{pid}] ib_mlx5_log.c:177  RC QP 0x1c{pid % 10} wqe[3]: SEND s-e [inl len 18]\n"
                  for pid in (2201, 2202, 2203))
    log += ("[1737742661.094513] [node8:3310:0]   ib_mlx5_log.c:143  UCX  ERROR   Remote access on mlx5_1:1/RoCE "
            "(synd 0x13 vend 0x88 hw_synd 0/0)\n")
    data = capture_json(tmp_path, log)
    found = {f["evidence"]["nic"]: f for f in data["findings"]}  # type: ignore[attr-defined]
    assert {(n, f["cause"], f["severity"], f["evidence"]["error"], f["evidence"]["times"]) for n, f in found.items()} == {
        ("mlx5_3 port 1", "rdma_completion_error", "warn", "Transport retry count exceeded", 3),
        ("mlx5_1 port 1", "rdma_completion_error", "warn", "Remote access", 1)}
    assert "UCX_RC_TIMEOUT" in found["mlx5_3 port 1"]["fix"]
    assert not [n for n in data["notes"] if "skipped" in n]  # type: ignore[attr-defined]  # the wqe lines read too
    bare = "Transport retry count exceeded on mlx5_0:1/IB (synd 0x15 vend 0x81 hw_synd 0/0)\n"  # grep'd, no prefix
    assert capture_findings(tmp_path, bare) == {("rdma_completion_error", "mlx5_0 port 1"): "warn"}
    path = tmp_path / "prose.txt"  # a sentence naming a port is no UCX line
    path.write_text("we moved the job on mlx5_0:1/IB to the other switch\n")
    assert main(["doctor", "--from", str(path)]) == 2


def _sysfs(dev: str, values: dict[str, int]) -> str:
    return "".join(f"/sys/class/infiniband/{dev}/ports/1/counters/{k}:{v}\n" for k, v in values.items())


def test_sysfs_ib_counters_at_their_limit_warn_on_the_port_and_counts_below_do_not(tmp_path: Path) -> None:
    healthy = {"symbol_error": 0, "link_downed": 1, "port_rcv_errors": 0, "link_error_recovery": 0,
               "excessive_buffer_overrun_errors": 0, "port_xmit_wait": 4294967295}  # xmit_wait is no error
    assert capture_findings(tmp_path, "$ grep -H . /sys/class/infiniband/mlx5_*/ports/1/counters/*\n" +
                     _sysfs("mlx5_4", healthy)) == {}
    full = _sysfs("mlx5_4", healthy) + _sysfs("mlx5_7", {**healthy, "symbol_error": 65535, "link_error_recovery": 255})
    data = capture_json(tmp_path, full)
    assert [(f["cause"], f["severity"], f["evidence"]["nic"]) for f in data["findings"]] == [  # type: ignore
        ("nic_counters_at_limit", "warn", "mlx5_7")]
    assert "symbol_error 65535" in data["findings"][0]["evidence"]["reading"]  # type: ignore[index]
    # a loop that prints each name then its value, in the counters directory a cd named
    loop = ("$ cd /sys/class/infiniband/ibp12s0/ports/1/counters\n$ for f in *; do echo \"== $f ==\"; cat $f; done\n"
            "=== link_downed ===\n255\n\n=== symbol_error ===\n0\n")
    assert capture_findings(tmp_path, loop) == {("nic_counters_at_limit", "ibp12s0 port 1"): "warn"}
    named = "port_rcv_errors: 0\nlocal_link_integrity_errors: 15\nlink_downed: 0\n"  # name: value, no directory
    assert capture_findings(tmp_path, named) == {("nic_counters_at_limit", ib_counters.UNNAMED): "warn"}
    two = _sysfs("mlx5_0", {"link_downed": 255}) + _sysfs("mlx5_3", {"symbol_error": 65535})  # one finding per port
    assert capture_findings(tmp_path, two) == {("nic_counters_at_limit", "mlx5_0 port 1"): "warn",
                                        ("nic_counters_at_limit", "mlx5_3 port 1"): "warn"}


def test_an_lspci_tree_is_read_as_structure_listing_and_judging_nothing(tmp_path: Path) -> None:
    tree = ("$ lspci -tv\n"
            "-+-[0000:80]-+-00.0  Advanced Micro Devices, Inc. [AMD] Starship/Matisse Root Complex\n"
            " |           +-01.1-[81-83]----00.0-[82-83]----00.0-[83]----00.0  NVIDIA Corporation AD102 [GeForce RTX 4090]\n"
            " |           \\-07.1-[84]--+-00.0  Advanced Micro Devices, Inc. [AMD] Starship/Matisse PCIe Dummy Function\n"
            " |                        \\-00.3  Advanced Micro Devices, Inc. [AMD] Starship USB 3.0 Host Controller\n"
            " \\-[0000:00]-+-00.0  Advanced Micro Devices, Inc. [AMD] Starship/Matisse Root Complex\n")
    doctor = capture_json(tmp_path, tree)
    assert doctor["findings"] == []
    assert any("lspci -t: a PCIe tree of 2 root bus(es)" in n and "5 function(s) named" in n
               for n in doctor["notes"])  # type: ignore[attr-defined]
    assert capture_json(tmp_path, tree, "inventory")["modules"] == []
    assert not [n for n in doctor["notes"] if "skipped" in n]  # type: ignore[attr-defined]


def test_short_lspci_lines_list_intel_gpus_alone_and_drop_them_beside_another_vendors(tmp_path: Path) -> None:
    intel = ("00:14.0 USB controller: Intel Corporation Device 7a60 (rev 11)\n"
             "3b:00.0 Display controller: Intel Corporation Device 0bd5 (rev 2f)\n"
             "9a:00.0 Display controller: Intel Corporation Device 0bd5 (rev 2f)\n"
             "c3:00.0 Ethernet controller: Intel Corporation Ethernet Controller E810-C (rev 02)\n")
    modules = capture_json(tmp_path, intel, "inventory")["modules"]
    assert [(m["bus_id"], m["model"]) for m in modules] == [  # type: ignore[attr-defined]
        ("3B:00.0", "Intel Device 0bd5"), ("9A:00.0", "Intel Device 0bd5")]
    mixed = ("00:02.0 VGA compatible controller: Intel Corporation Device 3e92\n"
             "01:00.0 VGA compatible controller: NVIDIA Corporation GA102 [GeForce RTX 3090] (rev a1)\n")
    data = capture_json(tmp_path, mixed, "inventory")
    assert [m["bus_id"] for m in data["modules"]] == ["01:00.0"]  # type: ignore[attr-defined]
    assert any("Intel display function(s) 00:02.0" in n for n in data["notes"])  # type: ignore[attr-defined]


def test_xpu_smi_discovery_dump_csv_names_each_device(tmp_path: Path) -> None:
    dump = ("$ xpu-smi discovery --dump 1,2,4,11\n"
            "Device ID,Device Name,PCI BDF Address,Memory Physical Size\n"
            '0,"Intel(R) Data Center GPU Flex 170","0000:4d:00.0","14248.00 MiB"\n'
            '1,"Intel(R) Data Center GPU Flex 170","0000:b1:00.0","N/A"\n')
    modules = capture_json(tmp_path, dump, "inventory")["modules"]
    assert [(m["model"], m["bus_id"]) for m in modules] == [  # type: ignore[attr-defined]
        ("Intel(R) Data Center GPU Flex 170", "0000:4D:00.0"), ("Intel(R) Data Center GPU Flex 170", "0000:B1:00.0")]
    assert capture_findings(tmp_path, dump) == {}


def test_rocm_smi_default_table_power_cap_is_listed_from_its_pwrcap_column(tmp_path: Path) -> None:
    table = ("======================= ROCm System Management Interface =======================\n"
             "================================= Concise Info =================================\n"
             "GPU  Temp   AvgPwr  SCLK     MCLK     Fan     Perf  PwrCap  VRAM%  GPU%\n"
             "0    41.0c  35.0W   1000Mhz  1200Mhz  0%      auto  300.0W    0%   0%\n"
             "1    40.0c  N/A     1000Mhz  1200Mhz  0%      auto  300.0W    0%   0%\n"
             "================================================================================\n"
             "============================= End of ROCm SMI Log ==============================\n")
    modules = capture_json(tmp_path, table, "inventory")["modules"]
    assert [m["power_limit_w"] for m in modules] == [300.0, None]  # type: ignore[attr-defined]
    assert capture_findings(tmp_path, table) == {}


def test_the_npus_an_ascend_error_log_names_are_listed_where_nothing_else_lists(tmp_path: Path) -> None:
    torch_npu = ("[ERROR] 2025-03-02-08:11:40 (PID:5120, Device:5, RankID:5) ERR02200 DIST call hccl api failed.\n"
                 "EI0006: 2025-03-02-08:11:40.101.220 Getting socket times out. Reason: Remote Rank did not send\n")
    assert [(m["id"], m["bus_id"]) for m in capture_json(tmp_path, torch_npu, "inventory")["modules"]] == [  # type: ignore
        ("gpu5", None)]
    device = ("EI9999: 2025-03-02-08:41:40.358.410  The error from device(chipId:2, dieId:0), serial number is 9, "
              "hccl fftsplus task timeout occurred during task execution, stream_id:5, stuck notify num:1\n")
    data = capture_json(tmp_path, device, "inventory")
    assert [(m["id"], m["bus_id"]) for m in data["modules"]] == [("gpu2", None)]  # type: ignore[attr-defined]
    assert any("Ascend error log: 1 NPU(s) named by device (2)" in n for n in data["notes"])  # type: ignore


def test_perfquery_counters_and_counters_beside_ibstat_are_judged_alike(tmp_path: Path) -> None:
    perfquery = ("# Port extended counters: Lid 7 port 1 (CapMask: 0x1600 CapMask2: 0x0000000)\n"
                 "PortSelect:......................1\nCounterSelect:...................0x0000\n"
                 "PortXmitData:....................13672645927\nSymbolErrorCounter:..............0\n"
                 "LinkErrorRecoveryCounter:........255\nLinkDownedCounter:...............3\nVL15Dropped:.....................0\n")
    data = capture_json(tmp_path, perfquery)
    assert [(f["cause"], f["module"]) for f in data["findings"]] == [  # type: ignore[attr-defined]
        ("nic_counters_at_limit", "LID 7 port 1")]
    assert any("read as perfquery" in n for n in data["notes"])  # type: ignore[attr-defined]
    # read once, a count under infiniband-diags' error_thresholds (10 link recoveries) is quiet; past it, the link's
    # errors (AX3: checks/nics.counters_over_threshold)
    assert capture_findings(tmp_path, perfquery.replace("255", "7")) == {}
    assert capture_findings(tmp_path, perfquery.replace("255", "12")) == {("nic_errors", "LID 7 port 1"): "warn"}
    ibstat = ("CA 'mlx5_2'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tFirmware version: 28.41.1000\n\tPort 1:\n"
              "\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n\t\tLink layer: InfiniBand\n")
    both = ibstat + _sysfs("mlx5_2", {"symbol_error": 65535, "link_downed": 0})  # one device: its counters kept
    assert capture_findings(tmp_path, both) == {("nic_counters_at_limit", "mlx5_2 port 1"): "warn"}
