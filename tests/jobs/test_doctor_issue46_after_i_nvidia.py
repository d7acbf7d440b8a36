"""doctor on the NVIDIA classes batch I (issue 46) found missed on first contact: NCCL's socket WARN that
names the peer closing the connection (old 2.x 'include/socket.h' prefix and the current one), and NCCL's IB
completion error quoted in a sentence without its 'NCCL WARN' prefix. Logs are written in NCCL's and
nccl-tests' formats; hosts, pids and addresses are made up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.captures import nccl_log, smi_query, smi_table, topo
from gpuvet.captures.text import Line, clean
from tests.support.helpers import call, doctor_capture, found_causes

ABORT = "NCCL failure common.cu:921 'unhandled system error'\n"


@pytest.mark.parametrize("warn", [
    "gpu-a:6601:6625 [0] include/socket.h:385 NCCL WARN Net : Connection closed by remote peer\n",
    "gpu-a:6601:6625 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer "
    "gpu-b<52344>\n",
])
def test_a_connection_the_peer_closed_is_the_failure_the_abort_echoes(capsys: pytest.CaptureFixture[str],
                                                                     tmp_path: Path, warn: str) -> None:
    code, data = doctor_capture(capsys, tmp_path, warn + ABORT)
    assert code == 1
    causes = {c for c, _ in found_causes(data)}
    assert "collective_init_failed" in causes or "collective_runtime_error" in causes
    bench = [f for f in data["findings"] if f["cause"] == "collective_test_failed"]  # type: ignore[attr-defined]
    assert "Connection closed by remote peer" in str(bench[0]["evidence"]["first_error"])


@pytest.mark.parametrize("said", [
    "Both nodes run the test and it stops with NET/IB : Got completion from peer 10.0.3.7<41233> with status=12 "
    "opcode=0 len=0 vendor err 129 (Send) after a minute.\n",
    "the job printed NET/IB : Got completion from peer 10.0.3.7<41233> with error 12, opcode 0, len 0, "
    "vendor err 129 and hung\n",
])
def test_an_ib_completion_error_quoted_in_a_sentence_is_read(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                             said: str) -> None:
    code, data = doctor_capture(capsys, tmp_path, said)
    assert code == 1
    found = [f for f in data["findings"] if f["cause"] == "collective_runtime_error"]  # type: ignore[attr-defined]
    assert found and "NET/IB" in str(found[0]["fix"])


def test_a_sentence_naming_a_completion_without_nccls_words_is_no_log_line() -> None:
    lines = [Line(1, "We got completion from peer review with status pending."),
             Line(2, "NET/IB : Got completion from peer 10.0.3.7<41233> with status=0 opcode=0 len=8 (Recv)")]
    got = nccl_log.parse(lines)
    assert got.failures == [] and got.lines == 1  # a status of 0 is a success NCCL never warns of


def _socket_log(iface: str, hosts: tuple[str, ...], cut_prefix: str = "") -> str:
    """NCCL_DEBUG=INFO init lines of a job with InfiniBand disabled, one process per host."""
    rows = []
    for n, host in enumerate(hosts):
        rows += [f"{host}:{40 + n}:{90 + n} [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.",
                 f"{host}:{40 + n}:{90 + n} [0] NCCL INFO NET/Socket : Using [0]{iface}<0>"]
    return "NCCL version 2.18.5+cuda12.2\n" + "\n".join(rows) + "\n" + cut_prefix


def _wrong_interface(data: dict[str, object]) -> list[dict[str, object]]:
    return [f for f in data["findings"] if f["cause"] == "nccl_socket_wrong_interface"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("iface", ["ip6tnl0:fe80::e1:2ff:fe3:4%ip6tnl0", "tunl0:10.8.0.3", "lo:127.0.0.1",
                                   "eth0:fe80::5054:ff:fe12:3456%eth0", "eth1:169.254.3.7"])
def test_sockets_between_nodes_over_a_tunnel_or_link_local_address_are_a_warning(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, iface: str) -> None:
    code, data = doctor_capture(capsys, tmp_path, _socket_log(iface, ("node-a", "node-b")))
    (f,) = _wrong_interface(data)
    assert code == 1 and f["severity"] == "warn" and f["module"] == "node-a, node-b"
    assert iface.split(":")[0] in str(f["evidence"]["interfaces"])  # type: ignore[index]
    assert "NCCL_SOCKET_IFNAME" in str(f["fix"])


def test_a_host_named_only_by_a_cut_lines_prefix_makes_the_job_multi_node(capsys: pytest.CaptureFixture[str],
                                                                          tmp_path: Path) -> None:
    text = _socket_log("ip6tnl0:fe80::e1:2ff:fe3:4%ip6tnl0", ("node-a",), "node-b:51:301\n# [cut: the paste ends]\n")
    _, data = doctor_capture(capsys, tmp_path, text)
    assert _wrong_interface(data)


@pytest.mark.parametrize(("iface", "hosts"), [
    ("eth0:10.0.0.5", ("node-a", "node-b")),  # the nodes' own network: sockets chosen by the job, no fault
    ("veth0:2a02:6b8:fc1d:3606::600a", ("node-a", "node-b")),  # a container's interface with a routed address
    ("ip6tnl0:fe80::e1:2ff:fe3:4%ip6tnl0", ("node-a",)),  # one host: sockets carry nothing between its GPUs
])
def test_sockets_over_a_routed_interface_or_on_one_node_are_no_finding(capsys: pytest.CaptureFixture[str],
                                                                       tmp_path: Path, iface: str,
                                                                       hosts: tuple[str, ...]) -> None:
    _, data = doctor_capture(capsys, tmp_path, _socket_log(iface, hosts))
    assert not _wrong_interface(data) and not [
        f for f in data["findings"] if f["severity"] in ("warn", "critical")]  # type: ignore[attr-defined]


QUERY = ("$ nvidia-smi -i 0 --query-gpu=name,gpu_uuid,power.limit,power.max_limit,temperature.gpu "
         "--format=csv,noheader,nounits\n")
ROW = "GeForce RTX 2070, GPU-0a1b2c3d-0000-1111-2222-333344445555, 185.00, 240.00, 52"


@pytest.mark.parametrize("printed", [
    f"['{ROW}', '']",  # a program's print of the tool's stdout split into lines
    f'["{ROW}"]',
    ROW,  # the row itself
])
def test_a_noheader_row_a_program_printed_as_a_python_list_is_read_by_the_command_lines_columns(printed: str) -> None:
    text = QUERY + "items: [2]\n" + printed + "\n" + "['185.00,', '240.00,', '52']\n"  # the program's own mis-split
    (m,) = smi_query.parse(clean(text).lines).modules
    assert m.fields["Product Name"] == "GeForce RTX 2070" and m.fields["Temperature/GPU Current Temp"] == "52 C"


def test_a_list_of_several_strings_is_no_row() -> None:
    text = QUERY + "['GeForce RTX 2070,', 'GPU-0a1b2c3d-0000-1111-2222-333344445555,', '185.00,', '240.00,', '52']\n"
    assert smi_query.parse(clean(text).lines).modules == []


def test_a_limit_under_the_maximum_of_a_board_not_in_the_catalog_with_no_default_read_is_no_cap(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Consumer boards ship with their default under their maximum: without the default, no cap is proven."""
    _, data = doctor_capture(capsys, tmp_path, QUERY + ROW + "\n")
    assert "power_cap_low" not in {c for c, _ in found_causes(data)}
    catalog = ("$ nvidia-smi --query-gpu=name,pci.bus_id,power.limit,power.max_limit --format=csv,noheader\n"
               "NVIDIA H100 80GB HBM3, 00000000:18:00.0, 500.00 W, 700.00 W\n")  # a datacenter module ships at its max
    _, data = doctor_capture(capsys, tmp_path, catalog, name="h100.txt")
    assert "power_cap_low" in {c for c, _ in found_causes(data)}


