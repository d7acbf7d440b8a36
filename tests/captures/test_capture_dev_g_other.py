"""Readers beyond NVIDIA's own tools, fixed by class after the dev set tests/data/captures/dev_g_other
(issue 46): lspci's AMD GPU functions and a device an 'lspci -s BUS' command chose, lshca's table
(bus id, NUMA node, PCIe link), rccl-tests' device lines with a whole bus id, a UUID placeholder that
names no module, npu-smi's row cut short, Ascend's runtime codes beside HCCL's, and the amdgpu
driver's initialisation failure. Each capture is written here in the tool's own format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuvet.captures import ascend_errors, links, nic_tools, npu_smi, rocm_validation
from gpuvet.captures.text import clean
from gpuvet.cli.app import main


def _inventory(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> dict[str, Any]:
    f = tmp_path / "capture.txt"
    f.write_text(text, encoding="utf-8")
    assert main(["inventory", "--from", str(f), "--json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


LSPCI_AMD = """\
$ lspci | grep -iE 'vga|display'
0b:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 [Radeon RX 7900 XT/7900 XTX] (rev c8)
0c:00.0 Display controller: Advanced Micro Devices, Inc. [AMD/ATI] Aldebaran/MI200 [Instinct MI210] (rev 02)
$ sudo lspci -s 0c:00.0 -vv | grep -E 'LnkCap:|LnkSta:'
    LnkCap: Port #0, Speed 16GT/s, Width x16, ASPM L0s L1, Exit Latency L0s <64ns, L1 <1us
    LnkSta: Speed 16GT/s, Width x16
"""


def test_lspci_lists_amd_gpu_functions_and_an_lspci_s_command_names_the_fields_after_it(capsys, tmp_path) -> None:
    parsed = links.parse_lspci(clean(LSPCI_AMD).lines)
    assert [(g.bus_id, g.vendor, g.model) for g in parsed.listed] == [
        ("0B:00.0", "AMD", "Navi 31 [Radeon RX 7900 XT/7900 XTX]"), ("0C:00.0", "AMD", "Aldebaran/MI200 [Instinct MI210]")]
    assert parsed.gpus == []  # nvidia-smi's 'No devices were found' is judged against NVIDIA's functions only
    assert [(p.device, p.width, p.speed_gts) for p in parsed.links] == [("0C:00.0", 16, 16.0)]
    modules = _inventory(capsys, tmp_path, LSPCI_AMD)["modules"]
    assert [(m["model"], m["bus_id"], m["pcie_gen_current"], m["pcie_width_max"]) for m in modules] == [
        ("AMD Navi 31 [Radeon RX 7900 XT/7900 XTX]", "0B:00.0", None, None),
        ("AMD Instinct MI210", "0C:00.0", 4, 16)]  # pci.ids' product is a catalog model: named as the catalog knows it


LSHCA = """\
--------------------------------------------------------------------------------------------------
Dev #1
 Desc: Mellanox Technologies MT28908 Family [ConnectX-6]
 FW: 20.31.1014
 Driver: mlnx_ofed-5.8-1.0.1.1
--------------------------------------------------------------------------------------------------
  PCI_addr   |  RDMA  |  Net   | Numa | IpStat | Link | Rate | LnkCapWidth | LnkStaWidth | HCA_Type
