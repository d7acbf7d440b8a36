# ruff: noqa: E501, E741, C901  (the inputs are literal tool output; classify is one decision table)
"""A blind round of awkward inputs for gpuvet's file readers (issue 41).

Written from the real formats and the docs (README.md, docs/*.md, --help) only: the readers'
code and the existing hostile tests were not read. Every input is generated at run time into a
temporary folder; each case says BEFORE it runs what a correct tool should do:

- ``result``: reads it (exit 0 or 1), with the module / sample counts the script wrote;
- ``note``: reads it and says something specific (any of a list of loose words);
- ``refuse``: exit 2 with a one-paragraph message (any of a list of loose words).

Each case runs as a user would (``gpuvet doctor|inventory|topo --from F --json``, ``watch
--replay F --no-log --json``, ``fleet merge``, ``spec check``) in a subprocess with a 30 s
timeout, under ``/usr/bin/time -v`` for its peak memory, and is classified as ``traceback``,
``timeout``, ``memory``, ``data loss``, ``silent``, ``wrong claim`` or ``clean``.

    python benchmarks/hostile_round.py [--only NAME] [--list] [--json-out FILE] [--keep DIR]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GPUVET = str(ROOT / ".venv" / "bin" / "gpuvet")
TIMEOUT_S = 30
MEMORY_MIB = 1024

# ---------------------------------------------------------------------------------------------
# Base texts in the real formats
# ---------------------------------------------------------------------------------------------

H100 = "NVIDIA H100 80GB HBM3"


def bus(i: int, short: bool = False) -> str:
    """A bus id per module; past 256 the domain changes so that 5,000 stay distinct."""
    if i < 8:
        dom, b = 0, 0x18 + i * 0x11
    else:
        dom, b = 1 + i // 256, i % 256
    if short:
        return f"{b:02x}:00.0"
    return f"{dom:08X}:{b:02X}:00.0"


def uuid(i: int, salt: str = "a") -> str:
    h = f"{i:08x}"
    return f"GPU-{h}-{salt * 4}-{salt * 4}-{salt * 4}-{i:012x}"


def smi_q_gpu(i: int, name: str = H100, temp: str = "33 C", power_draw: str = "70.11 W",
              limit: str = "700.00 W", mem: str = "81559 MiB", gen: str = "5", width: str = "16x",
              salt: str = "a", busid: str | None = None, extra: str = "") -> str:
    b = busid or bus(i)
    return f"""GPU {b}
    Product Name                          : {name}
    Product Brand                         : NVIDIA
    Product Architecture                  : Hopper
    Persistence Mode                      : Enabled
    Serial Number                         : 16529220{i:05d}
    GPU UUID                              : {uuid(i, salt)}
    Minor Number                          : {i}
    VBIOS Version                         : 96.00.74.00.0D
    PCI
        Bus                               : 0x{b.split(':')[1]}
        Device                            : 0x00
        Domain                            : 0x{b.split(':')[0][-4:]}
        Device Id                         : 0x233010DE
        Bus Id                            : {b}
        GPU Link Info
            PCIe Generation
                Max                       : {gen}
                Current                   : {gen}
            Link Width
                Max                       : 16x
                Current                   : {width}
    FB Memory Usage
        Total                             : {mem}
        Reserved                          : 328 MiB
        Used                              : 0 MiB
        Free                              : 81230 MiB
    Ecc Mode
        Current                           : Enabled
        Pending                           : Enabled
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 0
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 0
        Pending                           : No
        Remapping Failure Occurred        : No
    Temperature
        GPU Current Temp                  : {temp}
        GPU Shutdown Temp                 : 92 C
        GPU Slowdown Temp                 : 89 C
        GPU Max Operating Temp            : 87 C
    GPU Power Readings
        Power Draw                        : {power_draw}
        Current Power Limit               : {limit}
        Default Power Limit               : 700.00 W
        Min Power Limit                   : 200.00 W
        Max Power Limit                   : 700.00 W
    Clocks
        Graphics                          : 1980 MHz
        SM                                : 1980 MHz
        Memory                            : 2619 MHz
    Max Clocks
        Graphics                          : 1980 MHz
        SM                                : 1980 MHz
        Memory                            : 2619 MHz
    Clocks Event Reasons
        Idle                              : Not Active
        Applications Clocks Setting       : Not Active
        SW Power Cap                      : Not Active
        HW Slowdown                       : Not Active
            HW Thermal Slowdown           : Not Active
            HW Power Brake Slowdown       : Not Active
        Sync Boost                        : Not Active
        SW Thermal Slowdown               : Not Active
{extra}    Processes                             : None
"""


def smi_q(n: int = 8, ts: str = "Mon Jan 15 10:00:00 2024", salt: str = "a", **kw) -> str:
    head = f"""
==============NVSMI LOG==============

Timestamp                                 : {ts}
Driver Version                            : 535.129.03
CUDA Version                              : 12.2

Attached GPUs                             : {n}
"""
    return head + "".join(smi_q_gpu(i, salt=salt, **kw) + "\n" for i in range(n))


def smi_x(n: int = 8, gpus: list[str] | None = None, doctype: bool = True) -> str:
    out = ['<?xml version="1.0" ?>']
    if doctype:
        out.append('<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">')
    out.append("<nvidia_smi_log>\n\t<timestamp>Mon Jan 15 10:00:00 2024</timestamp>\n"
               "\t<driver_version>535.129.03</driver_version>\n\t<cuda_version>12.2</cuda_version>\n"
               f"\t<attached_gpus>{n}</attached_gpus>")
    for i in range(n):
        out.append(gpus[i] if gpus else smi_x_gpu(i))
    out.append("</nvidia_smi_log>\n")
    return "\n".join(out)


def smi_x_gpu(i: int, u: str | None = None, total: str = "81559 MiB") -> str:
    b = bus(i)
    return f"""\t<gpu id="{b}">
\t\t<product_name>{H100}</product_name>
\t\t<uuid>{u or uuid(i)}</uuid>
\t\t<pci>
\t\t\t<pci_bus_id>{b}</pci_bus_id>
\t\t\t<pci_gpu_link_info>
\t\t\t\t<pcie_gen><max_link_gen>5</max_link_gen><current_link_gen>5</current_link_gen></pcie_gen>
\t\t\t\t<link_widths><max_link_width>16x</max_link_width><current_link_width>16x</current_link_width></link_widths>
\t\t\t</pci_gpu_link_info>
\t\t</pci>
\t\t<fb_memory_usage><total>{total}</total><used>0 MiB</used><free>81230 MiB</free></fb_memory_usage>
\t\t<ecc_mode><current_ecc>Enabled</current_ecc><pending_ecc>Enabled</pending_ecc></ecc_mode>
\t\t<temperature><gpu_temp>33 C</gpu_temp></temperature>
\t</gpu>"""


def topo_m(n: int = 8, cell: Callable[[int, int], str] | None = None,
           header_names: list[str] | None = None, rows: list[int] | None = None) -> str:
    cell = cell or (lambda i, j: "NV18")
    names = header_names or [f"GPU{i}" for i in range(n)]
    lines = ["\t" + "\t".join(names) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"]
    for i in (rows if rows is not None else range(n)):
        cells = [" X " if i == j else cell(i, j) for j in range(n)]
        cpus = "0-55,112-167" if i < n / 2 else "56-111,168-223"
        lines.append(f"GPU{i}\t" + "\t".join(cells) + f"\t{cpus}\t{0 if i < n / 2 else 1}\t\tN/A")
    lines += ["", "Legend:", "", "  X    = Self",
              "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)",
              "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node",
              "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)",
              "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)",
              "  PIX  = Connection traversing at most a single PCIe bridge",
              "  NV#  = Connection traversing a bonded set of # NVLinks", ""]
    return "\n".join(lines)


def nvlink_s(n: int = 8, links: int = 18, state: Callable[[int, int], str] | None = None) -> str:
    state = state or (lambda g, l: "26.562 GB/s")
    out = []
    for g in range(n):
        out.append(f"GPU {g}: {H100} (UUID: {uuid(g)})")
        out += [f"\t Link {l}: {state(g, l)}" for l in range(links)]
    return "\n".join(out) + "\n"


def lspci(n: int = 8, sta: Callable[[int], str] | None = None) -> str:
    sta = sta or (lambda i: "Speed 32GT/s, Width x16")
    out = []
    for i in range(n):
        b = bus(i).split(":", 1)[1].lower()
        out.append(f"""{b} 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)
	Subsystem: NVIDIA Corporation Device 16c1
	Control: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr+ Stepping- SERR+ FastB2B- DisINTx+
	Status: Cap+ 66MHz- UDF- FastB2B- ParErr- DEVSEL=fast >TAbort- <TAbort- <MAbort- >SERR- <PERR- INTx-
	Latency: 0
	Interrupt: pin A routed to IRQ 18
	NUMA node: 0
	Region 0: Memory at a6000000 (32-bit, non-prefetchable) [size=16M]
	Capabilities: [60] Power Management version 3
		Flags: PMEClk- DSI- D1- D2- AuxCurrent=0mA PME(D0-,D1-,D2-,D3hot-,D3cold-)
	Capabilities: [78] Express (v2) Endpoint, MSI 00
		DevCap:	MaxPayload 256 bytes, PhantFunc 0, Latency L0s unlimited, L1 <64us
		LnkCap:	Port #0, Speed 32GT/s, Width x16, ASPM not supported
			ClockPM+ Surprise- LLActRep- BwNot- ASPMOptComp+
		LnkCtl:	ASPM Disabled; RCB 64 bytes, Disabled- CommClk+
		LnkSta:	{sta(i)}
			TrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-
	Capabilities: [100 v1] Advanced Error Reporting
		UESta:	DLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP- ECRC- UnsupReq- ACSViol-
		CESta:	RxErr- BadTLP- BadDLLP- Rollover- Timeout- AdvNonFatalErr-
	Kernel driver in use: nvidia
	Kernel modules: nvidiafb, nouveau, nvidia_drm, nvidia
