"""Batch N's refusals as classes (issue 46): NVML's GPU_IS_LOST in every spelling a miner logs it (its enum name
GPUIsLost, NVML_ERROR_GPU_IS_LOST) and NVAPI's NVIDIA_DEVICE_NOT_FOUND; dcgm-exporter's XID metric with its labels
in any order, with a value or only its err_code label; a CANN traceback's failed HCCL call and its HcclResult;
amdgpu's bring-up through DRM's info prints, read as a clear kernel log; dcgmi dmon rows under its command line
without the '#Entity' header; xpu-smi's default-table rows under the bare command. Written in each tool's own
wording (NVML's and NVAPI's status names, dcgm-exporter's metric, hccl_types.h's results, amdgpu's init prints,
dcgmi's and xpu-smi's columns); bus ids, indices, times and values made up."""

from __future__ import annotations

import json
from pathlib import Path

from gpuvet.captures import ascend_errors, kernel, miner_lost, plugin_xids, smi_text, xpu_smi_table
from gpuvet.captures.kernel import NO_BUS
from gpuvet.captures.text import clean
from tests.support.helpers import capture_findings, capture_json


def test_nvml_and_nvapi_status_names_on_a_miners_lines_are_a_card_lost(tmp_path: Path) -> None:
    log = ("[2023-02-11 03:14:07] [ERROR] [NVML] System.Exception: NVML get fan failed with status: GPUIsLost\n"
           "   at Monitor.DeviceNvidia.get_Fan() in C:\\src\\Monitor\\DeviceNvidia.cs:line 88\n"
           "[2023-02-11 03:14:07] [ERROR] [NVAPI] Clocks get failed with status: NVIDIA_DEVICE_NOT_FOUND\n")
    got = miner_lost.parse(clean(log).lines)
    assert [(e.kind, e.module, e.count) for e in got.events] == [("gpu_lost", NO_BUS, 2)]
    assert capture_findings(tmp_path, log) == {("module_fell_off_bus", NO_BUS): "critical"}
    named = miner_lost.parse(clean("12:00:01 GPU #2: nvmlDeviceGetPowerUsage: NVML_ERROR_GPU_IS_LOST\n").lines)
    assert [(e.module, e.kind) for e in named.events] == [("GPU 2", "gpu_lost")]
    for other in ("[NVML] get temp failed with status: Unknown", "[NVAPI] init failed: NVAPI_LIBRARY_NOT_FOUND",
                  "failed to get remapped rows for GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d: ERROR_GPU_IS_LOST"):
        assert not miner_lost.parse(clean(other + "\n").lines).events, other


def test_dcgm_exporters_xid_metric_in_any_label_order_with_or_without_its_value(tmp_path: Path) -> None:
    bare = ('`DCGM_FI_DEV_XID_ERRORS{err_msg="Graphics Engine Exception", err_code="13", '
            'Hostname="node7"}`\n')
    assert capture_findings(tmp_path, bare) == {("xid", NO_BUS): "warn"}
    curl = ("# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.\n"
            "# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n"
            'DCGM_FI_DEV_XID_ERRORS{Hostname="node7",err_code="31",UUID="GPU-1b2c3d4e-0000-1111-2222-333344445555",'
            'pci_bus_id="00000000:3B:00.0",gpu="1",modelName="NVIDIA A100-SXM4-80GB"} 31\n'
            'DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-9f8e7d6c-0000-1111-2222-333344445555",'
            'pci_bus_id="00000000:1A:00.0"} 0\n')
    got = plugin_xids.parse(clean(curl).lines)
    assert [(x.bus_id, x.code) for x in got.xids] == [("0000:3B:00.0", 31)]
    assert not plugin_xids.parse(clean('DCGM_FI_DEV_XID_ERRORS{gpu="0",job="dcgm"}\n').lines).xids  # no code


def test_a_cann_tracebacks_failed_hccl_call_is_the_collectives_failure(tmp_path: Path) -> None:
    log = ("        TraceBack (most recent call last):\n"
           "        Opbase fails to invoke the HcclCommInitRootInfo function of the hccl module. ret = 11, "
           "comm = 0xffff12345600.\n"
           "        Check HcclCommInitRootInfo(nRanks, &rootInfo, rank, &comm) failed\n")
    got = ascend_errors.parse(clean(log).lines)
    assert [(f.kind, f.at.source) for f in got.failures] == [("init", "HcclCommInitRootInfo")]
    assert "TCP connect" in got.failures[0].at.message
    findings = capture_findings(tmp_path, log)
    assert list(findings.values()) == ["critical"], findings
    assert not ascend_errors.parse(clean("the HcclAllReduce function of the hccl module. ret = 0\n").lines).failures


_AMD_INIT = """[    3.101] [drm] amdgpu kernel modesetting enabled.
[    3.102] [drm] amdgpu version: 19.10.9.418
[    3.103] [drm] initializing kernel modesetting (NAVI10 0x1002:0x731F 0x1002:0x0B36 0xC1).
[    3.104] [drm] register mmio base: 0xFCA00000
[    3.105] [drm] register mmio size: 524288
[    3.106] [drm] add ip block number 0 <nv_common>
[    3.107] [drm] add ip block number 1 <gmc_v10_0>
[    3.108] [drm] add ip block number 2 <navi10_ih>
[    3.109] [drm] VCN decode is enabled in VM mode
"""


def test_amdgpus_bring_up_through_drms_info_prints_is_a_clear_kernel_log(tmp_path: Path) -> None:
    got = kernel.parse(clean(_AMD_INIT).lines)
    assert {1, 2, 3, 6, 7, 8} <= got.claimed and not got.events
    out = capture_json(tmp_path, _AMD_INIT)
    assert out["findings"] == [], out["findings"]
    fault = _AMD_INIT + "[   14.2] [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx timeout, signaled seq=9\n"
    assert capture_findings(tmp_path, fault), "the fault line after the bring-up is still read"


def test_dcgmi_dmon_rows_under_its_command_line_without_the_entity_header() -> None:
    text = "$ dcgmi dmon -e 150,155 -c 2\nGPU 0    41      212.5\nGPU 1    43      230.1\n"
    got = smi_text.parse_dmon(clean(text).lines)
    assert [(x.gpu, x.values) for x in got.samples] == [(0, {"field 150": 41.0, "field 155": 212.5}),
                                                        (1, {"field 150": 43.0, "field 155": 230.1})]
    overflow = smi_text.parse_dmon(clean("dcgmi dmon -e 150,203\n\n0        N/A4112345678\n").lines)
    assert [(x.gpu, x.values) for x in overflow.samples] == [(0, {"field 150": None, "field 203": None})]
    assert any("run together" in n for n in overflow.notes)


def test_xpu_smis_table_rows_under_the_bare_command_list_the_devices(tmp_path: Path) -> None:
    text = ("$ xpu-smi\n"
            "|   0  Intel(R) Data Center GPU  Off  | 0000:29:00.0  Off  |  Enabled |\n"
            "|   1  Intel(R) Data Center GPU  Off  | 0000:9a:00.0  Off  |  Enabled |\n")
    got = xpu_smi_table.parse(clean(text).lines)
    assert [(m.label, m.bus_id) for m in got.modules] == [("GPU 0", "0000:29:00.0"), ("GPU 1", "0000:9A:00.0")]
    assert not xpu_smi_table.parse(clean("$ xpu-smi discovery\n| 0 | Device Name: x |\n").lines).modules
    out = capture_json(tmp_path, text)
    assert out["findings"] == [], json.dumps(out["findings"])[:300]
