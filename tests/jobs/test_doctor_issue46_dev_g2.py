"""doctor on the classes the second development set (issue 46, dev_g2) works on: newer drivers' -q
T.Limit temperature margins (degrees left to the limit, never temperatures) and a PCIe generation below
its top while the module is busy, from -q or --query-gpu CSV without a link width column. The captures
are written in nvidia-smi's formats; bus ids, UUIDs and figures are made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_capture, found_causes


def _tlimit_q(current: int, margin: int) -> str:
    """-q's Temperature section as drivers 535+ print it: thresholds as T.Limit margins, no Slowdown Temp."""
    return ("==============NVSMI LOG==============\n\nDriver Version                            : 570.124.06\n\n"
            "Attached GPUs                             : 1\nGPU 00000000:3B:00.0\n"
            "    Product Name                          : NVIDIA L40S\n    Temperature\n"
            f"        GPU Current Temp                  : {current} C\n"
            f"        GPU T.Limit Temp                  : {margin} C\n"
            "        GPU Shutdown T.Limit Temp         : -5 C\n        GPU Slowdown T.Limit Temp         : -2 C\n"
            "        GPU Max Operating T.Limit Temp    : 0 C\n        GPU Target Temperature            : N/A\n"
            "        Memory Current Temp               : N/A\n        Memory Max Operating T.Limit Temp : N/A\n")


def _causes(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, name: str) -> set[str]:
    _, data = doctor_capture(capsys, tmp_path, text, name=name)
    return {c for c, _ in found_causes(data)}