""")
    return "\n".join(out)


def nccl(op: str = "all_reduce_perf", wrong: Callable[[int], str] | None = None,
         row: Callable[[int, int], list[str]] | None = None, host: str = "node01",
         tail: bool = True, version: str | None = None, n: int = 8) -> str:
    wrong = wrong or (lambda k: "0")
    out = []
    if version:
        out.append(version)
    out += ["# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
            "#", "# Using devices"]
    for r in range(n):
        out.append(f"#  Rank  {r} Group  0 Pid  4242{r} on {host:>10} device  {r} [0x{0x18 + r * 0x11:02x}] {H100}")
    out += ["#",
            "#                                                              out-of-place                       in-place          ",
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       "]
    size = 8
    k = 0
    while size <= 8589934592:
        t = 30.0 + size / 300e3
        algbw = size / t / 1e3
        busbw = algbw * 2 * 7 / 8
        cells = row(k, size) if row else [f"{t:.2f}", f"{algbw:.2f}", f"{busbw:.2f}"]
        out.append(f"{size:>12} {max(size // 4, 1):>13}     float     sum      -1 {cells[0]:>8} {cells[1]:>7} {cells[2]:>7} {wrong(k):>6} "
                   f"{cells[0]:>8} {cells[1]:>7} {cells[2]:>7} {wrong(k):>6}")
        size *= 2
        k += 1
    if tail:
        out += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 145.221 ", "#", ""]
    return "\n".join(out)


def nvbandwidth(n: int = 8, cell: Callable[[int, int], str] | None = None, waive: bool = False) -> str:
    cell = cell or (lambda i, j: "389.12")
    out = ["nvbandwidth Version: v0.4", "Built from Git version: ", "",
           "NOTE: This tool reports current measured bandwidth on your system.",
           "Additional system-specific tuning may be required to achieve maximal peak bandwidth.", "",
           "CUDA Runtime Version: 12040", "CUDA Driver Version: 12040", "Driver Version: 550.54.15", ""]
    out += [f"Device {i}: {H100}" for i in range(n)]
    out.append("")
    if waive:
        out += ["Waiving device_to_device_memcpy_read_ce.", ""]
        return "\n".join(out) + "\n"
    out += ["Running device_to_device_memcpy_read_ce.", "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)",
            "          " + "".join(f"{j:>10}" for j in range(n))]
    tot = 0.0
    for i in range(n):
        out.append(f"{i:>6}    " + "".join(f"{('N/A' if i == j else cell(i, j)):>10}" for j in range(n)))
    out += ["", f"SUM device_to_device_memcpy_read_ce {tot:.2f}", ""]
    return "\n".join(out) + "\n"


def dcgmi_text(pcie: str = "Pass - All") -> str:
    return f"""Successfully ran diagnostic for group.
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Metadata  ----------+------------------------------------------------|
| DCGM Version              | 3.3.5                                          |
| Driver Version Detected   | 535.129.03                                     |
| GPU Device IDs Detected   | 2330,2330,2330,2330,2330,2330,2330,2330        |
|-----  Deployment  --------+------------------------------------------------|
| Denylist                  | Pass                                           |
| NVML Library              | Pass                                           |
| CUDA Main Library         | Pass                                           |
| Permissions and OS Blocks | Pass                                           |
| Persistence Mode          | Pass                                           |
| Environment Variables     | Pass                                           |
| Page Retirement/Row Remap | Pass                                           |
| Graphics Processes        | Pass                                           |
| Inforom                   | Pass                                           |
+-----  Integration  -------+------------------------------------------------+
| PCIe                      | {pcie:<46} |
+---------------------------+------------------------------------------------+
"""


def dcgmi_json(status: str = "Pass") -> dict:
    return {"DCGM GPU Diagnostic": {"test_categories": [
        {"category": "Deployment", "tests": [{"name": "Denylist", "results": [{"status": "Pass"}]},
                                              {"name": "NVML Library", "results": [{"status": "Pass"}]}]},
        {"category": "Integration", "tests": [{"name": "PCIe", "results": [
            {"gpu_id": str(g), "status": status, **({"warnings": [{"warning": "GPU 0 PCIe bandwidth below threshold", "error_id": 12}]} if status == "Fail" and g == 0 else {})}
            for g in range(8)]}]}], "version": "3.3.5"}}


def xid_lines(xid: int = 79, b: str = "0000:2a:00", style: str = "T") -> str:
    msg = {79: "GPU has fallen off the bus.", 48: "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0."}.get(xid, "Graphics Exception")
    pre = {"T": "[Mon Jan 15 10:00:00 2024] ", "raw": "[ 1234.567890] ",
           "iso": "2024-01-15T10:00:00+0530 node01 kernel: ", "1970": "[Thu Jan  1 00:00:00 1970] ",
           "9999": "[Fri Dec 31 23:59:59 9999] "}[style]
    return (f"{pre}NVRM: GPU at PCI:{b}.0: {uuid(1)}\n"
            f"{pre}NVRM: GPU Board Serial Number: 1652922000001\n"
            f"{pre}NVRM: Xid (PCI:{b}): {xid}, pid=1234, name=python, {msg}\n")


AMD_RING = ("[Mon Jan 15 10:00:00 2024] amdgpu 0000:28:00.0: amdgpu: ring gfx_0.0.0 timeout, signaled seq=1234, emitted seq=1236\n"
            "[Mon Jan 15 10:00:00 2024] amdgpu 0000:28:00.0: amdgpu:  Process information: process python pid 4242 thread python pid 4242\n"
            "[Mon Jan 15 10:00:01 2024] amdgpu 0000:28:00.0: amdgpu: GPU reset begin!\n")


def amd_bdf(i: int) -> str:
    if i < 8:
        return f"0000:{0x0c + i * 0x10:02x}:00.0"
    return f"{i // 256:04x}:{i % 256:02x}:00.0"


def amdsmi_text(n: int = 8, gpus: list[int] | None = None) -> str:
    out = []
    for i in (gpus if gpus is not None else range(n)):
        out.append(f"""GPU: {i}
    ASIC:
        MARKET_NAME: AMD Instinct MI300X OAM
        VENDOR_ID: 0x1002
        VENDOR_NAME: Advanced Micro Devices Inc. [AMD/ATI]
        DEVICE_ID: 0x74a1
        REV_ID: 0x00
        ASIC_SERIAL: 0x{0xA0B1C2D3E4F50000 + i:X}
    BUS:
        BDF: {amd_bdf(i)}
        MAX_PCIE_WIDTH: 16
        MAX_PCIE_SPEED: 32 GT/s
        PCIE_INTERFACE_VERSION: Gen 5
        SLOT_TYPE: OAM
    DRIVER:
        NAME: amdgpu
        VERSION: 6.7.0
    VRAM:
        TYPE: HBM
        VENDOR: N/A
        SIZE: 196592 MB
""")
    return "\n".join(out)


def amdsmi_json(n: int = 8, new: bool = False) -> list:
    return [{"gpu": i,
             "asic": {"market_name": "AMD Instinct MI300X OAM", "vendor_id": "0x1002", "device_id": "0x74a1",
                      "asic_serial": f"0x{0xA0B1C2D3E4F50000 + i:X}"},
             "bus": {"bdf": amd_bdf(i), "max_pcie_width": 16,
                     "max_pcie_speed": {"value": 32, "unit": "GT/s"} if new else "32 GT/s",
                     "pcie_interface_version": "Gen 5", "slot_type": "OAM"},
             "driver": {"name": "amdgpu", "version": "6.7.0"},
             "vram": {"type": "HBM", "vendor": "N/A",
                      "size": {"value": 196592, "unit": "MB"} if new else "196592 MB"}}
            for i in range(n)]


def rocmsmi_a(n: int = 8) -> str:
    out = ["", "", "============================ ROCm System Management Interface ============================",
           "========================================== ID ==========================================="]
    for i in range(n):
        out += [f"GPU[{i}]\t\t: Device Name: \t\tAMD Instinct MI300X OAM", f"GPU[{i}]\t\t: Device ID: \t\t0x74a1",
                f"GPU[{i}]\t\t: Unique ID: \t\t0x{0xA0B1C2D3E4F50000 + i:x}"]
    out.append("================================== Product Info ======================================")
    for i in range(n):
        out += [f"GPU[{i}]\t\t: Card Series: \t\tAMD Instinct MI300X OAM", f"GPU[{i}]\t\t: Card Model: \t\t0x74a1",
                f"GPU[{i}]\t\t: Card Vendor: \t\tAdvanced Micro Devices, Inc. [AMD/ATI]"]
    out.append("========================================== Bus ==========================================")
    for i in range(n):
        out.append(f"GPU[{i}]\t\t: PCI Bus: {amd_bdf(i).upper()}")
    out.append("=================================== Memory Usage (Bytes) ===================================")
    for i in range(n):
        out += [f"GPU[{i}]\t\t: VRAM Total Memory (B): 206141652992", f"GPU[{i}]\t\t: VRAM Total Used Memory (B): 293601280"]
    out += ["==========================================================================================",
            "================================== End of ROCm SMI Log ===================================", ""]
    return "\n".join(out)


def rocmsmi_json(n: int = 8) -> dict:
    d = {f"card{i}": {"Device Name": "AMD Instinct MI300X OAM", "Device ID": "0x74a1",
                      "Card Series": "AMD Instinct MI300X OAM", "Card Vendor": "Advanced Micro Devices, Inc. [AMD/ATI]",
                      "PCI Bus": amd_bdf(i).upper(), "VRAM Total Memory (B)": "206141652992",
                      "VRAM Total Used Memory (B)": "293601280"} for i in range(n)}
    d["system"] = {"Driver version": "6.7.0"}
    return d


def rocmsmi_csv(n: int = 8) -> str:
    out = ["device,Device Name,Card Series,Card Vendor,PCI Bus,VRAM Total Memory (B),VRAM Total Used Memory (B)"]
    out += [f"card{i},AMD Instinct MI300X OAM,AMD Instinct MI300X OAM,\"Advanced Micro Devices, Inc. [AMD/ATI]\",{amd_bdf(i).upper()},206141652992,293601280" for i in range(n)]
    return "\n".join(out) + "\n"


def rocmsmi_concise(n: int = 8) -> str:
    out = ["", "", "========================================== ROCm System Management Interface ==========================================",
           "==================================================== Concise Info ====================================================",
           "Device  Node  IDs              Temp        Power     Partitions          SCLK    MCLK    Fan  Perf    PwrCap  VRAM%  GPU%  ",
           "              (DID,     GUID)  (Junction)  (Socket)  (Mem, Compute, ID)                                                 ",
           "======================================================================================================================"]
    out += [f"{i:<8}{i + 2:<6}0x74a1,   {28851 + i:<6} 35.0°C      131.0W    NPS1, SPX, 0        131Mhz  900Mhz  0%   auto    750.0W  0%     0%    " for i in range(n)]
    out += ["======================================================================================================================",
            "================================================== End of ROCm SMI Log ===============================================", ""]
    return "\n".join(out)


def npusmi(n: int = 8, busf: Callable[[int], str] | None = None) -> str:
    busf = busf or (lambda i: f"0000:{0xC1 + i:02X}:00.0")
    out = ["+------------------------------------------------------------------------------------------------+",
           "| npu-smi 23.0.rc2                 Version: 23.0.rc2                                             |",
           "+---------------------------+---------------+----------------------------------------------------+",
           "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|",
           "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |",
           "+===========================+===============+====================================================+"]
    for i in range(n):
        out += [f"| {i:<5} 910B3               | OK            | 93.5        40                0    / 0             |",
                f"| 0                         | {busf(i):<13} | 0           0    / 0          3161 / 65536         |",
                "+===========================+===============+====================================================+"]
    return "\n".join(out) + "\n"


def rbt(n: int = 8) -> str:
    out = ["", "    RocmBandwidthTest Version: 2.6.0", "",
           "    Launch Command is: rocm-bandwidth-test (rocm_bandwidth -a + rocm_bandwidth -A)", "", "",
           "    Device: 0,  AMD EPYC 7763 64-Core Processor", "    Device: 1,  AMD EPYC 7763 64-Core Processor"]
    out += [f"    Device: {i + 2},  AMD Instinct MI210,  GPU-{0x06c9d0f0e1f2a300 + i:016x},  {0x05 + i * 0x10:02x}:0.0" for i in range(n)]
    out += ["", "    Inter-Device Access", "", "    D/D       " + "".join(f"{j:<10}" for j in range(n + 2))]
    for i in range(n + 2):
        out.append(f"    {i:<10}" + "".join(f"{1:<10}" for _ in range(n + 2)))
    return "\n".join(out) + "\n"


def transferbench(n: int = 8, cell: Callable[[int, int], str] | None = None, extra: str = "") -> str:
    cell = cell or (lambda i, j: "55.47")
    out = ["TransferBench v1.50", "===============================================================",
           "[Common]", "ALWAYS_VALIDATE      =            0 : Validating after all iterations", "",
           "Bytes Per Direction 268435456",
           "Unidirectional copy peak bandwidth GB/s [Local read / Remote write] (GPU-Executor: GFX)",
           " SRC+EXE\\DST    CPU 00    CPU 01" + "".join(f"    GPU {j:02d}" for j in range(n))]
    for c in range(2):
        out.append(f"  CPU {c:02d}  ->     40.20     38.10" + "".join("     27.09" for _ in range(n)))
    for i in range(n):
        out.append(f"  GPU {i:02d}  ->     27.10     27.05" + "".join(f"{('N/A' if i == j else cell(i, j)):>10}" for j in range(n)))
    out.append(extra)
    return "\n".join(out) + "\n"


def hccl(ret: bool = False) -> str:
    out = ["mpirun -n 8 ./bin/all_reduce_test -b 8M -e 1G -f 2 -d fp32 -o sum -p 8",
           "the minbytes is 8388608, maxbytes is 1073741824, iters is 20, warmup_iters is 5",
           "data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:"]
    size = 8388608
    while size <= 1073741824:
        t = 100 + size / 80e3
        out.append(f"{size:<18}| {t:<15.2f}| {size / t / 1e3:<21.2f}| success")
        size *= 2
    if ret:
        out.append("hccl interface return err ./common/src/hccl_test_common.cc:538, retcode: 7 ")
    return "\n".join(out) + "\n"


def bug_report(dmesg: str, filler_lines: int = 0) -> str:
    out = ["____________________________________________", "",
           "Start of NVIDIA bug report log file.  Please include this file, along",
           "with a detailed description of your problem, when reporting a graphics",
           "driver bug via the NVIDIA Linux forum (see forums.developer.nvidia.com)",
           "or by sending email to 'linux-bugs@nvidia.com'.", "",
           "nvidia-bug-report.sh Version: 33445566", "", "Date: Mon Jan 15 10:00:00 UTC 2024",
           "uname: Linux node01 5.15.0-91-generic #101-Ubuntu SMP x86_64 x86_64 x86_64 GNU/Linux", "",
           "____________________________________________", "", "/usr/bin/nvidia-smi --query", "", smi_q(8),
           "____________________________________________", "", "/usr/bin/nvidia-smi topo -m", "", topo_m(8),
           "____________________________________________", "", "Skipping dmesg output (ran as root).", "",
           "dmesg:", "", dmesg, "____________________________________________", "", "/sbin/lspci -d \"10de:*\" -vvv",
           "", lspci(8), "____________________________________________", ""]
    text = "\n".join(out)
    if filler_lines:
        filler = "".join(f"kernel: ata{k % 8}: SATA link up 6.0 Gbps (SStatus 133 SControl 300) filler line {k}\n"
                         for k in range(filler_lines))
        text = text + "\n/var/log/messages:\n" + filler
    return text


# --- telemetry ---------------------------------------------------------------------------------

QUERY_HEAD = "timestamp, index, name, pci.bus_id, temperature.gpu, power.draw [W], utilization.gpu [%], clocks.sm [MHz], clocks.mem [MHz]"


def query_rows(n: int = 8, rows: int = 60, start: float = 1705312800.0, step: float = 60.0,
               temp: Callable[[int, int], str] | None = None, idx: Callable[[int], str] | None = None,
               tsfmt: Callable[[float], str] | None = None) -> list[str]:
    temp = temp or (lambda g, k: str(40 + g + (k % 5)))
    idx = idx or (lambda g: str(g))
    tsfmt = tsfmt or (lambda t: time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(t)) + ".000")
    out = []
    for k in range(rows):
        ts = tsfmt(start + k * step)
        for g in range(n):
            out.append(f"{ts}, {idx(g)}, {H100}, {bus(g)}, {temp(g, k)}, {300 + g}.00 W, 90 %, 1980 MHz, 2619 MHz")
    return out


def query_csv(n: int = 8, rows: int = 60, header: bool = True, **kw) -> str:
    return "\n".join(([QUERY_HEAD] if header else []) + query_rows(n, rows, **kw)) + "\n"


def smi_l(tables: int = 3, n: int = 8) -> str:
    out = []
    for t in range(tables):
        ts = time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(1705312800 + 60 * t))
        out += [f"{ts}       ",
                "+---------------------------------------------------------------------------------------+",
                "| NVIDIA-SMI 535.129.03             Driver Version: 535.129.03   CUDA Version: 12.2     |",
                "|-----------------------------------------+----------------------+----------------------+",
                "| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |",
                "| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |",
                "|                                         |                      |               MIG M. |",
                "|=========================================+======================+======================|"]
        for g in range(n):
            out += [f"|   {g}  NVIDIA H100 80GB HBM3          On  | {bus(g)} Off |                    0 |",
                    f"| N/A   {40 + g}C    P0             {300 + g}W / 700W |  12000MiB / 81559MiB |     90%      Default |",
                    "|                                         |                      |             Disabled |",
                    "+-----------------------------------------+----------------------+----------------------+"]
        out += ["", "+---------------------------------------------------------------------------------------+",
                "| Processes:                                                                            |",
                "|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |",
                "|        ID   ID                                                             Usage      |",
                "|=======================================================================================|",
                "|  No running processes found                                                           |",
                "+---------------------------------------------------------------------------------------+"]
    return "\n".join(out) + "\n"


def dmon(n: int = 8, rows: int = 30, dt: Callable[[int], bool] | None = None) -> str:
    dt = dt or (lambda k: True)
    out = ["#Date       Time        gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk ",
           "#YYYYMMDD   HH:MM:SS    Idx      W      C      C      %      %      %      %      %      %    MHz    MHz "]
    for k in range(rows):
        t = time.gmtime(1705312800 + k)
        for g in range(n):
            pre = f" {time.strftime('%Y%m%d   %H:%M:%S', t)} " if dt(k) else ""
            out.append(f"{pre}{g:>6}    {300 + g:>3}     {40 + g:>2}     45     90     40      0      0      0      0   2619   1980 ")
    return "\n".join(out) + "\n"


def pmon(n: int = 8, rows: int = 30) -> str:
    out = ["#Date       Time        gpu         pid  type    sm    mem    enc    dec    jpg    ofa    command ",
           "#YYYYMMDD   HH:MM:SS    Idx           #   C/G     %      %      %      %      %      %    name "]
    for k in range(rows):
        t = time.strftime("%Y%m%d   %H:%M:%S", time.gmtime(1705312800 + k))
        for g in range(n):
            out.append(f" {t}    {g:>3}     {42420 + g:>7}     C    95     40      -      -      -      -    python         ")
    return "\n".join(out) + "\n"


def prom_text(n: int = 8, rows: int = 30, value: Callable[[int, int], str] | None = None, host: str = "node01") -> str:
    value = value or (lambda g, k: str(40 + g))
    out = []
    for metric, f in (("DCGM_FI_DEV_GPU_TEMP", value), ("DCGM_FI_DEV_POWER_USAGE", lambda g, k: f"{300 + g}.5")):
        out += [f"# HELP {metric} x.", f"# TYPE {metric} gauge"]
        for g in range(n):
            for k in range(rows):
                out.append(f'{metric}{{gpu="{g}",UUID="{uuid(g)}",device="nvidia{g}",modelName="{H100}",Hostname="{host}"}} '
                           f"{f(g, k)} {(1705312800 + 60 * k) * 1000}")
    return "\n".join(out) + "\n"


def prom_json(n: int = 8, rows: int = 30) -> dict:
    res = []
    for metric in ("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE"):
        for g in range(n):
            res.append({"metric": {"__name__": metric, "gpu": str(g), "Hostname": "node01", "UUID": uuid(g), "modelName": H100},
                        "values": [[1705312800 + 60 * k, str(40 + g if "TEMP" in metric else 300 + g)] for k in range(rows)]})
    return {"status": "success", "data": {"resultType": "matrix", "result": res}}


# --- spec ----------------------------------------------------------------------------------------

SPEC = """name: my-node
base: hgx-h200-8
description: a plain overlay
"""

SPEC_FULL = """name: my-node
description: free text
modules:
  count: 8
  model: H200-SXM
  prefix: gpu