--------------------------------------------------------------------------------------------------
0000:41:00.0 | mlx5_0 | ibs1f0 |  1   | down   | IB   | 200  |   x16 G4    |   x8 G3*    |  MT4123
--------------------------------------------------------------------------------------------------
CA 'mlx5_0'
\tCA type: MT4123
\tNumber of ports: 1
\tPort 1:
\t\tState: Active
\t\tPhysical state: LinkUp
\t\tRate: 200
\t\tLink layer: InfiniBand
"""


def test_lshca_table_gives_the_bus_id_numa_node_and_pcie_link_beside_ibstat_ports(capsys, tmp_path) -> None:
    parsed, _ = nic_tools.parse(clean(LSHCA).lines)
    [nic] = parsed.nics
    assert (nic.device, nic.bus_id, nic.numa_node, nic.netdevs, nic.firmware) == (
        "mlx5_0", "0000:41:00.0", 1, ("ibs1f0",), "20.31.1014")
    assert nic.pcie is not None and (nic.pcie.gen, nic.pcie.width, nic.pcie.gen_max, nic.pcie.width_max) == (3, 8, 4, 16)
    assert [(p.state, p.rate_gbps) for p in nic.ports] == [("ACTIVE", 200.0)]  # ibstat's port, not lshca's Rate
    assert "lshca" in parsed.kinds
    f = tmp_path / "lshca.txt"
    f.write_text(LSHCA, encoding="utf-8")
    main(["doctor", "--from", str(f), "--json"])
    found = {x["cause"]: x["severity"] for x in json.loads(capsys.readouterr().out)["findings"]}
    assert found.get("nic_pcie_limits_rate") == "warn"  # Gen3 x8 carries ~63 Gb/s, below the port's 200


def test_a_nic_pcie_link_below_its_cap_that_still_carries_the_port_is_a_note(capsys, tmp_path) -> None:
    text = LSHCA.replace("x8 G3*", "x16 G3*").replace("Rate: 200", "Rate: 100")
    f = tmp_path / "lshca.txt"
    f.write_text(text, encoding="utf-8")
    main(["doctor", "--from", str(f), "--json"])
    found = {x["cause"]: x["severity"] for x in json.loads(capsys.readouterr().out)["findings"]}
    assert found.get("nic_pcie_below_cap") == "info" and "nic_pcie_limits_rate" not in found


RCCL_HEADER = """\
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1
rccl-tests: Version develop:7f1a2b3
# Using devices
#  Rank  0 Group  0 Pid  81233 on   mi3xx-07 device  0 [0001:00:00.0] AMD Instinct MI300X VF
#  Rank  1 Group  0 Pid  81234 on   mi3xx-07 device  1 [0002:00:00.0] AMD Instinct MI300X VF
"""


def test_rccl_tests_device_lines_with_a_whole_bus_id_list_the_amd_modules(capsys, tmp_path) -> None:
    modules = _inventory(capsys, tmp_path, RCCL_HEADER)["modules"]
    assert [(m["model"], m["bus_id"]) for m in modules] == [
        ("AMD Instinct MI300X VF", "0001:00:00.0"), ("AMD Instinct MI300X VF", "0002:00:00.0")]


RBT = """\
          RocmBandwidthTest Version: 2.6.0

          Device: 0,  AMD Ryzen Threadripper PRO 5975WX 32-Cores
          Device: 1,  Radeon PRO W7900,  GPU-XXXX,  23:0.0
          Device: 2,  Radeon PRO W7900,  GPU-XXXX,  43:0.0

          Inter-Device Access

          D/D       0         1         2

          0         1         1         1

          1         1         1         0

          2         1         0         1

"""


def test_a_uuid_placeholder_names_no_module_and_an_access_zero_is_no_peer_access_on_an_xgmi_design(capsys, tmp_path) -> None:
    modules = _inventory(capsys, tmp_path, RBT)["modules"]
    assert [m["bus_id"] for m in modules] == ["23:00.0", "43:00.0"]  # two GPUs, though both print GPU-XXXX
    parsed = rocm_validation.parse(clean(RBT).lines)
    assert [(k.src, k.dst) for k in parsed.no_peer] == [
        ("Device 1 (Radeon PRO W7900, 23:0.0)", "Device 2 (Radeon PRO W7900, 43:0.0)")]  # CPU pairs are not peers
    f = tmp_path / "rbt.txt"
    f.write_text(RBT, encoding="utf-8")
    main(["doctor", "--from", str(f), "--json"])  # PCIe cards: no peer access may be their design (as CUDA's)
    assert "p2p_unavailable" not in [x["cause"] for x in json.loads(capsys.readouterr().out)["findings"]]
    f.write_text(RBT.replace("Radeon PRO W7900", "AMD Instinct MI250X"), encoding="utf-8")
    main(["doctor", "--from", str(f), "--json"])  # an xGMI design joins its peers: a 0 is a fault
    [p2p] = [x for x in json.loads(capsys.readouterr().out)["findings"] if x["cause"] == "p2p_unavailable"]
    assert p2p["severity"] == "warn" and "rocm-smi --showtopo" in p2p["fix"]


NPU_CUT = """\
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip  Phy-ID              | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 3     Ascend910           | OK            | 171.2       35                0    / 0             |
| 0     6                   | 0000:5A:00.0  | 0           0    / 0          3390 / 65536         |
+------------------------------------------------------------------------------------------------+
| 3     Ascend910           | OK            | -           36                0    / 0             |
| 1     7                   | 0000:5C:00.0  | 0           0    / 0
"""


def test_an_npu_smi_row_cut_after_its_bus_id_keeps_the_chip_without_its_memory() -> None:
    parsed = npu_smi.parse(clean(NPU_CUT).lines)
    assert [(m.label, m.bus_id, m.memory_mib) for m in parsed.modules] == [
        ("NPU 3 chip 0", "0000:5A:00.0", 65536.0), ("NPU 3 chip 1", "0000:5C:00.0", None)]


RUNTIME = """\
node-3: EE9999: Inner Error!
node-3:         rtStreamSynchronize execute failed, reason=[task timeout][FUNC:FuncErrorReason]\
[FILE:error_message_manage.cc][LINE:53]
node-3: EE9999: 2025-01-09-03:12:44.118.020  synchronize stream failed, runtime result = 107020[FUNC:ReportCallError]
node-3: EI0006: 2025-01-09-03:12:44.120.775 Getting socket times out. Reason: Remote Rank did not send the data in time.
"""


def test_the_runtimes_codes_are_kept_apart_from_hccls_with_their_reason() -> None:
    parsed = ascend_errors.parse(clean(RUNTIME).lines)
    assert [f.at.source for f in parsed.failures] == ["EI0006"]
    [runtime] = parsed.runtime
    assert (runtime.at.source, runtime.at.lib) == ("EE9999", "CANN runtime") and "task timeout" in runtime.at.message


ROCMINFO = """\
*******
Agent 1
*******
  Name:                    AMD EPYC 9654 96-Core Processor
  Uuid:                    CPU-XX
  Marketing Name:          AMD EPYC 9654 96-Core Processor
  Vendor Name:             CPU
  Device Type:             CPU
