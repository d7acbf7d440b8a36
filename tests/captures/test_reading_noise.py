"""A bug report is mostly other drivers' kernel lines (issue 43): the readers pass over them with a literal
test first, so lines of the same shape (a bus id, a dmesg stamp, commas, an 'nvidia-…' device) placed after
the tools' output change nothing any reader finds. The captures are written here in each tool's format."""

from __future__ import annotations

import pytest

from gpuvet.captures import aer, kernel, links, smi_query, smi_text
from gpuvet.captures.text import clean
from gpuvet.doctor.kernel_ids import kernel_identities

CONTENT = """\
[  5.100000] pcieport 0000:00:01.0: AER: Corrected error message received from 0000:03:00.0
[  5.100001] nvidia 0000:03:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)
[  5.100002] nvidia 0000:03:00.0:   device [10de:2335] error status/mask=00000001/0000e000
[  5.100003] nvidia 0000:03:00.0:    [ 0] RxErr                  (First)
[  9.000000] NVRM: Xid (PCI:0000:03:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
[  9.000001] NVRM: GPU at PCI:0000:03:00: GPU-6a5b2c1d-0000-1111-2222-333344445555
[  9.000002] NVRM: GPU Board Serial Number: 1652023000024

0000:03:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H200 SXM 141GB] [10de:2335] (rev a1)
\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported
\t\tLnkSta:\tSpeed 16GT/s (downgraded), Width x16
\tKernel driver in use: nvidia

GPU 00000000:03:00.0
    Product Name                          : NVIDIA H200
    Temperature
        GPU Current Temp                  : 37 C

pci.bus_id, name, temperature.gpu
00000000:03:00.0, NVIDIA H200, 37
"""

# other drivers' lines as a bug report's dmesg has them by the hundred thousand
NOISE = [
    "[{t}.800000] mlx5_core 0000:8a:00.{f}: mlx5_pcie_event:301: PCIe slot advertised sufficient power (75W).",
    "[{t}.800000] nvidia-nvswitch{f}: open (major=235)",
    "[{t}.800000] perf: interrupt took too long ({t} > 181), lowering kernel.perf_event_max_sample_rate to 50000",
    "[{t}.800000] systemd[1]: Started session-{t}.scope - Session {t} of User slurm.",
    "{t}:00.{f} Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]",
]


def _parse(name: str, text: str) -> str:
    lines = clean(text).lines
    parse = {"kernel": kernel.parse, "aer": aer.parse, "smi_query": smi_query.parse, "lspci": links.parse_lspci,
             "smi_text": smi_text.parse, "nvlink": links.parse_nvlink, "dmon": smi_text.parse_dmon}[name]
    return repr(parse(lines))


@pytest.mark.parametrize("name", ["kernel", "aer", "smi_query", "lspci", "smi_text", "nvlink", "dmon"])
def test_other_drivers_lines_after_the_output_change_nothing(name: str) -> None:
    noise = "\n".join(NOISE[k % len(NOISE)].format(t=10 + k, f=k % 8) for k in range(400))
    assert _parse(name, CONTENT) == _parse(name, CONTENT + "\n" + noise + "\n")


def test_each_reader_still_finds_its_own_lines() -> None:
    lines = clean(CONTENT).lines
    device = aer.parse(lines).devices["0000:03:00.0"]
    assert (device.vendor, device.correctable, device.kinds) == ("10de", 1, ["Physical Layer: RxErr"])
    assert aer.parse(lines).devices["0000:00:01.0"].sources == ["0000:03:00.0"]
    assert [(x.bus_id, x.code) for x in kernel.parse(lines).xids] == [("0000:03:00.0", 79)]
    link = links.parse_lspci(lines).links[0]
    assert (link.device, link.speed_gts, link.speed_downgraded) == ("0000:03:00.0", 16.0, True)
    assert [m.bus_id for m in smi_text.parse(lines).modules] == ["0000:03:00.0"]
    assert smi_query.parse(lines).modules[0].fields["Temperature/GPU Current Temp"] == "37 C"


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_kernel_identity_lines_found_whatever_the_line_ends(end: str) -> None:
    text = end.join(["NVRM: GPU Board Serial Number: 99 (before any identity line: no bus)",
                     "[ 1.0] systemd[1]: Started.", "NVRM: GPU at PCI:0000:3a:00: GPU-ab12",
                     "NVRM: GPU Board Serial Number: 1652023000058", "NVRM: GPU at PCI:0000:9a:00.0: GPU-cd34", ""])
    assert kernel_identities(text) == {"0000:3A:00.0": ("GPU-ab12", "1652023000058"), "0000:9A:00.0": ("GPU-cd34", None)}