HEADINGS = ("+-----------------------------------------------------------------------------+\n"
            "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |\n"
            "|-------------------------------+----------------------+----------------------+\n"
            "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
            "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n")


@pytest.mark.parametrize("end", ["", "# [cut: the excerpt ends here]\n",
                                 "| Fan  Temp  Perf  Pwr:Usage/\n"])  # cut mid-heading
def test_a_table_cut_after_its_headings_gives_its_versions_and_no_finding(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, end: str) -> None:
    text = "$ docker run --rm --gpus all cuda:12.2.0-base nvidia-smi\n\n" + HEADINGS + end
    code, data = doctor_capture(capsys, tmp_path, text)
    assert code == 0 and not data["findings"]
    path = tmp_path / "inv.txt"
    path.write_text(text)
    rc, out, _ = call(capsys, "inventory", "--from", str(path), "--json")
    inv = json.loads(out)
    assert rc == 0 and inv["software"]["driver_version"] == "535.104.05" and inv["modules"] == []


def test_a_banner_with_table_lines_after_it_that_are_no_rows_is_not_read_as_headings() -> None:
    text = HEADINGS + "|  0  garbage that is no module row                                  |\n"
    got = smi_table.parse(clean(text).lines)
    assert got.modules == [] and not got.claimed


def _topo_row(k: int, n: int, cell: str, nics: str) -> str:
    cells = ["X" if j == k else cell for j in range(n)]
    return f"GPU{k}\t" + "\t".join(cells) + f"\t{nics}\t48-95,144-191\t1\t\tN/A"


@pytest.mark.parametrize("first", [7, 5])
def test_topo_rows_pasted_from_a_later_gpu_without_their_header_are_read(first: int) -> None:
    """A paste of the last rows of an 8-GPU NVSwitch board's topo -m (no header, GPU0 never named): the rows'
    own X and NV# cells give the columns; a single row only where it reads NV# to every GPU before it."""
    text = "\n".join(_topo_row(k, 8, "NV18", "NODE\tPIX") for k in range(first, 8)) + "\n"
    text += "NIC0\tSYS\tSYS\tSYS\tSYS\tNODE\tNODE\tNODE\tNODE\t X \tPIX\n"
    got = topo.parse(clean(text).lines, "t.txt")
    # the NIC0 row's X in the first column after the GPUs names that column NIC0, as topo -m's header would
    assert got is not None and got.devices == [f"GPU{k}" for k in range(first, 8)] + ["NIC0"]
    assert all(got.cells[frozenset(("GPU7", f"GPU{j}"))] == "NV18" for j in range(7))


def test_a_single_row_without_nvlinks_to_every_gpu_before_it_is_no_matrix() -> None:
    text = _topo_row(3, 4, "PIX", "NODE") + "\n"
    assert topo.parse(clean(text).lines, "t.txt") is None
