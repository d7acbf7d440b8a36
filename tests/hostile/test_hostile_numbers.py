# ruff: noqa: E501  (each capture's lines are as its tool prints them)
"""A run of digits and dots is not a number (NUM65): each reader that turns a field into a figure, given its own
line with that field as '1.2.3', '12.', '...' or '1..2', reads no figure from it (the line unread or the field
unknown) and raises nothing. Before NUM65 each raised ValueError from float() out of parse_text. The lines are
written here in the tools' own formats: rig report, nvidia-top, nvitop, the kernel's PCIe link status, lspci -vvv,
nccl-tests, perftest, ibstatus, ibv_devinfo -v, clinfo."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpuvet.captures.formats import FileCapture
from gpuvet.captures.read import parse_text

HOSTILE = ("1.2.3", "12.", "...", "1..2")


def _field(name: str) -> Callable[[FileCapture], Any]:
    return lambda fc: fc.smi.modules[0].fields.get(name) if fc.smi is not None and fc.smi.modules else None


def _first(get: Callable[[Any], Any], items: Callable[[FileCapture], list[Any]]) -> Callable[[FileCapture], Any]:
    return lambda fc: get(items(fc)[0]) if items(fc) else None


RIG = """- **GPU 0:** NVIDIA GeForce RTX 3060 | 12288 MiB | driver 550.90.07 | VBIOS 94.06.2f.00.9a | persistence=Enabled
  - **Power:** limit=170.00 W (default=170.00 W, max=170.00 W) | current_draw={v} W
  - **PCIe:** x16 lanes negotiated (GPU max x16, Gen up to 4) | bus 00000000:61:00.0
"""
NVIDIA_TOP = """----------------------------------------------------------------------------------------------
  #                     Name            Mem. Use       Mem. Use            Pow. Use     Temp.
----------------------------------------------------------------------------------------------
  1     GeForce GTX TITAN X*    94 MiB/12209 MiB           0.77    {v} W/250.00 W      37 C
"""
NVITOP = ("╒═════════════════════════════════════════════════════════════════════════════╕\n"
          "│ NVITOP 1.5.0       Driver Version: 560.35.03      CUDA Driver Version: 12.6 │\n"
          "├───────────────────────────────┬──────────────────────┬──────────────────────┤\n"
          "│ GPU  Name        Persistence-M│ Bus-Id        Disp.A │ MIG M.   Uncorr. ECC │\n"
          "│ Fan  Temp  Perf  Pwr:Usage/Cap│         Memory-Usage │ GPU-Util  Compute M. │\n"
          "╞═══════════════════════════════╪══════════════════════╪══════════════════════╪══════════════╕\n"
          "│   0  L40S                 On  │ 00000000:81:00.0 Off │ N/A                0 │ MEM: ▏ 0.1%  │\n"
          "│ N/A   29C    P8    33W / 350W │  44.25MiB / {v}GiB │      0%      Default │ UTL: ▏ 0%    │\n"
          "╘═══════════════════════════════╧══════════════════════╧══════════════════════╧══════════════╛\n")
PCIE_STATUS = ("[    5.912800] nvidia 0000:41:00.0: 63.008 Gb/s available PCIe bandwidth, limited by {v} GT/s PCIe x8 link "
               "at 0000:40:01.1 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)\n")
LSPCI = ("65:00.0 3D controller: NVIDIA Corporation GH100 [H100 PCIe] (rev a1)\n"
         "\tSubsystem: NVIDIA Corporation Device 1839\n"
         "\tCapabilities: [68] Express (v2) Endpoint, MSI 00\n"
         "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported\n"
         "\t\tLnkSta:\tSpeed {v}GT/s (ok), Width x8 (downgraded)\n")
NCCL_TESTS = """# nThread 1 nGpus 2 minBytes 134217728 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  12345 on      node1 device  0 [0x07] NVIDIA A100-SXM4-80GB
#  Rank  1 Group  0 Pid  12345 on      node1 device  1 [0x0b] NVIDIA A100-SXM4-80GB
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
   134217728      33554432     float     sum      -1   1234.5  108.72  108.72      0   1230.1  109.11  109.11      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : {v}
#
"""
PERFTEST = """---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF		Device         : mlx5_0
 Number of qps   : 1		Transport type : IB
 Connection type : RC		Using SRQ      : OFF
 Mtu             : 4096[B]
 Link type       : IB
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      5000             98.72            {v}		   0.188505
---------------------------------------------------------------------------------------
"""
IBSTATUS = """Infiniband device 'mlx5_0' port 1 status:
	default gid:	 fe80:0000:0000:0000:b83f:d203:00a1:b2c4
	base lid:	 0xc
	sm lid:		 0x1
	state:		 4: ACTIVE
	phys state:	 5: LinkUp
	rate:		 {v} Gb/sec (4X HDR)
	link_layer:	 InfiniBand
