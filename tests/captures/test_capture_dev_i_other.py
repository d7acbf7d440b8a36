"""Issue 46 dev set dev_i_other, beyond the xpu-smi and RAS readers: amdgpu's 'Fence fallback timer expired on
ring …' (the module's interrupts not arriving; an echo of a hang where a ring timed out), rocm-bandwidth-test
2.3.x's device line that gives a bus id without a UUID, and EDAC's corrected host-memory counts named per DIMM
in the host-error note. Written in the tools' own words; bus ids, DIMMs and counts made up."""

from __future__ import annotations

import json
from pathlib import Path

from gpuvet.captures import amd_smi, kernel
from gpuvet.captures.text import clean
from gpuvet.cli.app import main


def _doctor(capsys, tmp_path: Path, text: str) -> list[tuple[str, str, str]]:
    path = tmp_path / "log.txt"
    path.write_text(text)
    main(["doctor", "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return [(f["cause"], f.get("module"), f["severity"]) for f in json.loads(out)["findings"]]


FALLBACK = "[drm] Fence fallback timer expired on ring {ring}\n"


def test_fence_fallback_alone_warns_on_an_amd_module(capsys, tmp_path: Path) -> None:
    text = "".join(FALLBACK.format(ring=r) for r in ("gfx_0.0.0", "sdma0", "gfx_0.0.0"))
    assert _doctor(capsys, tmp_path, text) == [("module_fence_timeout", "an AMD module, bus id not in the log", "warn")]


def test_fence_fallback_beside_a_ring_timeout_is_its_echo(capsys, tmp_path: Path) -> None:
    text = ("[ 7120.410201] amdgpu 0000:0b:00.0: amdgpu: Fence fallback timer expired on ring gfx_0.0.0\n"
            "[ 7130.882034] amdgpu 0000:0b:00.0: amdgpu: ring gfx_0.0.0 timeout, signaled seq=1201, emitted seq=1204\n"
            "[ 7131.104418] amdgpu 0000:0b:00.0: amdgpu: Ring gfx_0.0.0 reset succeeded\n")
    assert [c for c, _, _ in _doctor(capsys, tmp_path, text)] == ["module_ring_reset_recovered"]


def test_an_rbt_2_3_device_line_gives_its_bus_id_without_a_uuid() -> None:
    text = ("          RocmBandwidthTest Version: 2.3.11\n\n"
            "          Device: 0,  AMD EPYC 7302 16-Core Processor\n"
            "          Device: 1,  Vega 20 [Radeon VII],  43:0.0\n")
    [m] = amd_smi.parse(clean(text).lines).modules
    assert (m.label, m.name, m.bus_id) == ("Device 1", "Vega 20 [Radeon VII]", "43:00.0")


def test_edac_corrected_counts_are_summed_per_dimm_in_the_host_note() -> None:
    text = ("[Tue Mar  4 02:11:09 2025] EDAC MC0: 40 CE memory read error on CPU_SrcID#1_Ha#0_Chan#2_DIMM#1 "
            "(channel:2 slot:1 page:0x11a2 offset:0x0 grain:32 syndrome:0x0 - area:DRAM err_code:0001:0092)\n"
            "[Tue Mar  4 02:11:40 2025] EDAC MC0: 2 CE memory read error on CPU_SrcID#1_Ha#0_Chan#2_DIMM#1 "
            "(channel:2 slot:1 page:0x11a3 offset:0x0 grain:32 syndrome:0x0 - area:DRAM err_code:0001:0092)\n")
    got = kernel.parse(clean(text).lines)
    assert any("42 corrected host-memory error(s) counted by EDAC "
               "(42 on CPU_SrcID#1_Ha#0_Chan#2_DIMM#1: a host DIMM)" in n for n in got.notes)
    # HM1: two reports on one DIMM are its own finding (host_memory_ce_repeated), placed on the DIMM, not a GPU
    assert [(e.kind, e.module, e.count) for e in got.events] == [
        ("host_memory_ce_repeated", "host DIMM CPU_SrcID#1_Ha#0_Chan#2_DIMM#1", 2)] and got.modules == []


HEALTH = ("[root@ascend01 ~]# npu-smi info -t health -i 3 -c 1\n"
          "        Health Status                  : {status}\n"
          "        Error Code                     : {code}\n")


def test_npu_smi_health_of_one_chip_is_its_verdict(capsys, tmp_path: Path) -> None:
    bad = HEALTH.format(status="Alarm", code="A8028801")
    # ASC: the Health word warns; its code is one Ascend's device plugin isolates the NPU for (MindCluster's
    # faultCode.json, SeparateNPU): critical (knowledge/npu_fault_codes.yaml)
    assert _doctor(capsys, tmp_path, bad) == [("module_reported_critical", "NPU 3 chip 1", "critical"),
                                              ("module_reported_warning", "NPU 3 chip 1", "warn")]
    assert _doctor(capsys, tmp_path, HEALTH.format(status="OK", code="NA")) == []


MST = ("$ sudo mst status -v\nMST modules:\n------------\n    MST PCI module is not loaded\n"
       "    MST PCI configuration module loaded\nPCI devices:\n------------\n"
       "DEVICE_TYPE             MST                           PCI       RDMA            NET                     NUMA\n"
       "ConnectX6(rev:0)        /dev/mst/mt4123_pciconf0      3b:00.0   mlx5_0          net-ibp59s0             0\n"
       "ConnectX6(rev:0)        /dev/mst/mt4123_pciconf1      86:00.0                                           1\n")


def test_mst_status_lists_each_card_with_its_bus_id_netdev_and_numa_node() -> None:
    from gpuvet.captures import nic_tools
    got, _ = nic_tools.parse(clean(MST).lines)
    assert got.kinds == ["mst status"]
    assert [(n.device, n.hca_type, n.bus_id, n.netdevs, n.numa_node) for n in got.nics] == [
        ("mlx5_0", "MT4123", "3B:00.0", ("ibp59s0",), 0), ("mt4123_pciconf1", "MT4123", "86:00.0", (), 1)]


def test_the_rocm_tools_finding_no_driver_say_no_module_is_visible(capsys, tmp_path: Path) -> None:
    for said in ("$ rocminfo\nROCk module is NOT loaded, possibly no GPU devices\n",
                 "$ amd-smi list\nERROR:root:Unable to detect any GPU devices, check amdgpu version and module status "
                 "(sudo modprobe amdgpu)\n",
                 "=== ROCm System Management Interface ===\nWARNING: No AMD GPUs specified\n=== End of ROCm SMI Log ===\n"):
        assert _doctor(capsys, tmp_path, said) == [("no_modules_visible", None, "critical")]
