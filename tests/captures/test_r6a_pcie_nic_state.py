"""Issue 46 (R6A): PCIe and NIC state as lspci, lshca, ibstatus and the RDMA completions print it, written in each
tool's own format (pciutils ls-ecaps.c cap_acs and ls-caps.c; lshca's table; infiniband-diags' ibstatus; mlx5's
CQE syndromes and libibverbs' enum ibv_wc_status), plus the batch AL/AM captures that showed the gaps."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures import cqe_status
from gpuvet.captures.text import Line
from gpuvet.cli.app import main
from tests.support.helpers import doctor_triples

CAPTURES = Path(__file__).parents[1] / "data" / "captures"
T = "\t\t"


def _acs(sv: str, rr: str) -> str:
    return f"{T}ACSCtl:\tSrcValid{sv} TransBlk- ReqRedir{rr} CmpltRedir{rr} UpstreamFwd{rr} EgressCtrl- DirectTrans-"


ROOT = (
    "40:01.1 PCI bridge: Advanced Micro Devices, Inc. [AMD] Starship/Matisse GPP Bridge (prog-if 00 [Normal decode])\n"
    "\tCapabilities: [58] Express (v2) Root Port (Slot+), MSI 00\n"
    "\tCapabilities: [2a0 v1] Access Control Services\n"
    f"{T}ACSCap:\tSrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans+\n"
)
NIC_ENDPOINT = (
    "c1:00.0 Ethernet controller: Mellanox Technologies MT28908 Family [ConnectX-6]\n"
    "\tCapabilities: [60] Express (v2) Endpoint, MSI 00\n"
    f"{T}ACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl+ DirectTrans-"
)
PLX = (
    "03:08.0 PCI bridge: PLX Technology, Inc. PEX 8747 48-Lane, 5-Port PCI Express Gen 3 (8.0 GT/s) Switch (rev ca)\n"
    "\tCapabilities: [68] Express (v2) Downstream Port (Slot+), MSI 00\n"
)
RULE = "-" * 107
HEAD = "  PCI_addr   |  RDMA  | Net | Numa | LnkStat | IpStat | Link | Rate | LnkCapWidth | LnkStaWidth | HCA_Type"


def _lshca(*rows: tuple[str, str, str, str]) -> str:
    body = [
        f"{bus} | {dev} | ib0 |  0   |  {state}   |  up_ip4  |  IB  | 200  |   x16 G4    |   {sta}    |  MT4123"
        for bus, dev, state, sta in rows
    ]
    return "\n".join([RULE, HEAD, RULE, *body, RULE])


def _ibstatus(rates: list[int]) -> str:
    return "\n".join(
        f"Infiniband device 'mlx5_{i}' port 1 status:\n\tstate:\t\t 4: ACTIVE\n\tphys state:\t 5: LinkUp\n"
        f"\trate:\t\t {r} Gb/sec (4X {'NDR' if r == 400 else 'HDR'})\n\tlink_layer:\t Ethernet\n"
        for i, r in enumerate(rates)
    )


@pytest.mark.parametrize(
    ("text", "severity", "module"),
    [
        ("$ sudo lspci -vvv | grep ACSCtl\n" + "\n".join([_acs("+", "+"), _acs("+", "-"), _acs("-", "-")]), "warn", ""),
        ("\n".join([_acs("+", "-"), _acs("-", "-")]), "warn", ""),  # NCCL's guide: any SrcValid+ is ACS on
        (ROOT + _acs("+", "+") + "\n\n" + NIC_ENDPOINT, "info", "40:01.1"),  # a root port's: the kernel's under the IOMMU
        (PLX + _acs("+", "+"), "warn", "03:08.0"),  # a switch's downstream port: P2P below it redirected
    ],
)
def test_acs_on_at_a_bridge(
    text: str, severity: str, module: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found = doctor_triples(text, tmp_path, capsys)
    cause = "pcie_acs_root_ports" if severity == "info" else "pcie_acs_enabled"
    assert (cause, severity, module) in found
    assert code != 2


@pytest.mark.parametrize(
    "text",
    [
        "\n".join([_acs("-", "-")] * 3),  # all '-': healthy, read
        ROOT + _acs("-", "-") + "\n\n" + NIC_ENDPOINT,  # an endpoint's own ACS is no path between devices
        ROOT.rstrip("\n"),  # the capability alone says what the port can do, not what it does
    ],
)
def test_acs_off_or_endpoint_only_is_read_and_clean(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, found = doctor_triples(text, tmp_path, capsys)
    assert code != 2 and not [f for f in found if f[1] in ("warn", "critical")], found


def test_lnkcap_and_lnksta_a_sentence_parts_are_one_link(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (
        "Looking at the lspci output, it has:\n\n  LnkCap:  Port #8, Speed 8GT/s, Width x4, ...\n\nand:\n\n"
        "  LnkSta:  Speed 5GT/s, Width x1, ..."
    )
    _, found = doctor_triples(text, tmp_path, capsys)
    assert [f for f in found if f[0] == "pcie_link_downgraded" and f[1] == "warn"]


def test_lshca_lnkstat_and_width_mark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = _lshca(("000a:11:00.0", "mlx5_0", "down", "x8 >!<"), ("000a:11:00.1", "mlx5_1", "init", "x16 G4"))
    _, found = doctor_triples(text, tmp_path, capsys)
    causes = {(c, m) for c, _, m in found}
    assert ("nic_port_down_undeclared", "mlx5_0 port 1") in causes
    assert ("nic_port_down_undeclared", "mlx5_1 port 1") in causes
    assert [f for f in found if f[0].startswith("nic_pcie") and f[2].startswith("mlx5_0")]
    assert not [f for f in found if f[0].startswith("nic_pcie") and f[2].startswith("mlx5_1")]


def test_lshca_all_active_is_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, found = doctor_triples(_lshca(("0000:3b:00.0", "mlx5_0", "actv", "x16 G4")), tmp_path, capsys)
    assert not [f for f in found if f[1] in ("warn", "critical")], found


def test_ibstatus_rates_of_no_named_model_are_no_peers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, found = doctor_triples(_ibstatus([200, 400, 400, 400]), tmp_path, capsys)
    assert not [f for f in found if f[0] == "nic_rate_low"], found


@pytest.mark.parametrize(
    ("line", "status"),
    [
        ("the requester QP completed with CQE syndrome 0x15 (TRANSPORT_RETRY_EXC_ERR, vendor syndrome 0x83)", 12),
        ("[rank 3] CQ requester error RNR_RETRY_EXC_ERR (16)", 13),
        ("*ERROR*: Error on QP 0x1a wqe[003]: Transport retry count exceeded (synd 0x15 vend 0x81) opcode RDMA_WRITE", 12),
        ("poll_cq failed on mlx5_2: wc status IBV_WC_REM_ACCESS_ERR, vendor_err 0x88", 10),
        ("error CQE on mlx5_0: syndrome 0x22 vendor syndrome 0x89", 16),
    ],
)
def test_cqe_syndrome_and_enum_names(line: str, status: int) -> None:
    got = cqe_status.completion(Line(1, line))
    assert got is not None and got[0] == status


@pytest.mark.parametrize(
    "line",
    [
        "\tcase MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR:",
        "\t\twc->status = IB_WC_RETRY_EXC_ERR;",
        "    return IBV_WC_RETRY_EXC_ERR;",
        "poll_cq: 1 completion, wc status IBV_WC_SUCCESS on mlx5_0",
    ],
)
def test_source_code_and_success_are_no_completion(line: str) -> None:
    assert cqe_status.completion(Line(1, line)) is None


@pytest.mark.parametrize(
    ("name", "cause", "severity"),
    [
        ("fresh_al/lspci_nccl523_acsctl_reqredir_ib_err4.txt", "pcie_acs_enabled", "warn"),
        ("fresh_al/lspci_nccl606_acsctl_srcvalid_amd_switch.txt", "pcie_acs_enabled", "warn"),
        ("fresh_al/lspci_rpipcie143_cx3_lnksta_x1.txt", "pcie_link_downgraded", "warn"),
        ("fresh_al/ibdev_ucx5970_port_down_x8_width.txt", "nic_port_down_undeclared", "warn"),
        ("fresh_am/bugreport_nccl2383_gdaki_transport_retry_exc_roce.txt", "rdma_completion_error", "warn"),
        ("fresh_al/ibstatus_deepep17_h20_bf3_roce_rates.txt", None, None),
    ],
)
def test_batch_rows(
    name: str, cause: str | None, severity: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found = doctor_triples((CAPTURES / name).read_text(encoding="utf-8").rstrip("\n"), tmp_path, capsys)
    assert code != 2
    if cause is None:
        assert not [f for f in found if f[1] in ("warn", "critical")], found
    else:
        assert [f for f in found if f[0] == cause and f[1] == severity], found


LIBMLX5 = (
    "mlx5: dgx-01: got completion with error:\n00000000 00000000 00000000 00000000\n"
    "00000000 00000000 00000000 00000000\n00000001 00000000 00000000 00000000\n{last}"
)


@pytest.mark.parametrize(
    ("last", "status"),
    [
        ("00000000 00008914 10000166 000047d2", 11),  # a requester's error CQE (0xd), syndrome 0x14: remote operation
        ("00000000 00008813 10000166 000047e2", 10),  # a responder's (0xe), 0x13: remote access
        ("00000000 00008914 10000166 000047a2", None),  # op_own 0xa: no error CQE, not read as one
    ],
)
def test_libmlx5_dumped_cqe(last: str, status: int | None) -> None:
    lines = [Line(n, t) for n, t in enumerate(LIBMLX5.format(last=last).splitlines(), 1)]
    got = cqe_status.dumped(cqe_status.rows(lines, 0))
    assert (got[0] if got else None) == status


def test_kernel_dumped_cqe_gets_its_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = "".join(f"[ 1234.5679] {o:08x}: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n" for o in (0, 16, 32))
    text = (
        "[ 1234.5678] mlx5_0:dump_cqe:272:(pid 0): dump error cqe\n"
        + rows
        + "[ 1234.5679] 00000030: 00 00 00 00 00 00 88 13 08 00 01 15 00 c5 d2 d2"
    )
    path = tmp_path / "capture.txt"
    path.write_text(text + "\n", encoding="utf-8")
    main(["doctor", "--from", str(path), "--json"])
    assert "Remote access error (status 10)" in capsys.readouterr().out


def test_lshca_widths_without_generations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row = "0000:3b:00.0 | mlx5_0 | ib0 |  0   |  actv   |  up_ip4  |  IB  | 200  |   x16    |   x8    |  MT4123"
    path = tmp_path / "capture.txt"
    path.write_text("\n".join([RULE, HEAD, RULE, row, RULE]) + "\n", encoding="utf-8")
    main(["doctor", "--from", str(path), "--json"])
    out = capsys.readouterr().out
    assert "GenNone" not in out and "nic_pcie" not in out  # no generation on either side: what it carries is unknown