"""
IBV_DEVINFO = """hca_id:	mlx5_2
	transport:			InfiniBand (0)
	fw_ver:				20.31.1014
	phys_port_cnt:			1
		port:	1
			state:			PORT_ACTIVE (4)
			max_mtu:		4096 (5)
			active_mtu:		4096 (5)
			link_layer:		InfiniBand
			active_width:		4X (2)
			active_speed:		{v} Gbps (32)
			phys_state:		LINK_UP (5)
"""
CLINFO = ("Number of platforms                               1\n"
          "  Platform Name                                   NVIDIA CUDA\n"
          "Number of devices                                 1\n"
          "  Device Name                                     NVIDIA GeForce RTX 3080\n"
          "  Device Vendor                                   NVIDIA Corporation\n"
          "  Driver Version                                  535.154.05\n"
          "  Device Type                                     GPU\n"
          "  Device Topology (NV)                            PCI-E, 0000:0a:00.0\n"
          "  Global memory size                              10487070720 ({v}GiB)\n")

# (capture, a legitimate value of its field, what the reader read from that field)
READERS = {
    "rig_report power": (RIG, "21.50", _field("GPU Power Readings/Power Draw")),
    "nvidia-top power": (NVIDIA_TOP, "20.38", _field("GPU Power Readings/Power Draw")),
    "nvitop memory": (NVITOP, "44.99", _field("FB Memory Usage/Total")),
    "kernel PCIe link status": (PCIE_STATUS, "8.0", _first(lambda link: link.speed_gts, lambda fc: fc.lspci.links)),
    "lspci LnkSta": (LSPCI, "16", _first(lambda link: link.speed_gts, lambda fc: fc.lspci.links)),
    "nccl-tests average": (NCCL_TESTS, "108.92", _first(lambda r: r.avg_busbw, lambda fc: fc.nccl.results)),
    "perftest row": (PERFTEST, "97.61", _first(lambda run: run.rows[0].bw_avg_gbps if run.rows else None,
                                               lambda fc: fc.perftest.runs)),
    "ibstatus rate": (IBSTATUS, "200", _first(lambda nic: nic.ports[0].rate_gbps, lambda fc: fc.nics.nics)),
    "ibv_devinfo speed": (IBV_DEVINFO, "25.0", _first(lambda nic: nic.ports[0].rate_gbps, lambda fc: fc.nics.nics)),
    "clinfo memory": (CLINFO, "9.767", _field("FB Memory Usage/Total")),
}


@pytest.mark.parametrize("reader", READERS)
def test_the_reader_reads_its_own_line(reader: str) -> None:
    """The case is sound: with a figure in the field, the reader reads one."""
    text, good, read = READERS[reader]
    assert read(parse_text(text.replace("{v}", good), "capture.txt")) is not None


@pytest.mark.parametrize("token", HOSTILE)
@pytest.mark.parametrize("reader", READERS)
def test_digits_and_dots_are_no_figure(reader: str, token: str) -> None:
    text, _, read = READERS[reader]
    try:
        fc = parse_text(text.replace("{v}", token), "capture.txt")
    except ValueError as e:  # CaptureError (nothing readable) is no ValueError; float()'s is
        pytest.fail(f"{reader}: {token!r} raised {e!r}")
    assert read(fc) is None


TABLE = """Tue Mar  4 10:11:12 2025
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|=========================================+========================+======================|
|   0  NVIDIA A100-SXM4-80GB          On  |   00000000:07:00.0 Off |                    0 |
| N/A   34C    P0            {v}W /  400W |     672MiB /  81920MiB |      0%      Default |
+-----------------------------------------+------------------------+----------------------+
"""


@pytest.mark.parametrize("token", HOSTILE)
def test_replayed_table_power_of_digits_and_dots_is_no_reading(token: str) -> None:
    """watch's replay of a plain nvidia-smi table log: such a power cell leaves its row unread, no ValueError."""
    from gpuvet.errors import GpuvetError
    from gpuvet.watch.read_table import read_table

    good = read_table(TABLE.replace("{v}", "231").splitlines(), "node1", "smi.log")
    assert [s.power_w for s in good.samples] == [231.0]
    with pytest.raises(GpuvetError, match="no table"):
        read_table(TABLE.replace("{v}", token).splitlines(), "node1", "smi.log")


@pytest.mark.parametrize("token", HOSTILE)
def test_sysfs_rate_of_digits_and_dots_is_no_rate(tmp_path: Path, token: str) -> None:
    """A NIC port's sysfs rate file read live: such a rate is unknown, the port still listed."""
    from gpuvet.backends.nic_readings import NicReadings
    from gpuvet.backends.nic_sysfs import read_nics
    from tests.fakes.fake_sysfs import fake_hca

    fake_hca(tmp_path, "mlx5_0", "0000:2a:00.0", rate=f"{token} Gb/sec (4X HDR)")
    got = read_nics(tmp_path)
    assert isinstance(got, NicReadings) and [p.rate_gbps for n in got.nics for p in n.ports] == [None]