fabric:
  kind: switched
  switch: nvswitch0
  link: {kind: nvlink, width: 18, lane_gbps: 25}
pcie:
  gen: 5
  switches_per_socket: 2
  uplink_width: 16
  nics_per_switch: 2
host:
  sockets: 2
  cores_per_socket: 56
  memory_bytes: 2199023255552
"""

# ---------------------------------------------------------------------------------------------
# Encodings and damage
# ---------------------------------------------------------------------------------------------


def crlf(t: str) -> str:
    return t.replace("\n", "\r\n")


def cr(t: str) -> str:
    return t.replace("\n", "\r")


def mixed(t: str) -> str:
    lines = t.split("\n")
    ends = ["\n", "\r\n", "\r\n", "\n"]
    return "".join(l + ends[k % 4] for k, l in enumerate(lines))


def bom(t: str) -> bytes:
    return b"\xef\xbb\xbf" + t.encode()


def u16(t: str) -> bytes:
    return t.encode("utf-16")  # with BOM, little-endian here: what PowerShell's `>` writes


def gz(b: str | bytes) -> bytes:
    return gzip.compress(b.encode() if isinstance(b, str) else b, mtime=0)


# ---------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    kind: str                      # doctor | inventory | topo | watch | backtest | fleet | spec
    build: Callable[[Path], list]  # writes the inputs, returns the command's arguments after the verb
    expect: str                    # result | note | refuse
    words: tuple = ()              # for note/refuse: any of these (case-insensitive) in the output
    modules: int | None = None     # modules the input holds (inventory/topo/watch counts)
    samples: int | None = None     # samples the input holds (watch)
    causes: set | None = None      # doctor: causes a correct tool may name (None: any)
    need: tuple = ()               # doctor: any of these causes must be named (else data loss)
    refuse_ok: bool = False        # a refusal carrying one of `words` is also correct
    alt_ok: bool = False           # a correct full read (the counts) is also correct for refuse
    why: str = ""
    extra: tuple = ()              # flags after the inputs (e.g. doctor --all)


CASES: list[Case] = []


def case(*a, **k) -> None:
    CASES.append(Case(*a, **k))


def w(p: Path, data: str | bytes) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        p.write_bytes(data.encode())
    else:
        p.write_bytes(data)
    return p


def one(fname: str, data: Callable[[], str | bytes], flag: str = "--from"):
    def build(d: Path) -> list:
        return [flag, str(w(d / fname, data()))] if flag else [str(w(d / fname, data()))]
    return build


NONE: set = set()
DUP_WORDS = ("duplicate", "twice", "same", "again", "repeated", "more than once")
CUT_WORDS = ("cut", "truncat", "incomplete", "ends", "stops", "closed", "short")
ODD_WORDS = ("not physical", "left out", "ignored", "outside", "dropped", "not a finite", "nan", "invalid", "not a number")
U16_WORDS = ("utf-16", "utf16", "encoding", "utf-8", "binary")

# ---- nvidia-smi -q text ---------------------------------------------------------------------
case("q_plain_8", "inventory", one("smi-q.txt", lambda: smi_q(8)), "result", modules=8)
case("q_bom", "inventory", one("smi-q.txt", lambda: bom(smi_q(8))), "result", modules=8)
case("q_crlf", "inventory", one("smi-q.txt", lambda: crlf(smi_q(8))), "result", modules=8)
case("q_cr_only", "inventory", one("smi-q.txt", lambda: cr(smi_q(8))), "result", modules=8,
     why="old Mac / some serial consoles: lone CR line ends")
case("q_mixed_eol", "inventory", one("smi-q.txt", lambda: mixed(smi_q(8))), "result", modules=8)
case("q_utf16", "inventory", one("smi-q.txt", lambda: u16(smi_q(8))), "refuse", U16_WORDS, modules=8, alt_ok=True,
     why="PowerShell `nvidia-smi -q > f.txt` writes UTF-16LE with a BOM: read it, or refuse naming the encoding")
case("q_utf16_crlf_nobom", "inventory", one("smi-q.txt", lambda: crlf(smi_q(8)).encode("utf-16-le")), "refuse", U16_WORDS,
     modules=8, alt_ok=True)
case("q_truncated", "inventory", one("smi-q.txt", lambda: smi_q(8)[: len(smi_q(8)) * 9 // 16]), "note", CUT_WORDS,
     why="a copy that stopped in the 5th GPU's block")
case("q_same_gpu_twice", "inventory",
     one("smi-q.txt", lambda: smi_q(8) + smi_q_gpu(3)), "note", DUP_WORDS, modules=8,
     why="GPU 3's block pasted twice: 8 modules, not 9, and a note")
case("q_capture_twice", "inventory", one("smi-q.txt", lambda: smi_q(8) + "\n" + smi_q(8)), "note", DUP_WORDS, modules=8,
     why="the same -q capture twice in one file (a log appended twice)")
case("q_5000_modules", "inventory", one("smi-q.txt", lambda: smi_q(5000)), "note",
     ("4,096", "4096", "too many", "limit", "not kept"), refuse_ok=True,
     why="5,000 GPU blocks (~10 MB): beyond the 4,096-module bound of the other listings")
case("q_absurd_numbers", "doctor",
     one("smi-q.txt", lambda: smi_q(8, temp="99999 C", power_draw="1e308 W", mem="-5 MiB", gen="99")),
     "note", ODD_WORDS, causes=NONE, why="99999 C, 1e308 W, -5 MiB, gen 99: noted and left out, nothing claimed from them")
case("q_nan_values", "doctor", one("smi-q.txt", lambda: smi_q(8, temp="NaN C", power_draw="inf W", limit="nan W")),
     "note", ODD_WORDS, causes=NONE)
case("q_decimal_comma", "inventory", one("smi-q.txt", lambda: smi_q(8, limit="700,00 W", power_draw="70,11 W")),
     "result", modules=8, why="a localised copy: 700,00 W must not become 70000 W or 0 W")
case("q_long_name", "inventory", one("smi-q.txt", lambda: smi_q(8, name="NVIDIA H100 " + "X" * 20000)), "result", modules=8)
case("q_nonascii_name", "inventory", one("smi-q.txt", lambda: smi_q(8, name="NVIDIA H100 80GB HBM3 — ünïcødé 東京 \u202e")),
     "result", modules=8)
case("q_empty", "inventory", one("smi-q.txt", lambda: b""), "refuse", ("empty", "nothing", "no ", "0 bytes"))
case("q_whitespace_only", "inventory", one("smi-q.txt", lambda: " \n\t\n\r\n" * 100), "refuse", ("empty", "nothing", "no "))
case("q_binary_junk", "inventory", one("smi-q.txt", lambda: random.Random(1).randbytes(200_000)), "refuse",
     ("binary", "not text", "nothing"))
case("q_binary_no_nul", "inventory",
     one("smi-q.txt", lambda: bytes(b for b in random.Random(2).randbytes(300_000) if b)), "refuse",
     ("binary", "not text", "nothing", "utf-8", "decode"), why="junk with no NUL byte (a JPEG fragment, say)")
case("q_gzip", "inventory", one("smi-q.txt.gz", lambda: gz(smi_q(8))), "result", modules=8)
case("q_gzip_truncated", "inventory", one("smi-q.txt.gz", lambda: gz(smi_q(8))[: len(gz(smi_q(8))) // 2]), "note",
     CUT_WORDS + ("gzip", "compressed", "corrupt", "end of"), refuse_ok=True)
case("q_gzip_of_gzip", "inventory", one("smi-q.txt.gz.gz", lambda: gz(gz(smi_q(8)))), "refuse",
     ("gzip", "compressed", "binary", "nothing"), modules=8, alt_ok=True)
case("q_gzip_named_txt", "inventory", one("smi-q.txt", lambda: gz(smi_q(8))), "result", modules=8,
     why="recognised by content, not name")
case("q_plain_named_gz", "inventory", one("smi-q.log.gz", lambda: smi_q(8)), "result", modules=8)
case("q_gzip_empty", "inventory", one("smi-q.txt.gz", lambda: gz(b"")), "refuse", ("empty", "nothing", "no "))


def _big_gz(d: Path) -> list:
    p = d / "bomb.log.gz"
    co = gzip.GzipFile(p, "wb", compresslevel=6, mtime=0)
    chunk = (("x" * 999) + "\n").encode() * 1024   # 1 MiB of 1,000-byte lines
    for _ in range(300):                           # 300 MiB unpacked (limit 128 MiB)
        co.write(chunk)
    co.close()
    return ["--from", str(p)]


case("q_gzip_bomb_300mib", "inventory", _big_gz, "refuse", ("128 mib", "mib", "unpack", "limit", "too large"),
     why="LARGE: a ~300 KB .gz of 300 MiB of lines (limit 128 MiB unpacked)")


def _symlink(d: Path) -> list:
    t = w(d / "real" / "smi-q.txt", smi_q(8))
    (d / "link.txt").symlink_to(t)
    return ["--from", str(d / "link.txt")]


def _dangling(d: Path) -> list:
    (d / "link.txt").symlink_to(d / "nowhere.txt")
    return ["--from", str(d / "link.txt")]


def _fifo(name: str, flag: str | None = "--from"):
    def b(d: Path) -> list:
        p = d / name
        os.mkfifo(p)
        return [flag, str(p)] if flag else [str(p)]
    return b


def _folder(name: str, flag: str | None = "--from"):
    def b(d: Path) -> list:
        p = d / name
        p.mkdir()
        w(p / "inside.txt", smi_q(2))
        return [flag, str(p)] if flag else [str(p)]
    return b


case("q_symlink", "inventory", _symlink, "result", modules=8)
case("q_dangling_symlink", "inventory", _dangling, "refuse", ("not exist", "no such", "missing", "does not", "not found", "cannot"))
case("q_fifo", "doctor", _fifo("smi-q.txt"), "refuse", ("fifo", "pipe"))
case("q_folder", "doctor", _folder("smi-q.txt"), "refuse", ("folder", "directory"), why="a file name that is a folder")
case("q_dev_zero", "inventory", lambda d: ["--from", "/dev/zero"], "refuse", ("device", "not a regular"))
case("q_one_long_line", "inventory", one("smi-q.txt", lambda: "GPU 00000000:18:00.0 " + "A" * 12_000_000), "refuse",
     ("line", "long", "not output", "nothing"), refuse_ok=True, why="12 MB with no newline")
case("q_digit_run", "doctor",
     one("smi-q.txt", lambda: smi_q(8, extra="    Retired Pages\n        Pending Page Blacklist        : " + "9" * 5000 + "\n")),
     "refuse", ("digit", "1,000", "1000", "number"), refuse_ok=True)


def _per_node_q(d: Path) -> list:
    a = w(d / "node01" / "nvidia-smi-q.txt", smi_q(8, salt="a"))
    b = w(d / "node02" / "nvidia-smi-q.txt", smi_q(8, salt="b"))
    return ["--from", str(a), "--from", str(b)]


case("q_per_node_same_name", "inventory", _per_node_q, "note",
     ("two nodes", "node", "different", "same bus", "same name", "host", "combine", "twice", "uuid"), refuse_ok=True,
     why="node01/nvidia-smi-q.txt and node02/nvidia-smi-q.txt: same file name, same bus ids, other UUIDs: two machines")


def _same_file_twice(fname: str, data: Callable[[], str | bytes], kind_flag: str = "--from"):
    def b(d: Path) -> list:
        p = str(w(d / fname, data()))
        return [kind_flag, p, kind_flag, p] if kind_flag else [p, p]
    return b


case("q_same_file_twice", "inventory", _same_file_twice("smi-q.txt", lambda: smi_q(8)), "note", DUP_WORDS, modules=8,
     refuse_ok=True)
case("q_mixed_vendor_one_file", "inventory", one("node.txt", lambda: smi_q(4) + "\n" + amdsmi_text(4)), "result",
     modules=8, why="a support bundle of a node with 4 H100 and 4 MI300X pasted together")
case("q_markdown_fenced", "inventory",
     one("post.md", lambda: "Here is my output:\n\n```\n" + "\n".join("> " + l for l in smi_q(8).split("\n")) + "\n```\nthanks!\n"),
     "result", modules=8)
case("q_srun_prefix", "inventory", one("srun.txt", lambda: "".join(f"0: {l}\n" for l in smi_q(8).split("\n"))), "result", modules=8)
case("q_time_1970", "inventory", one("smi-q.txt", lambda: smi_q(8, ts="Thu Jan  1 00:00:00 1970")), "result", modules=8)
case("q_time_9999", "inventory", one("smi-q.txt", lambda: smi_q(8, ts="Fri Dec 31 23:59:59 9999")), "result", modules=8)
case("q_tab_separated_keys", "inventory", one("smi-q.txt", lambda: smi_q(8).replace("    ", "\t")), "result", modules=8,
     why="an editor converted the indentation to tabs")

# ---- nvidia-smi -q -x ---------------------------------------------------------------------------
case("x_plain_8", "inventory", one("smi.xml", lambda: smi_x(8)), "result", modules=8)
case("x_bom_crlf", "inventory", one("smi.xml", lambda: bom(crlf(smi_x(8)))), "result", modules=8)
case("x_utf16_declared", "inventory",
     one("smi.xml", lambda: smi_x(8).replace('<?xml version="1.0" ?>', '<?xml version="1.0" encoding="UTF-16"?>').encode("utf-16")),
     "refuse", U16_WORDS, modules=8, alt_ok=True, why="XML in UTF-16 with a BOM and its declaration is well-formed XML")
case("x_gzip", "inventory", one("smi.xml.gz", lambda: gz(smi_x(8))), "result", modules=8)
case("x_billion_laughs", "inventory", one("smi.xml", lambda: (
    '<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [\n<!ENTITY a "aaaaaaaaaa">\n'
    + "".join(f'<!ENTITY {chr(98 + k)} "' + f"&{chr(97 + k)};" * 10 + '">\n' for k in range(9))
    + ']>\n<nvidia_smi_log><gpu id="00000000:18:00.0"><product_name>&j;</product_name></gpu></nvidia_smi_log>\n')),
    "refuse", ("entit",))
case("x_external_entity", "inventory", one("smi.xml", lambda: (
    '<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
    '<nvidia_smi_log><gpu id="00000000:18:00.0"><product_name>&x;</product_name></gpu></nvidia_smi_log>\n')),
    "refuse", ("entit",))
case("x_truncated", "inventory", one("smi.xml", lambda: smi_x(8)[: len(smi_x(8)) * 5 // 8]), "note", CUT_WORDS)
case("x_5000_gpus", "inventory", one("smi.xml", lambda: smi_x(5000)), "refuse", ("4,096", "4096", "too many"))
case("x_dup_uuid", "inventory",
     one("smi.xml", lambda: smi_x(8, gpus=[smi_x_gpu(i, u=uuid(0) if i == 5 else None) for i in range(8)])),
     "refuse", ("uuid", "twice", "same"))
case("x_same_gpu_twice", "inventory",
     one("smi.xml", lambda: smi_x(9, gpus=[smi_x_gpu(i) for i in range(8)] + [smi_x_gpu(2)])),
     "refuse", ("uuid", "twice", "same", "duplicate"), why="the same <gpu> element (same id, same UUID) twice")
case("x_deep_nesting", "inventory",
     one("smi.xml", lambda: "<nvidia_smi_log>" + "<a>" * 100_000 + "</a>" * 100_000 + "</nvidia_smi_log>"),
     "refuse", ("nest", "deep", "depth", "nothing", "xml"), refuse_ok=True)
case("x_nan_memory", "inventory",
     one("smi.xml", lambda: smi_x(8, gpus=[smi_x_gpu(i, total="NaN MiB" if i == 1 else "1e400 MiB" if i == 2 else "81559 MiB") for i in range(8)])),
     "note", ODD_WORDS, modules=8)
case("x_two_docs_one_file", "inventory", one("smi.xml", lambda: smi_x(8) + smi_x(8)), "note", DUP_WORDS, modules=8,
     refuse_ok=True, why="the same -q -x twice in one file: not well-formed XML as one document")
case("x_no_doctype_no_decl", "inventory", one("smi.xml", lambda: smi_x(8, doctype=False).split("\n", 1)[1]), "result", modules=8)

# ---- topo -m ----------------------------------------------------------------------------------------
case("topo_plain_8", "topo", one("topo.txt", lambda: topo_m(8)), "result", modules=8)
case("topo_crlf_bom", "topo", one("topo.txt", lambda: bom(crlf(topo_m(8)))), "result", modules=8)
case("topo_spaces_not_tabs", "topo", one("topo.txt", lambda: topo_m(8).expandtabs(8)), "result", modules=8,
     why="a copy from a web page: tabs turned into spaces")
case("topo_dup_header", "topo", one("topo.txt", lambda: topo_m(8, header_names=[f"GPU{i}" for i in range(7)] + ["GPU3"])),
     "refuse", ("twice", "duplicate", "gpu3"))
case("topo_dup_row", "topo", one("topo.txt", lambda: topo_m(8, rows=[0, 1, 2, 3, 3, 4, 5, 6, 7])), "refuse",
     ("twice", "duplicate", "row"))
case("topo_asymmetric", "topo", one("topo.txt", lambda: topo_m(8, cell=lambda i, j: "SYS" if (i, j) == (1, 0) else "NV18")),
     "refuse", ("disagree", "asymmetric", "sys"))
case("topo_nv99", "topo", one("topo.txt", lambda: topo_m(8, cell=lambda i, j: "NV99")), "refuse", ("nv99", "nv count", "36", "links"))
case("topo_rows_missing", "topo", one("topo.txt", lambda: topo_m(8, rows=[0, 1, 2, 3, 4])), "note",
     ("without a row", "left out", "no row", "cut", "missing"), why="header names 8, only 5 rows (a cut paste)")
case("topo_twice_in_file", "topo", one("topo.txt", lambda: topo_m(8) + "\n" + topo_m(8)), "note", DUP_WORDS, modules=8,
     refuse_ok=True)


case("topo_second_capture_differs", "topo",
     one("topo.txt", lambda: topo_m(8) + "\n" + topo_m(8, cell=lambda i, j: "NV12" if {i, j} == {0, 1} else "NV18")), "note",
     DUP_WORDS + ("second", "differ", "two captures", "two matrices"), modules=8, refuse_ok=True,
     why="the morning's and the evening's topo -m in one file, the second with GPU0-GPU1 at NV12: say so")


def _topo_600(d: Path) -> list:
    return ["--from", str(w(d / "topo.txt", topo_m(600, cell=lambda i, j: "NODE" if (i < 300) == (j < 300) else "SYS")))]


case("topo_600_gpus", "topo", _topo_600, "result", modules=600, why="LARGE-ish: a 600x600 matrix (~2.5 MB)")
case("topo_gzip", "topo", one("topo.txt.gz", lambda: gz(topo_m(8))), "result", modules=8)
case("topo_nonascii_header", "topo", one("topo.txt", lambda: topo_m(8).replace("CPU Affinity", "Afinidad de CPU ñ")), "result",
     modules=8)

# ---- nvlink -s ------------------------------------------------------------------------------------
case("nvlink_healthy", "doctor", one("nvlink.txt", lambda: nvlink_s(8)), "result", causes=NONE)
case("nvlink_two_inactive", "doctor",
     one("nvlink.txt", lambda: nvlink_s(8, state=lambda g, l: "<inactive>" if (g, l) in ((3, 4), (3, 5)) else "26.562 GB/s")),
     "result", need=("nvlink_down",), causes={"nvlink_down"}, why="H100 SXM: all 18 links should be up")
case("nvlink_absurd_speeds", "doctor",
     one("nvlink.txt", lambda: nvlink_s(8, state=lambda g, l: "1e308 GB/s" if l == 0 else "-5 GB/s" if l == 1 else "26.562 GB/s")),
     "note", ODD_WORDS, causes={"nvlink_down", "nvlink_errors"})
case("nvlink_gpu_twice", "doctor", one("nvlink.txt", lambda: nvlink_s(8) + nvlink_s(1)), "note", DUP_WORDS, causes=NONE)
case("nvlink_crlf_gz", "doctor", one("nvlink.txt.gz", lambda: gz(crlf(nvlink_s(8)))), "result", causes=NONE)

# ---- lspci ----------------------------------------------------------------------------------------
case("lspci_healthy", "doctor", one("lspci.txt", lambda: lspci(8)), "result", causes=NONE)
case("lspci_width_x8", "doctor",
     one("lspci.txt", lambda: lspci(8, sta=lambda i: "Speed 32GT/s, Width x8 (downgraded)" if i == 2 else "Speed 32GT/s, Width x16")),
     "result", need=("pcie_link_downgraded",), causes={"pcie_link_downgraded"})
case("lspci_bom_crlf", "doctor", one("lspci.txt", lambda: bom(crlf(lspci(8)))), "result", causes=NONE)
case("lspci_no_nvidia", "inventory", one("lspci.txt", lambda: (
    "3b:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n\tSubsystem: Mellanox Technologies Device 0070\n"
    "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported\n\t\tLnkSta:\tSpeed 32GT/s, Width x16\n")),
    "note", ("no module", "nothing", "not output", "no nvidia", "empty", "no gpu", "0 module"), modules=0, refuse_ok=True)
case("lspci_gpu_twice", "doctor", one("lspci.txt", lambda: lspci(8) + "\n" + lspci(1)), "note", DUP_WORDS, causes=NONE)

# ---- nccl-tests / rccl-tests ---------------------------------------------------------------------
case("nccl_healthy", "doctor", one("nccl.log", lambda: nccl()), "result", causes={"latency_bound_messages"})
case("nccl_wrong", "doctor", one("nccl.log", lambda: nccl(wrong=lambda k: "50" if k == 20 else "0")), "result",
     need=("data_corruption_in_transfer",), causes={"data_corruption_in_transfer", "latency_bound_messages"})
case("nccl_nan_rows", "doctor",
     one("nccl.log", lambda: nccl(row=lambda k, s: ["nan", "nan", "nan"] if k % 3 == 0 else ["-5.00", "1e308", "-1"] if k % 3 == 1 else ["30.1", "0.27", "0.47"])),
     "note", ODD_WORDS + ("negative",), causes={"latency_bound_messages"})
case("nccl_bom_crlf", "doctor", one("nccl.log", lambda: bom(crlf(nccl()))), "result", causes={"latency_bound_messages"})
case("nccl_truncated", "doctor", one("nccl.log", lambda: nccl(tail=False).rsplit("\n", 12)[0][:-7]), "note", CUT_WORDS,
     causes={"latency_bound_messages", "collective_test_failed"}, why="the job was killed mid-table")
case("nccl_huge_wrong", "doctor", one("nccl.log", lambda: nccl(wrong=lambda k: "9" * 40 if k == 5 else "0")), "result",
     need=("data_corruption_in_transfer",), causes={"data_corruption_in_transfer", "latency_bound_messages"})
case("nccl_nonascii_host", "doctor", one("nccl.log", lambda: nccl(host="nœud-東京-01")), "result", causes={"latency_bound_messages"})
case("nccl_two_runs_one_file", "doctor", one("nccl.log", lambda: nccl() + "\n" + nccl(wrong=lambda k: "3" if k == 22 else "0")),
     "result", need=("data_corruption_in_transfer",), causes={"data_corruption_in_transfer", "latency_bound_messages"},
     why="two runs appended to one log; the second counted wrong values")
case("nccl_decimal_comma", "doctor",
     one("nccl.log", lambda: nccl(row=lambda k, s: [f"{30 + s / 3e5:.2f}".replace(".", ","), "1,00", "1,75"])),
     "note", ODD_WORDS + ("comma", "not output", "skipped", "can't", "malformed"), causes={"latency_bound_messages"})
case("rccl_healthy", "doctor", one("rccl.log", lambda: nccl(version="rccl-tests: Version develop:7ac9b5e")), "result",
     causes={"latency_bound_messages"})
case("rccl_wrong_gz", "doctor", one("rccl.log.gz", lambda: gz(nccl(version="rccl-tests: Version develop:7ac9b5e", wrong=lambda k: "8" if k == 25 else "0"))),
     "result", need=("data_corruption_in_transfer",), causes={"data_corruption_in_transfer", "latency_bound_messages"})

# ---- nvbandwidth -----------------------------------------------------------------------------------
case("nvb_healthy", "doctor", one("nvb.txt", lambda: nvbandwidth(8)), "result", causes=NONE)
case("nvb_one_pair_low", "doctor", one("nvb.txt", lambda: nvbandwidth(8, cell=lambda i, j: "40.10" if (i, j) == (2, 5) else "389.12")),
     "result", need=("link_degraded",), causes={"link_degraded", "topology_misidentified"})
case("nvb_zero_pair", "doctor", one("nvb.txt", lambda: nvbandwidth(8, cell=lambda i, j: "0.00" if (i, j) == (1, 6) else "389.12")),
     "result", need=("link_down",), causes={"link_down", "link_degraded", "topology_misidentified"})
case("nvb_waived", "doctor", one("nvb.txt", lambda: nvbandwidth(8, waive=True)), "result", need=("p2p_unavailable",),
     causes={"p2p_unavailable", "p2p_disabled"})
case("nvb_nan_cells", "doctor", one("nvb.txt", lambda: nvbandwidth(8, cell=lambda i, j: "nan" if i == 3 else "1e308" if i == 4 else "389.12")),
     "note", ODD_WORDS + ("can't read", "cannot read"), causes=NONE)
case("nvb_decimal_comma", "doctor", one("nvb.txt", lambda: nvbandwidth(8, cell=lambda i, j: "389,12" if i % 2 else "388,95")),
     "note", ODD_WORDS + ("can't read", "comma", "skipped", "not output"), causes=NONE,
     why="a localised copy: 389,12 must not be read as 38912 or 389 vs 12")

# ---- dcgmi diag -----------------------------------------------------------------------------------------
case("dcgmi_pass", "doctor", one("dcgmi.txt", lambda: dcgmi_text()), "result", causes=NONE)
case("dcgmi_fail", "doctor", one("dcgmi.txt", lambda: dcgmi_text("Fail - GPU: 0")), "result", need=("dcgm_diag_failed",),
     causes={"dcgm_diag_failed"})
case("dcgmi_json_bom", "doctor", one("dcgmi.json", lambda: bom(json.dumps(dcgmi_json(), indent=2))), "result", causes=NONE)
case("dcgmi_json_fail", "doctor", one("dcgmi.json", lambda: json.dumps(dcgmi_json("Fail"))), "result", need=("dcgm_diag_failed",),
     causes={"dcgm_diag_failed"})
case("dcgmi_json_deep", "doctor", one("dcgmi.json", lambda: '{"DCGM GPU Diagnostic": ' + "[" * 200_000 + "]" * 200_000 + "}"),
     "refuse", ("json", "nest", "deep", "nothing"), refuse_ok=True)
case("dcgmi_json_wrong_types", "doctor",
     one("dcgmi.json", lambda: json.dumps({"DCGM GPU Diagnostic": {"test_categories": [{"category": 5, "tests": "PCIe"}, None, 7]}})),
     "refuse", ("nothing", "json", "not", "shape"), refuse_ok=True, causes=NONE)
case("dcgmi_json_truncated", "doctor", one("dcgmi.json", lambda: json.dumps(dcgmi_json("Fail"))[:300]), "note",
     CUT_WORDS + ("json", "nothing"), refuse_ok=True, causes={"dcgm_diag_failed"})

# ---- kernel logs -------------------------------------------------------------------------------------------
XIDC = ("xid", "module_fell_off_bus", "module_missing")
case("dmesg_xid79", "doctor", one("dmesg.txt", lambda: xid_lines(79)), "result", need=XIDC, causes=set(XIDC))
case("dmesg_xid_digit_bomb", "doctor", one("dmesg.txt", lambda: f"[ 1.0] NVRM: Xid (PCI:0000:2a:00): {'7' * 5000}, pid=1, x\n"),
     "refuse", ("digit", "1,000", "1000", "number"), refuse_ok=True)
case("dmesg_xid_crlf_bom", "doctor", one("dmesg.txt", lambda: bom(crlf(xid_lines(48)))), "result", need=("xid",),
     causes={"xid", "ecc_uncorrectable_since_boot"})
case("dmesg_journal_tz", "doctor", one("journal.txt", lambda: xid_lines(79, style="iso")), "result", need=XIDC, causes=set(XIDC),
     why="journalctl -k -o short-iso: times with a +0530 zone")
case("dmesg_1970", "doctor", one("dmesg.txt", lambda: xid_lines(79, style="1970")), "result", need=XIDC, causes=set(XIDC))
case("dmesg_9999", "doctor", one("dmesg.txt", lambda: xid_lines(79, style="9999")), "result", need=XIDC, causes=set(XIDC))
case("dmesg_raw_seconds", "doctor", one("dmesg.txt", lambda: xid_lines(48, style="raw")), "result", need=("xid",),
     causes={"xid", "ecc_uncorrectable_since_boot"})
case("dmesg_same_capture_twice", "doctor", one("dmesg.txt", lambda: xid_lines(79) + xid_lines(79)), "result", need=XIDC,
     causes=set(XIDC))
case("dmesg_amdgpu_ring", "doctor", one("dmesg.txt", lambda: AMD_RING), "result", need=("module_hung_reset",),
     causes={"module_hung_reset", "module_needs_reset"})
case("dmesg_mixed_vendors", "doctor", one("dmesg.txt", lambda: xid_lines(79) + AMD_RING), "result",
     need=("module_hung_reset",), causes=set(XIDC) | {"module_hung_reset", "module_needs_reset"},
     why="one file with an NVIDIA Xid 79 and an amdgpu ring timeout; both must be named (checked: amdgpu)")
case("dmesg_mixed_vendors_all", "doctor", one("dmesg.txt", lambda: xid_lines(79) + AMD_RING), "result",
     need=("module_hung_reset",), causes=set(XIDC) | {"module_hung_reset", "module_needs_reset"}, extra=("--all",),
     why="as dmesg_mixed_vendors, with --all (every step run)")
case("dmesg_utf16", "doctor", one("dmesg.txt", lambda: u16(xid_lines(79))), "refuse", U16_WORDS, need=(), causes=set(XIDC))
case("dmesg_gzip", "doctor", one("kern.log.gz", lambda: gz(xid_lines(79) * 50)), "result", need=XIDC, causes=set(XIDC))
case("dmesg_long_line_xid", "doctor", one("dmesg.txt", lambda: "[ 1.0] NVRM: " + "A" * 500_000 + "\n" + xid_lines(79)),
     "note", ("line", "long", "skipped"), need=(), causes=set(XIDC), refuse_ok=True)

# ---- amd-smi / rocm-smi / npu-smi / rocm-bandwidth-test --------------------------------------------------------
case("amdsmi_text_8", "inventory", one("amd.txt", lambda: amdsmi_text(8)), "result", modules=8)
case("amdsmi_json_8", "inventory", one("amd.json", lambda: json.dumps(amdsmi_json(8), indent=4)), "result", modules=8)
case("amdsmi_json_new_units", "inventory", one("amd.json", lambda: json.dumps(amdsmi_json(8, new=True))), "result", modules=8,
     why="newer amd-smi writes {value, unit} objects")
case("amdsmi_json_deep", "inventory", one("amd.json", lambda: "[" * 100_000 + "]" * 100_000), "refuse",
     ("json", "nest", "deep", "nothing"))
case("amdsmi_5000", "inventory", one("amd.txt", lambda: amdsmi_text(5000)), "note", ("4,096", "4096", "not kept"), modules=4096,
     why="LARGE: ~3 MB, 5,000 GPUs: 4,096 kept, the rest noted (docs/limits.md)")
case("amdsmi_json_nan", "inventory",
     one("amd.json", lambda: json.dumps(amdsmi_json(8)).replace('"196592 MB"', "NaN", 1)), "note", ODD_WORDS + ("json",),
     modules=8, refuse_ok=True)
case("amdsmi_gpu_twice", "inventory", one("amd.txt", lambda: amdsmi_text(8, gpus=list(range(8)) + [3])), "note", DUP_WORDS,
     modules=8)
case("amdsmi_crlf_bom", "inventory", one("amd.txt", lambda: bom(crlf(amdsmi_text(8)))), "result", modules=8)
case("rocmsmi_a_8", "inventory", one("rocm.txt", lambda: rocmsmi_a(8)), "result", modules=8)
case("rocmsmi_json_8", "inventory", one("rocm.json", lambda: json.dumps(rocmsmi_json(8))), "result", modules=8)
case("rocmsmi_csv_8", "inventory", one("rocm.csv", lambda: rocmsmi_csv(8)), "result", modules=8)
case("rocmsmi_csv_bom_crlf", "inventory", one("rocm.csv", lambda: bom(crlf(rocmsmi_csv(8)))), "result", modules=8)
case("rocmsmi_concise_table", "inventory", one("rocm.txt", lambda: rocmsmi_concise(8)), "refuse",
     ("rocm-smi -a", "accepted", "reads", "nothing", "not output"), modules=8, alt_ok=True,
     why="plain `rocm-smi` (not documented): refuse naming the accepted inputs, or read its 8 devices")
case("rocmsmi_json_card_twice", "inventory",
     one("rocm.json", lambda: json.dumps(rocmsmi_json(8))[:-1] + ', "card3": ' + json.dumps(rocmsmi_json(8)["card3"]) + "}"),
     "note", DUP_WORDS, modules=8, refuse_ok=True, why="a JSON object with the key card3 twice")
case("npusmi_8", "inventory", one("npu.txt", lambda: npusmi(8)), "result", modules=8)
case("npusmi_masked_bus", "inventory", one("npu.txt", lambda: npusmi(8, busf=lambda i: "0000:xx:00.0" if i == 4 else f"0000:{0xC1 + i:02X}:00.0")),
     "note", ("mask", "xx", "left out"))
case("npusmi_crlf", "inventory", one("npu.txt", lambda: crlf(npusmi(8))), "result", modules=8)
case("rbt_8", "inventory", one("rbt.txt", lambda: rbt(8)), "result", modules=8)
case("rbt_utf16", "inventory", one("rbt.txt", lambda: u16(rbt(8))), "refuse", U16_WORDS, modules=8, alt_ok=True)

# ---- TransferBench / HCCL -----------------------------------------------------------------------------
case("tb_healthy", "doctor", one("tb.txt", lambda: transferbench(8)), "result", causes=NONE)
case("tb_error", "doctor", one("tb.txt", lambda: transferbench(8, extra="[ERROR] HIP Error: invalid resource handle")), "result",
     need=("copy_test_failed",), causes={"copy_test_failed"})
case("tb_huge_index", "doctor", one("tb.txt", lambda: transferbench(8).replace("GPU 07  ->", "GPU 99999  ->")), "note",
     ("4,096", "4096", "not read", "index", "skipped"), causes=NONE)
case("tb_crlf_bom", "doctor", one("tb.txt", lambda: bom(crlf(transferbench(8)))), "result", causes=NONE)
case("hccl_healthy", "doctor", one("hccl.txt", lambda: hccl()), "result", causes={"latency_bound_messages"})
case("hccl_retcode", "doctor", one("hccl.txt", lambda: hccl(ret=True)), "result", need=("collective_test_failed",),
     causes={"collective_test_failed", "latency_bound_messages"})

# ---- nvidia-bug-report -------------------------------------------------------------------------------
case("bugreport_plain", "doctor", one("nvidia-bug-report.log", lambda: bug_report(xid_lines(79))), "result", need=XIDC,
     causes=set(XIDC))
case("bugreport_inventory", "inventory", one("nvidia-bug-report.log", lambda: bug_report(xid_lines(79))), "result", modules=8)
case("bugreport_gz", "doctor", one("nvidia-bug-report.log.gz", lambda: gz(bug_report(xid_lines(79)))), "result", need=XIDC,
     causes=set(XIDC))
case("bugreport_gz_truncated", "inventory",
     one("nvidia-bug-report.log.gz", lambda: gz(bug_report(xid_lines(79), filler_lines=20000))[:40000]), "note",
     CUT_WORDS + ("gzip", "corrupt", "end of"), refuse_ok=True)
case("bugreport_20mb", "inventory", one("nvidia-bug-report.log", lambda: bug_report(xid_lines(79), filler_lines=250_000)),
     "result", modules=8, why="LARGE: a ~20 MB bug report, mostly lines no parser claims")

# ---- watch --replay ---------------------------------------------------------------------------------------
R = ["--replay"]


def rep(fname: str, data: Callable[[], str | bytes], extra: tuple = ()):
    def b(d: Path) -> list:
        return R + [str(w(d / fname, data()))] + list(extra)
    return b


case("csv_plain", "watch", rep("node07.csv", lambda: query_csv(8, 60)), "result", modules=8, samples=480)
case("csv_bom_crlf", "watch", rep("node07.csv", lambda: bom(crlf(query_csv(8, 60)))), "result", modules=8, samples=480)
case("csv_cr_only", "watch", rep("node07.csv", lambda: cr(query_csv(8, 60))), "result", modules=8, samples=480)
case("csv_noheader_fields", "watch",
     rep("node07.csv", lambda: query_csv(8, 60, header=False),
         ("--fields", "timestamp,index,name,pci.bus_id,temperature.gpu,power.draw,utilization.gpu,clocks.sm,clocks.mem")),
     "result", modules=8, samples=480)
case("csv_noheader_no_fields", "watch", rep("node07.csv", lambda: query_csv(8, 60, header=False)), "refuse", ("--fields",))
case("csv_semicolon_decimal_comma", "watch",
     rep("node07.csv", lambda: query_csv(8, 20).replace(", ", ";").replace(".00 W", ",00 W")), "note",
     ("separator", "semicolon", ";", "comma", "column", "not"), refuse_ok=True, why="re-saved by a German Excel")
case("csv_absurd", "watch",
     rep("node07.csv", lambda: query_csv(8, 60, temp=lambda g, k: {0: "99999", 1: "-5", 2: "NaN", 3: "1e308"}.get(k, str(40 + g)))),
     "note", ("outside", "dropped", "not a finite"), modules=8, samples=480)
case("csv_negative_index", "watch", rep("node07.csv", lambda: query_csv(8, 10, idx=lambda g: "-1" if g == 7 else str(g))), "note",
     ("index",), modules=7)
case("csv_year_9999", "watch", rep("node07.csv", lambda: query_csv(8, 10, start=253402300000.0 - 3600)), "refuse",
     ("2100", "time", "year"))
case("csv_year_1970", "watch", rep("node07.csv", lambda: query_csv(8, 10, start=0.0)), "result", modules=8, samples=80)
case("csv_time_zones", "watch",
     rep("node07.csv", lambda: query_csv(8, 10, tsfmt=lambda t: time.strftime("%Y-%m-%dT%H:%M:%S+02:00", time.gmtime(t + 7200)))),
     "result", modules=8, samples=80, why="ISO times with an offset (a converted log)")
case("csv_dst_duplicate_hour", "watch",
     rep("node07.csv", lambda: query_csv(8, 10) + "\n".join(query_rows(8, 10)) + "\n"), "note",
     ("once", "twice", "duplicate", "overlap", "seen"), modules=8, samples=80,
     why="the same readings twice in one file (log appended to itself): used once, said so")


def _csv_same_twice(d: Path) -> list:
    p = str(w(d / "node07.csv", query_csv(8, 30)))
    return R + [p, p]


case("csv_same_file_twice", "watch", _csv_same_twice, "note", DUP_WORDS + ("once",), modules=8, samples=240, refuse_ok=True)


def _csv_per_node(d: Path) -> list:
    a = w(d / "node01" / "telemetry.csv", query_csv(8, 30))
    b = w(d / "node02" / "telemetry.csv", query_csv(8, 30, temp=lambda g, k: str(60 + g)))
    return R + [str(a), str(b)]


case("csv_per_node_same_filename", "watch", _csv_per_node, "note",
     ("same name", "twice", "folder", "node01", "node02", "telemetry"), modules=16, samples=480, refuse_ok=True,
     why="node01/telemetry.csv and node02/telemetry.csv: nodes are named after the file; two nodes must not merge")
case("csv_restart_new_columns", "watch",
     rep("node07.csv", lambda: query_csv(8, 10) + "timestamp, index, temperature.gpu, power.draw [W]\n"
         + "".join(f"2024/01/15 11:{k:02d}:00.000, {g}, {50 + g}, 200.00 W\n" for k in range(10) for g in range(8))),
     "result", modules=8, samples=160)
case("csv_mixed_clocks", "watch",
     rep("node07.csv", lambda: query_csv(8, 5) + "index, temperature.gpu, power.draw [W]\n" + "".join(f"{g}, 50, 200.00 W\n" for g in range(8))),
     "refuse", ("timestamp", "clock", "recorded", "without"))
case("csv_gzip", "watch", rep("node07.csv.gz", lambda: gz(query_csv(8, 60))), "result", modules=8, samples=480)
case("csv_gzip_two_members", "watch", rep("node07.csv.gz", lambda: gz(query_csv(8, 30)) + gz("\n".join(query_rows(8, 30, start=1705312800 + 1800)) + "\n")),
     "result", modules=8, samples=480, why="logrotate-style concatenated gzip members")
case("csv_long_line", "watch", rep("node07.csv", lambda: query_csv(8, 5) + "2024/01/15 10:10:00.000, 0, " + "N" * 100_000 + "\n"),
     "refuse", ("64 kib", "line", "long"))


def _csv_line_bomb(d: Path) -> list:
    p = d / "node07.csv.gz"
    with gzip.GzipFile(p, "wb", compresslevel=6, mtime=0) as f:
        f.write(b"timestamp, index, temperature.gpu\n")
        row = b"2024/01/15 10:00:00.000, 0, 40\n"     # 31 bytes: 4.5 M rows = 140 MB < 256 MiB
        for _ in range(9):
            f.write(row * 500_000)
    return R + [str(p)]


case("csv_line_bomb_gz", "watch", _csv_line_bomb, "refuse", ("4,000,000", "lines", "limit"),
     why="LARGE: a gzip of 4.5 million rows (limit 4,000,000 lines a file)")
case("csv_nonascii_filename", "watch", rep("nœud-東京-07.csv", lambda: query_csv(8, 10)), "result", modules=8, samples=80)
case("csv_long_filename", "watch", rep("n" * 240 + ".csv", lambda: query_csv(8, 10)), "result", modules=8, samples=80)
case("csv_empty", "watch", rep("node07.csv", lambda: b""), "refuse", ("empty", "nothing", "no "))
case("csv_header_only", "watch", rep("node07.csv", lambda: QUERY_HEAD + "\n"), "refuse", ("no sample", "no row", "nothing", "empty", "no reading"),
     refuse_ok=True)
case("csv_utf16", "watch", rep("node07.csv", lambda: u16(query_csv(8, 10))), "refuse", U16_WORDS, modules=8, samples=80, alt_ok=True)
case("csv_5000_modules", "watch", rep("node07.csv", lambda: "\n".join([QUERY_HEAD] + [
    f"2024/01/15 10:00:00.000, {g}, {H100}, {bus(g)}, 40, 300.00 W, 90 %, 1980 MHz, 2619 MHz" for g in range(5000)]) + "\n"),
    "refuse", ("4,096", "4096", "modules", "index"), refuse_ok=True)
case("csv_na_cells", "watch", rep("node07.csv", lambda: query_csv(8, 10).replace(", 90 %", ", [N/A]").replace("1980 MHz", "[Not Supported]")),
     "result", modules=8, samples=80)
case("csv_fifo", "watch", lambda d: R + _fifo("node07.csv", flag=None)(d), "refuse", ("fifo", "pipe"))
case("csv_folder", "watch", lambda d: R + _folder("node07.csv", flag=None)(d), "refuse", ("folder", "directory"))
case("smil_table", "watch", rep("node07.log", lambda: smi_l(3, 8)), "result", modules=8, samples=24)
case("smil_table_truncated", "watch", rep("node07.log", lambda: smi_l(3, 8)[: len(smi_l(3, 8)) * 5 // 6]), "result", modules=8,
     why="a log still being written: the last table is cut")
case("smil_crlf", "watch", rep("node07.log", lambda: crlf(smi_l(3, 8))), "result", modules=8, samples=24)
case("dmon_dt", "watch", rep("node07.dmon", lambda: dmon(8, 30)), "result", modules=8, samples=240)
case("dmon_mixed_dt", "watch", rep("node07.dmon", lambda: dmon(8, 10) + dmon(8, 10, dt=lambda k: False).split("\n", 2)[2]), "refuse",
     ("clock", "timestamp", "-o dt", "without", "time"))
case("dmon_bom_crlf_gz", "watch", rep("node07.dmon.gz", lambda: gz(bom(crlf(dmon(8, 30))))), "result", modules=8, samples=240)
case("pmon_dt", "watch", rep("node07.pmon", lambda: pmon(8, 30)), "result", modules=8)
case("prom_text", "watch", rep("dump.prom", lambda: prom_text(8, 30)), "result", modules=8)
case("prom_text_nan_inf", "watch", rep("dump.prom", lambda: prom_text(8, 30, value=lambda g, k: "NaN" if k == 3 else "+Inf" if k == 4 else str(40 + g))),
     "note", ODD_WORDS + ("inf",), modules=8)
case("prom_text_series_bomb", "watch", rep("dump.prom", lambda: "".join(
    f'DCGM_FI_DEV_GPU_TEMP{{gpu="0",Hostname="n",pod="p{k}"}} 40 {1705312800000 + k}\n' for k in range(30000))),
    "refuse", ("20,000", "20000", "series"))
case("prom_json", "watch", rep("range.json", lambda: json.dumps(prom_json(8, 30))), "result", modules=8)
case("prom_json_deep", "watch", rep("range.json", lambda: '{"status":"success","data":' + "[" * 100_000 + "]" * 100_000 + "}"),
     "refuse", ("nest", "deep", "data", "json"))
case("prom_json_metric_null", "watch", rep("range.json", lambda: json.dumps({"status": "success", "data": {"resultType": "matrix",
     "result": [{"metric": None, "values": [[1705312800, "40"]]}]}})), "refuse", ("data.result", "metric"))
case("prom_json_bom", "watch", rep("range.json", lambda: bom(json.dumps(prom_json(8, 30)))), "result", modules=8)
case("prom_json_list_twice", "watch", rep("range.json", lambda: json.dumps([prom_json(8, 30), prom_json(8, 30)])), "result",
     modules=8, why="the same answer twice in a JSON list: a reading seen twice is used once")

# ---- --backtest events CSV --------------------------------------------------------------------------------------


def bt(events: str | bytes, fname: str = "events.csv"):
    def b(d: Path) -> list:
        tel = w(d / "node07.csv", query_csv(4, 200, step=600.0))
        ev = w(d / fname, events)
        return R + [str(tel), "--backtest", str(ev)]
    return b


EV = "module,time,kind\nnode07/gpu1,2024-01-16T10:00:00,throttled\nnode07/gpu2,2024-01-16T12:00:00,repasted\n"
case("bt_plain", "backtest", bt(EV), "result", modules=4)
case("bt_bom_crlf", "backtest", bt(bom(crlf(EV))), "result", modules=4)
case("bt_column_order_extra", "backtest", bt("kind,comment,time,module\nthrottled,\"fan, loud\",1705406400,node07/gpu1\n"), "result", modules=4)
case("bt_unknown_module", "backtest", bt(EV + "node99/gpu0,2024-01-16T10:00:00,throttled\n"), "note",
     ("unknown", "not in the telemetry", "left out", "node99"), modules=4)
case("bt_bad_kind", "backtest", bt(EV + "node07/gpu3,2024-01-16T10:00:00,exploded\n"), "refuse", ("kind", "exploded"))
case("bt_time_9999", "backtest", bt(EV + "node07/gpu3,9999-12-31T23:59:59,throttled\n"), "refuse", ("time", "9999", "4"))
case("bt_time_zone", "backtest", bt("module,time,kind\nnode07/gpu1,2024-01-16T10:00:00+05:30,throttled\n"), "result", modules=4,
     why="ISO 8601 with an offset is ISO 8601")
case("bt_decimal_comma_unix", "backtest", bt("module;time;kind\nnode07/gpu1;1705406400,5;throttled\n"), "refuse",
     ("header", "module", "column"))
case("bt_utf16", "backtest", bt(u16(EV)), "refuse", U16_WORDS + ("header",))
case("bt_empty", "backtest", bt(b""), "refuse", ("empty", "header", "nothing", "no event"))
case("bt_dup_events", "backtest", bt(EV + "node07/gpu1,2024-01-16T10:00:00,throttled\n"), "result", modules=4)


def _bt_fifo(d: Path) -> list:
    tel = w(d / "node07.csv", query_csv(4, 50))
    os.mkfifo(d / "events.csv")
    return R + [str(tel), "--backtest", str(d / "events.csv")]


case("bt_fifo", "backtest", _bt_fifo, "refuse", ("fifo", "pipe", "regular"))

# ---- fleet merge ------------------------------------------------------------------------------------------------
ENVELOPE: dict = {}


def envelope() -> dict:
    if not ENVELOPE:
        home = Path(tempfile.mkdtemp(prefix="hostile-env-"))
        env = dict(os.environ, GPUVET_HOME=str(home), GPUVET_LOGBOOK=str(home / "logbook.db"))
        r = subprocess.run([GPUVET, "validate", "--sim", "hgx-h200-8", "--json", "--level", "quick"],
                           capture_output=True, text=True, env=env, timeout=120)
        ENVELOPE.update(json.loads(r.stdout))
        shutil.rmtree(home, ignore_errors=True)
    return json.loads(json.dumps(ENVELOPE))


def env_node(name: str, mutate: Callable[[dict], None] | None = None) -> dict:
    e = envelope()
    e["environment"]["node"] = name
    if mutate:
        mutate(e)
    return e


def fleet(n: int = 3, special: Callable[[Path], list] | None = None):
    def b(d: Path) -> list:
        files = [str(w(d / f"node{k}.json", json.dumps(env_node(f"node{k}")))) for k in range(n)]
        return files + (special(d) if special else [])
    return b


def _setv(e: dict, name: str, val, module: str = "gpu3") -> None:
    for c in e["checks"]:
        if c.get("name") == name and c.get("module") == module:
            c["value"] = val


case("fm_plain", "fleet", fleet(3), "result", modules=3)
case("fm_outlier", "fleet", fleet(3, lambda d: [str(w(d / "slow.json", json.dumps(env_node("slow", lambda e: [
    c.update(value=c["value"] * 0.6) for c in e["checks"] if c.get("name") == "gemm_bf16" and c.get("module") == "gpu3"]))))]),
    "note", ("slow",), modules=4, why="node 'slow' gpu3 gemm 40 % below peers: must be named")
case("fm_same_file_twice", "fleet", lambda d: fleet(3)(d) + [str(d / "node0.json")], "refuse", ("twice", "node0"))
case("fm_same_node_two_files", "fleet", lambda d: fleet(3)(d) + [str(w(d / "again.json", json.dumps(env_node("node1"))))],
     "refuse", ("twice", "node1"))


def _fm_per_node_folders(d: Path) -> list:
    return [str(w(d / f"rack{k}" / "node.json", json.dumps(env_node(f"r{k}n1")))) for k in range(4)]


case("fm_per_node_same_filename", "fleet", _fm_per_node_folders, "result", modules=4,
     why="rack0/node.json … rack3/node.json: same file name, different nodes")
case("fm_folder_with_junk", "fleet", lambda d: (fleet(3)(d), w(d / "README.txt", "x"), w(d / "notes.md", "y"), [str(d)])[-1],
     "result", modules=3)
case("fm_node_int", "fleet", lambda d: fleet(3)(d) + [str(w(d / "bad.json", json.dumps(env_node(17))))], "refuse",
     ("environment.node", "node"))
case("fm_nan_value", "fleet", lambda d: fleet(3)(d) + [str(w(d / "nan.json", json.dumps(env_node("nanny", lambda e: _setv(e, "gemm_bf16", float("nan"))))))],
     "note", ("nan", "left out", "not a finite", "infinite"), modules=4)
case("fm_1e400", "fleet", lambda d: fleet(3)(d) + [str(w(d / "big.json", json.dumps(env_node("big")).replace(
    '"value": 8,', '"value": 1e400,', 1)))], "note", ("1e400", "infinite", "left out", "not a finite", "inf"), modules=4)
case("fm_deep_evidence", "fleet", lambda d: fleet(3)(d) + [str(w(d / "deep.json", json.dumps(env_node("deep"))[:-1]
    + ', "extra": ' + "[" * 50_000 + "]" * 50_000 + "}"))], "note", ("nest", "deep", "depth", "json"), modules=4, refuse_ok=True)
case("fm_truncated", "fleet", lambda d: fleet(3)(d) + [str(w(d / "cut.json", json.dumps(env_node("cut"))[:5000]))], "refuse",
     ("json", "cut.json"))
case("fm_bom", "fleet", lambda d: fleet(3)(d) + [str(w(d / "bom.json", bom(json.dumps(env_node("bommy")))))], "result", modules=4,
     why="PowerShell's Out-File writes a BOM; read it, or refuse naming it")
case("fm_utf16", "fleet", lambda d: fleet(3)(d) + [str(w(d / "u16.json", u16(json.dumps(env_node("wide")))))], "refuse",
     U16_WORDS + ("json", "u16.json"), modules=4, alt_ok=True)
case("fm_schema_mismatch", "fleet", lambda d: fleet(3)(d) + [str(w(d / "v99.json", json.dumps(env_node("v99", lambda e: e.update(schema_version=99)))))],
     "refuse", ("schema",))
case("fm_bad_verdict", "fleet", lambda d: fleet(3)(d) + [str(w(d / "v.json", json.dumps(env_node("v", lambda e: e["checks"][3].update(verdict="excellent")))))],
     "refuse", ("verdict",))
case("fm_empty_file", "fleet", lambda d: fleet(3)(d) + [str(w(d / "empty.json", b""))], "refuse", ("empty.json", "empty", "json"))
case("fm_gzip", "fleet", lambda d: fleet(3)(d) + [str(w(d / "z.json.gz", gz(json.dumps(env_node("zipped")))))], "refuse",
     ("gzip", "json", "z.json.gz"), modules=4, alt_ok=True)
case("fm_5000_modules", "fleet", lambda d: fleet(3)(d) + [str(w(d / "wide.json", json.dumps(env_node("wide", lambda e: e["environment"].update(
    modules=[dict(e["environment"]["modules"][0], id=f"gpu{k}", uuid=f"GPU-x-{k}") for k in range(5000)])))))], "result", modules=4)
case("fm_nonascii_node", "fleet", lambda d: fleet(3)(d) + [str(w(d / "n.json", json.dumps(env_node("nœud-東京-\u202e01"), ensure_ascii=False)))],
     "result", modules=4)
case("fm_fifo", "fleet", lambda d: fleet(3)(d) + _fifo("pipe.json", flag=None)(d), "refuse", ("fifo", "pipe"))
case("fm_not_envelope", "fleet", lambda d: fleet(3)(d) + [str(w(d / "other.json", json.dumps({"hello": [1, 2, 3]})))], "refuse",
     ("envelope", "other.json"))
case("fm_dup_keys", "fleet", lambda d: fleet(3)(d) + [str(w(d / "dupkey.json", '{"schema_version": 1, ' + json.dumps(env_node("dupkey"))[1:].replace(
    '"environment": {', '"environment": {"node": "node0", ', 1)))], "note", DUP_WORDS + ("node0",), modules=4, refuse_ok=True,
     why="environment.node given twice in one object ('node0', then 'dupkey'): which node is it?")

# ---- spec YAML --------------------------------------------------------------------------------------------------


def sp(text: str | bytes, fname: str = "node.yaml"):
    def b(d: Path) -> list:
        return [str(w(d / fname, text))]
    return b


def _bomb() -> str:
    text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for k in range(8):
        text += f"{chr(98 + k)}: &{chr(98 + k)} [" + ", ".join([f"*{chr(97 + k)}"] * 10) + "]\n"
    return text + "name: n\nmodules: {count: 8, model: H100-SXM}\n"


def _spec_list(n: int) -> str:
    return ("name: big\nmodules:\n" + "".join(
        f"  - {{id: gpu{k}, model: H100-SXM, bus_id: \"{bus(k + 8)}\", uuid: {uuid(k)}}}\n" for k in range(n)))


case("spec_plain", "spec", sp(SPEC_FULL), "result", modules=8)
case("spec_base_overlay", "spec", sp(SPEC), "result", modules=8)
case("spec_bom_crlf", "spec", sp(bom(crlf(SPEC_FULL))), "result", modules=8)
case("spec_utf16", "spec", sp(u16(SPEC_FULL)), "refuse", U16_WORDS, modules=8, alt_ok=True)
case("spec_alias_bomb", "spec", sp(_bomb()), "refuse", ("alias", "expand", "200,000"))
case("spec_deep", "spec", sp("name: d\nx: " + "[" * 5000 + "]" * 5000 + "\n"), "refuse", ("nest", "deep", "depth", "32"))
case("spec_1024_list", "spec", sp(_spec_list(1024)), "result", modules=1024, why="at the bound (~110 KB)")
case("spec_5000_list", "spec", sp("name: big\nmodules:\n" + "".join(f"  - {{id: g{k}, model: H100-SXM}}\n" for k in range(5000))), "refuse", ("1,024", "1024", "modules"))
case("spec_count_huge", "spec", sp("name: x\nmodules: {count: 100000, model: H100-SXM}\n"), "refuse", ("1,024", "1024"))
case("spec_nan_lane", "spec", sp(SPEC_FULL.replace("lane_gbps: 25", "lane_gbps: .nan")), "refuse", ("nan", "finite", "lane_gbps"))
case("spec_1e308_lane", "spec", sp(SPEC_FULL.replace("lane_gbps: 25", "lane_gbps: 1e308")), "refuse", ("1,000", "1000", "lane_gbps"))
case("spec_negative_count", "spec", sp(SPEC_FULL.replace("count: 8", "count: -5")), "refuse", ("count",))
case("spec_base_loop", "spec", lambda d: (w(d / "b.yaml", "name: b\nbase: a.yaml\n"), [str(w(d / "a.yaml", "name: a\nbase: b.yaml\n"))])[-1],
     "refuse", ("loop", "cycle"))
case("spec_dup_keys", "spec", sp(SPEC_FULL + "modules:\n  count: 4\n  model: H100-SXM\n"), "refuse", DUP_WORDS + ("modules",),
     why="`modules:` twice: YAML 1.2 forbids duplicate keys; silently taking the last is a 4-module node from an 8-module spec")
case("spec_int_5000_digits", "spec", sp(SPEC_FULL.replace("memory_bytes: 2199023255552", "memory_bytes: " + "9" * 5000)), "refuse",
     ("digit", "100", "memory_bytes"))
case("spec_empty", "spec", sp(b""), "refuse", ("empty", "nothing", "modules", "mapping"))
case("spec_binary", "spec", sp(random.Random(3).randbytes(5000)), "refuse", ("utf-8", "binary", "text"))
case("spec_tabs", "spec", sp(SPEC_FULL.replace("  count: 8", "\tcount: 8")), "refuse", ("tab", "line", "yaml"))
case("spec_too_big", "spec", sp("# " + "x" * 300_000 + "\n" + SPEC_FULL), "refuse", ("256 kib", "size", "too large", "limit"))
case("spec_fifo", "spec", _fifo("node.yaml", flag=None), "refuse", ("fifo", "pipe", "regular"))
case("spec_folder", "spec", _folder("node.yaml", flag=None), "refuse", ("folder", "directory", "regular"))
case("spec_nonascii_name", "spec", sp(SPEC_FULL.replace("name: my-node", "name: \"nœud-東京-\\x1b]0;pwn\\x07\"")), "result", modules=8)

# ---------------------------------------------------------------------------------------------
# Running and classifying
# ---------------------------------------------------------------------------------------------

VERB = {"doctor": ["doctor"], "inventory": ["inventory"], "topo": ["topo"], "watch": ["watch"], "backtest": ["watch"],
        "fleet": ["fleet", "merge"], "spec": ["spec", "check"]}
TAIL = {"doctor": ["--json"], "inventory": ["--json"], "topo": ["--json"], "watch": ["--no-log", "--json"],
        "backtest": ["--no-log", "--json"], "fleet": ["--json", "--jobs", "1"], "spec": ["--json"]}


def run(cmd: list[str], env: dict, cwd: Path, tfile: Path) -> tuple[int | None, str, str, float, float]:
    """Returns (exit code or None on timeout, stdout, stderr, seconds, peak MiB)."""
    tv = Path("/usr/bin/time")
    full = ([str(tv), "-v", "-o", str(tfile)] + cmd) if tv.exists() else cmd
    t0 = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    p = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd,
                         start_new_session=True, stdin=subprocess.DEVNULL)
    try:
        out, err = p.communicate(timeout=TIMEOUT_S)
        rc: int | None = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        rc = None
    secs = time.monotonic() - t0
    mib = 0.0
    if tv.exists() and tfile.exists():
        text = tfile.read_text(errors="replace")
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
        mib = int(m.group(1)) / 1024 if m else 0.0
        m = re.search(r"Command terminated by signal (\d+)", text)
        if m and rc is not None:
            rc = -int(m.group(1))
        tfile.unlink()
    else:  # the children's peak is a high-water mark: only meaningful in a fresh helper process
        mib = max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before) / 1024
    return rc, out.decode(errors="replace"), err.decode(errors="replace"), secs, mib


def causes_of(j: dict) -> list[str]:
    return [f.get("cause", "?") for f in (j.get("findings") or [])]


def classify(c: Case, rc: int | None, out: str, err: str, secs: float, mib: float, d: Path) -> tuple[str, str]:
    if "Traceback (most recent call last)" in err or (rc is not None and rc not in (0, 1, 2)):
        return "traceback", f"exit {rc}; " + tail_lines(err, 6)
    if rc is None:
        return "timeout", f"no answer in {TIMEOUT_S} s"
    if mib > MEMORY_MIB:
        return "memory", f"peak {mib:.0f} MiB"
    j: dict = {}
    if rc in (0, 1):
        try:
            j = json.loads(out, parse_constant=_no_constant) if out.strip() else {}
        except ValueError as e:
            if "constant" in str(e):
                return "wrong claim", f"exit {rc}; the JSON output holds {e} (docs/limits.md: never NaN or Infinity)"
            j = {}
    said = spoken(c, j, err).replace(str(d).lower(), "<dir>")  # the case's own name is in its path
    has_word = any(wd.lower() in said for wd in c.words) if c.words else True
    counts = measured(c, j)
    if rc == 2:
        first = first_para(err)
        if c.expect == "refuse" or c.refuse_ok:
            if not first:
                return "silent", "exit 2 with nothing on stderr"
            if c.words and not has_word:
                return "silent", f"exit 2 but the message names none of {list(c.words)}: {first}"
            return "clean", f"refused: {first}"
        return "data loss", f"exit 2 on a readable input: {first}"
    # rc 0/1: it read the input
    detail = describe(c, j, counts)
    if c.kind == "doctor" and j:
        got = causes_of(j)
        if c.causes is not None:
            bad = [x for x in got if x not in c.causes]
            if bad:
                return "wrong claim", f"exit {rc}; claimed {bad} (allowed {sorted(c.causes)}); {detail}"
        if c.need and not any(x in c.need for x in got):
            return "data loss", f"exit {rc}; none of {list(c.need)} named (got {got}); {detail}"
    if c.modules is not None and counts.get("modules") is not None:
        if counts["modules"] > c.modules:
            return "wrong claim", f"exit {rc}; {counts['modules']} modules, the input holds {c.modules}; {detail}"
        if counts["modules"] < c.modules and c.expect != "refuse":
            return "data loss", f"exit {rc}; {counts['modules']} modules, the input holds {c.modules}; {detail}"
    if c.samples is not None and counts.get("samples") is not None:
        if counts["samples"] < c.samples:
            return "data loss", f"exit {rc}; {counts['samples']} samples, the input holds {c.samples}; {detail}"
        if counts["samples"] > c.samples:
            return "wrong claim", f"exit {rc}; {counts['samples']} samples, the input holds {c.samples} distinct; {detail}"
    extra = verify_values(c, j)
    if extra:
        return extra[0], f"exit {rc}; {extra[1]}"
    if c.expect == "refuse":
        if c.alt_ok and c.modules is not None and counts.get("modules") == c.modules:
            return "clean", f"read in full instead of refused; {detail}"
        if has_word and c.words:
            return "clean", f"read with a note instead of a refusal; {detail}"
        return "silent", f"expected a refusal, got exit {rc}; {detail}"
    if c.expect == "note" and not has_word:
        return "silent", f"exit {rc}, no word of {list(c.words)}; {detail}"
    return "clean", f"exit {rc}; {detail}"


def _no_constant(name: str):
    raise ValueError(f"constant {name}")


def spoken(c: Case, j: dict, err: str) -> str:
    """What the tool said about the input: stderr and the JSON's notes (and, for doctor, the
    findings; for a backtest its section; for fleet merge its outliers) — not the data it echoes."""
    parts = [err]
    if isinstance(j, dict):
        parts.append(json.dumps(j.get("notes", []), ensure_ascii=False))
        if c.kind == "doctor":
            parts.append(json.dumps(j.get("findings", []), ensure_ascii=False))
        if c.kind == "backtest":
            parts.append(json.dumps(j.get("backtest", {}), ensure_ascii=False))
        if c.kind == "fleet":
            parts.append(json.dumps(j.get("outliers", []), ensure_ascii=False))
    return "\n".join(parts).lower()


def measured(c: Case, j: dict) -> dict:
    if not j:
        return {}
    if c.kind in ("inventory", "topo", "spec"):
        m = j.get("modules")
        return {"modules": len(m) if isinstance(m, list) else m if isinstance(m, int) else None}
    if c.kind in ("watch", "backtest"):
        m = j.get("modules")
        return {"modules": len(m) if isinstance(m, list) else None, "samples": j.get("samples")}
    if c.kind == "fleet":
        nt = j.get("node_types") or {}
        return {"modules": sum(len(v) for v in nt.values()) if isinstance(nt, dict) else None}
    return {}


def verify_values(c: Case, j: dict) -> tuple[str, str] | None:
    """Per-case checks of values the input holds."""
    if c.name == "q_decimal_comma" and j.get("modules"):
        lim = [m.get("power_limit_w") for m in j["modules"]]
        if any(x not in (None, 700.0) for x in lim):
            return "wrong claim", f"power_limit_w read as {lim[:3]} from '700,00 W'"
        if all(x is None for x in lim) and "comma" not in json.dumps(j.get("notes", [])).lower():
            return "silent", "power limit '700,00 W' left out without a note"
    if c.name in ("q_plain_8", "q_crlf") and j.get("modules"):
        lim = [m.get("power_limit_w") for m in j["modules"]]
        if any(x != 700.0 for x in lim):
            return "data loss", (f"power_limit_w {lim[:2]}… although every module's GPU Power Readings / Current Power "
                                 f"Limit is 700.00 W (unavailable: {j['modules'][0].get('unavailable', {}).get('power_limit_w')!r})")
    if c.name in ("q_plain_8", "q_crlf", "x_plain_8") and j.get("modules"):
        ecc = [m.get("ecc_enabled") for m in j["modules"]]
        if any(x is not True for x in ecc):
            return "data loss", (f"ecc_enabled {ecc[:2]}… although every module's ECC Mode / Current is Enabled "
                                 f"(unavailable: {j['modules'][0].get('unavailable', {}).get('ecc_enabled')!r})")
    if c.name == "fm_outlier":
        names = {o.get("node") for o in j.get("outliers", [])}
        if "slow" not in names:
            return "data loss", f"outliers {sorted(map(str, names))}: 'slow' (gemm -40 % on gpu3) not named"
    if c.name == "bt_plain" and "backtest" not in j:
        return "silent", "no backtest in the JSON"
    return None


def describe(c: Case, j: dict, counts: dict) -> str:
    bits = [f"{k}={v}" for k, v in counts.items() if v is not None]
    if c.kind == "doctor":
        bits.append(f"causes={causes_of(j)}")
    notes = j.get("notes") if isinstance(j, dict) else None
    if notes:
        bits.append("notes: " + " | ".join(str(n)[:160] for n in notes[:3]))
    return "; ".join(bits)


def first_para(err: str) -> str:
    lines = [l for l in err.splitlines() if l.strip() and not l.startswith("gpuvet: ")]
    return " ".join(lines)[:400]


def tail_lines(err: str, n: int) -> str:
    return " / ".join(err.strip().splitlines()[-n:])[:600]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", help="run this case (repeat)")
    ap.add_argument("--list", action="store_true", help="list the cases")
    ap.add_argument("--json-out", type=Path, help="write the results as JSON here")
    ap.add_argument("--keep", type=Path, help="generate the inputs here and keep them")
    a = ap.parse_args()
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)), "case names must be unique"
    if a.list:
        for c in CASES:
            print(f"{c.name:32} {c.kind:10} {c.expect:7} {c.why}")
        print(f"{len(CASES)} cases")
        return 0
    chosen = [c for c in CASES if not a.only or c.name in a.only]
    if a.only and len(chosen) != len(a.only):
        print(f"unknown case(s): {sorted(set(a.only) - set(names))}", file=sys.stderr)
        return 2
    base = a.keep or Path(tempfile.mkdtemp(prefix="hostile-round-"))
    base.mkdir(parents=True, exist_ok=True)
    home = base / "_home"
    home.mkdir(exist_ok=True)
    env = dict(os.environ, GPUVET_HOME=str(home), GPUVET_LOGBOOK=str(home / "logbook.db"), COLUMNS="200",
               NO_COLOR="1", PYTHONWARNINGS="ignore")
    results = []
    try:
        for c in chosen:
            d = base / c.name
            if d.exists():
                shutil.rmtree(d)
            d.mkdir(parents=True)
            args = c.build(d)
            cmd = [GPUVET] + VERB[c.kind] + args + list(c.extra) + TAIL[c.kind]
            rc, out, err, secs, mib = run(cmd, env, d, base / "_time.txt")
            cls, why = classify(c, rc, out, err, secs, mib, d)
            shown = " ".join(x if len(x) < 80 else x[:40] + "…" for x in ["gpuvet"] + cmd[1:]).replace(str(d) + "/", "")
            results.append({"name": c.name, "kind": c.kind, "expect": c.expect, "outcome": cls, "seconds": round(secs, 2),
                            "mib": round(mib, 1), "exit": rc, "command": shown, "detail": why,
                            "expected": {"words": list(c.words), "modules": c.modules, "samples": c.samples,
                                         "causes": sorted(c.causes) if c.causes is not None else None,
                                         "need": list(c.need), "refuse_ok": c.refuse_ok, "alt_ok": c.alt_ok, "why": c.why},
                            "stderr_head": "\n".join(err.strip().splitlines()[-8:])[:1500]})
            print(f"{c.name:32} {c.kind:9} {c.expect:7} {cls:12} {secs:6.2f} {mib:7.1f}", flush=True)
            if not a.keep:
                shutil.rmtree(d, ignore_errors=True)
    finally:
        if not a.keep:
            shutil.rmtree(base, ignore_errors=True)
    counts: dict[str, int] = {}
    for r in results:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    print()
    print(f"{'case':32} {'command':9} {'expect':7} {'outcome':12} {'s':>6} {'MiB':>7}")
    for r in results:
        print(f"{r['name']:32} {r['kind']:9} {r['expect']:7} {r['outcome']:12} {r['seconds']:6.2f} {r['mib']:7.1f}")
    print()
    print("per class: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + f" (of {len(results)})")
    for r in results:
        if r["outcome"] != "clean":
            print(f"- {r['name']} [{r['outcome']}] {r['command']}\n    {r['detail']}")
    if a.json_out:
        git = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True, text=True).stdout.strip()
        a.json_out.write_text(json.dumps({"gpuvet_tree": git, "counts": counts, "cases": results}, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