def test_tlimit_margins_are_margins_not_temperatures(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A 40 C module 45 C from its limit is cool, although its 'Slowdown T.Limit Temp' (-2 C) is below
    40 C; one whose margin has reached the slowdown step throttles, one at the max operating step is next."""
    thermal = {"thermal_throttling", "at_max_operating_temp"}
    assert not _causes(capsys, tmp_path, _tlimit_q(40, 45), "cool.txt") & thermal
    code, data = doctor_capture(capsys, tmp_path, _tlimit_q(91, -3), name="hot.txt")
    assert code == 1 and ("thermal_throttling", "0000:3B:00.0") in found_causes(data)
    assert _causes(capsys, tmp_path, _tlimit_q(87, 1), "warm.txt") & thermal == {"at_max_operating_temp"}


def _query_csv(gen: int, util: int) -> str:
    return ("$ nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.gpucurrent,pcie.link.gen.max,"
            "utilization.gpu --format=csv\n"
            "index, name, pci.bus_id, pcie.link.gen.gpucurrent, pcie.link.gen.max, utilization.gpu [%]\n"
            f"0, NVIDIA GeForce RTX 4090, 00000000:01:00.0, {gen}, 4, {util} %\n"
            "1, NVIDIA GeForce RTX 4090, 00000000:41:00.0, 4, 4, 97 %\n")


def test_a_busy_module_below_its_top_pcie_generation_is_downgraded(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    """No width column: the generation alone is judged, only while the module is busy (idle ones downshift)."""
    code, data = doctor_capture(capsys, tmp_path, _query_csv(1, 98), name="busy.csv")
    assert code == 1 and found_causes(data) >= {("pcie_link_downgraded", "0000:01:00.0")}
    assert ("pcie_link_downgraded", "0000:41:00.0") not in found_causes(data)
    assert "pcie_link_downgraded" not in _causes(capsys, tmp_path, _query_csv(1, 0), "idle.csv")


def _xml(margin: int, gen: int, util: int) -> str:
    """-q -x of drivers 535+: the T.Limit elements, no absolute thresholds; the link's generations and load."""
    return ("<?xml version=\"1.0\" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v12.dtd\">\n<nvidia_smi_log>\n"
            "\t<driver_version>550.90.07</driver_version>\n\t<attached_gpus>1</attached_gpus>\n"
            "\t<gpu id=\"00000000:65:00.0\">\n\t\t<product_name>NVIDIA RTX 6000 Ada Generation</product_name>\n"
            "\t\t<pci>\n\t\t\t<pci_gpu_link_info>\n\t\t\t\t<pcie_gen>\n"
            f"\t\t\t\t\t<max_link_gen>4</max_link_gen>\n\t\t\t\t\t<current_link_gen>{gen}</current_link_gen>\n"
            "\t\t\t\t</pcie_gen>\n\t\t\t</pci_gpu_link_info>\n\t\t</pci>\n"
            f"\t\t<utilization>\n\t\t\t<gpu_util>{util} %</gpu_util>\n\t\t</utilization>\n"
            f"\t\t<temperature>\n\t\t\t<gpu_temp>{85 - margin} C</gpu_temp>\n"
            f"\t\t\t<gpu_temp_tlimit>{margin} C</gpu_temp_tlimit>\n"
            "\t\t\t<gpu_temp_max_tlimit_threshold>-7 C</gpu_temp_max_tlimit_threshold>\n"
            "\t\t\t<gpu_temp_slow_tlimit_threshold>-2 C</gpu_temp_slow_tlimit_threshold>\n"
            "\t\t\t<gpu_temp_max_gpu_tlimit_threshold>0 C</gpu_temp_max_gpu_tlimit_threshold>\n"
            "\t\t</temperature>\n\t</gpu>\n</nvidia_smi_log>\n")


def test_the_xml_reads_the_same_margins_and_load(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert _causes(capsys, tmp_path, _xml(40, 4, 95), "ok.xml") & {"thermal_throttling", "pcie_link_downgraded"} \
        == set()
    assert {"thermal_throttling", "pcie_link_downgraded"} <= _causes(capsys, tmp_path, _xml(-4, 2, 95), "hot.xml")


_UNWARNED = ("node7:4410:4470 [1] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ens1f0\n"
             "node7:4410:4470 [1] NCCL INFO NCCL_IB_GID_INDEX set by environment to 3.\n"
             "node7:4410:4470 [1] NCCL INFO transport/net_ib.cc:310 -> 2\n"
             "node7:4410:4470 [1] NCCL INFO transport/net.cc:702 -> 2\n"
             "node7:4410:4455 [1] NCCL INFO init.cc:1301 -> 2\n"
             "node7:4410:4455 [1] NCCL INFO group.cc:64 -> 2 [Async thread]\n")


def test_an_error_trace_without_a_warn_that_reaches_init_is_an_init_failure(capsys: pytest.CaptureFixture[str],
                                                                              tmp_path: Path) -> None:
    """NCCL fails some calls with no WARN: the trace reaching init.cc says the communicator did not come up,
    its first frame (net_ib.cc) where, and the settings the process logged are cited beside it."""
    code, data = doctor_capture(capsys, tmp_path, _UNWARNED, name="nccl.log")
    assert code == 1 and ("collective_init_failed", "node7 GPU 1") in found_causes(data)
    f = next(f for f in data["findings"] if f["cause"] == "collective_init_failed")
    assert "net_ib.cc:310" in str(f["evidence"]["log"]) and "NCCL_IB_GID_INDEX" in str(f["evidence"]["settings"])
    done = ("node7:4410:4455 [1] NCCL INFO comm 0x55d0 rank 1 nranks 2 cudaDev 1 busId 1b000 - Init COMPLETE\n"
            "node7:4410:4480 [1] NCCL INFO misc/socket.cc:49 -> 6\nnode7:4410:4480 [1] NCCL INFO init.cc:1870 -> 6\n")
    assert "collective_init_failed" not in _causes(capsys, tmp_path, done, "teardown.log")


def test_a_runtime_worded_warn_whose_error_reaches_init_is_an_init_failure(capsys: pytest.CaptureFixture[str],
                                                                          tmp_path: Path) -> None:
    """'Got completion from peer … status=12' names no init step, but its error-return trace reaching init.cc before
    Init COMPLETE says the communicator never came up (R14A: ibv_modify_qp, the line this used, now takes its
    family's own cause, collective_link_failed, at init and while running alike)."""
    log = ("hostb:7001:7040 [2] NCCL INFO NET/IB : Using [0]mlx5_2:1/RoCE ; OOB eth0:10.1.2.3<0>\n"
           "hostb:7001:7060 [2] transport/net_ib.cc:1100 NCCL WARN NET/IB : Got completion from peer 10.1.2.9<41233> "
           "with status=12 opcode=0 len=0 vendor err 129 (Recv)\n"
           "hostb:7001:7060 [2] NCCL INFO transport/net_ib.cc:395 -> 2\n"
           "hostb:7001:7060 [2] NCCL INFO init.cc:566 -> 2\n")
    assert "collective_init_failed" in _causes(capsys, tmp_path, log, "init.log")
    later = log.replace("NCCL INFO init.cc:566 -> 2", "NCCL INFO enqueue.cc:1120 -> 2")
    assert "collective_init_failed" not in _causes(capsys, tmp_path, later, "runtime.log")