*******
Agent 3
*******
  Name:                    gfx90a
  Uuid:                    GPU-5d3f8a1c2b7e9046
  Marketing Name:          AMD Instinct MI250X/MI250
  Vendor Name:             AMD
  Device Type:             GPU
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-
"""


def test_rocminfo_lists_its_gpu_agents_by_marketing_name_not_its_cpus(capsys, tmp_path) -> None:
    modules = _inventory(capsys, tmp_path, ROCMINFO)["modules"]
    assert [(m["id"], m["model"], m["uuid"]) for m in modules] == [("gpu0", "AMD Instinct MI250X/MI250",
                                                                      "GPU-5d3f8a1c2b7e9046")]


MONITOR = """\
$ amd-smi monitor
GPU  POWER  GPU_TEMP  MEM_TEMP  GFX_UTIL  GFX_CLOCK  MEM_UTIL  SINGLE_ECC  DOUBLE_ECC  PCIE_REPLAY  VRAM_USED  VRAM_TOTAL
  0  741 W     78 °C     71 °C     100 %   1987 MHz      56 %           0           0            0  176842 MB   196592 MB
  1  122 W     41 °C     36 °C       0 %    132 MHz       0 %          12           4            0     283 MB   196592 MB
"""


def test_amd_smi_monitor_rows_are_modules_read_by_their_header(capsys, tmp_path) -> None:
    modules = _inventory(capsys, tmp_path, MONITOR)["modules"]
    assert [(m["id"], m["memory_bytes"] // 2**20) for m in modules] == [("gpu0", 196592), ("gpu1", 196592)]
    f = tmp_path / "monitor.txt"
    f.write_text(MONITOR, encoding="utf-8")
    main(["doctor", "--from", str(f), "--json"])
    found = {(x["cause"], x["module"]) for x in json.loads(capsys.readouterr().out)["findings"]}
    assert found == {("module_reported_critical", "GPU 1")}  # its 4 uncorrectable (DOUBLE_ECC) errors


MLXLINK = """\
[root@gpu-07 ~]# mlxlink -d mlx5_3 -p 1

Operational Info
----------------
State                           : Polling
Physical state                  : ETH_AN_FSM_ENABLE
Speed                           : N/A
Width                           : N/A
FEC                             : N/A
Loopback Mode                   : No Loopback
Auto Negotiation                : ON

Troubleshooting Info
--------------------
Status Opcode                   : 1024
Group Opcode                    : PHY FW
Recommendation                  : Cable is unplugged
"""


def test_mlxlinks_operational_info_is_the_named_devices_port() -> None:
    parsed, _ = nic_tools.parse(clean(MLXLINK).lines)
    [nic] = parsed.nics
    [port] = nic.ports
    assert (nic.device, port.port, port.state, port.rate_gbps) == ("mlx5_3", 1, "DOWN", None)
    assert "mlxlink" in parsed.kinds
    hdr = MLXLINK.replace("Polling", "Active").replace("ETH_AN_FSM_ENABLE", "LinkUp").replace(
        "Speed                           : N/A", "Speed                           : IB-HDR").replace(
        "Width                           : N/A", "Width                           : 2x")
    [up] = nic_tools.parse(clean(hdr).lines)[0].nics[0].ports
    assert (up.state, up.rate_gbps, up.width, up.link_layer) == ("ACTIVE", 100.0, "2X", "InfiniBand")  # HDR100
