"""Issue 46 (R7C): RDMA GID tables, ethtool's failures, ibstat values a paste cut, other vendors' smi tables, DCGM's
field listing and a failed P2P enable, each written in its tool's own format (MLNX_OFED's show_gids script: its
header, rows and 'n_gids_found=N'; ethtool.c's perror('Cannot get …'); infiniband-diags' ibstat; mthreads-gmi's
table; dcgmi dmon -l's 'Long Name / Short Name / Field ID'; the CUDA samples' simpleP2P), plus the batch AO rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_triples

AO = Path(__file__).parents[1] / "data" / "captures" / "fresh_ao"
GID_HEAD = "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4 \t\tVER\tDEV\n---\t----\t-----\t---\t\t\t\t\t------------ \t---\t---"


def _gid(dev: str, index: int, gid: str, ipv4: str, ver: str, netdev: str) -> str:
    return f"{dev}\t1\t{index}\t{gid}\t{ipv4 + ' ' if ipv4 else ''}\t{ver}\t{netdev}"


ROCE = "\n".join(
    [
        GID_HEAD,
        _gid("mlx5_0", 0, "fe80:0000:0000:0000:0e42:a1ff:fe5d:4db8", "", "v1", "ens1f0"),
        _gid("mlx5_0", 1, "fe80:0000:0000:0000:0e42:a1ff:fe5d:4db8", "", "v2", "ens1f0"),
        _gid("mlx5_0", 2, "0000:0000:0000:0000:0000:ffff:0a00:0005", "10.0.0.5", "v1", "ens1f0"),
        _gid("mlx5_0", 3, "0000:0000:0000:0000:0000:ffff:0a00:0005", "10.0.0.5", "v2", "ens1f0"),
        "n_gids_found=4",
    ]
)
IB = "\n".join([GID_HEAD, "mlx5_0\t1\t0\tfe80:0000:0000:0000:b8ce:f603:00a1:b2c4\t\t\tv1\t", "n_gids_found=1"])


@pytest.mark.parametrize("text", [ROCE, "$ show_gids\n" + ROCE, IB, ROCE.replace("\t", "    ")])
def test_show_gids_table_is_read_and_clean(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, found = doctor_triples(text, tmp_path, capsys)
    assert code != 2 and not [f for f in found if f[1] in ("warn", "critical")], found


def test_show_gids_says_the_roce_v2_ipv4_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doctor_triples(ROCE, tmp_path, capsys)
    from gpuvet.captures import side_tables
    from gpuvet.captures.text import Line

    got = side_tables.parse([Line(i + 1, t) for i, t in enumerate(ROCE.splitlines())])
    assert got.notes == ["show_gids: 4 GID(s) on 1 RDMA device(s); mlx5_0 port 1 (ens1f0): RoCE v2 IPv4 index 3 = 10.0.0.5"]


@pytest.mark.parametrize(
    "devices", ["", "\n$ ibv_devices\n    device          \t   node GUID\n    mlx5_0   98039b03003b0346"]
)
def test_no_gid_at_all_warns(devices: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, found = doctor_triples("# show_gids\n" + GID_HEAD + "\nn_gids_found=0" + devices, tmp_path, capsys)
    assert ("rdma_no_gid", "warn", "") in found and code == 1


@pytest.mark.parametrize(
    ("line", "warns"),
    [
        ("Cannot get device settings: No such device", True),
        ("Cannot get driver information: No such device", True),
        ("Cannot get device pause settings: No such device", True),
        ("Cannot get wake-on-lan settings: Operation not permitted", False),  # a container without CAP_NET_ADMIN
        ("Cannot get device settings: Operation not supported", False),  # a driver without the op
        ("Cannot get EEPROM data: Operation not supported", False),
    ],
)
def test_ethtool_failures(line: str, warns: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, found = doctor_triples(f"$ sudo ethtool -A ens1f0 rx off tx off\n{line}", tmp_path, capsys)
    assert code != 2
    assert (("nic_driver_failed", "warn", "ens1f0") in found) is warns, found
    assert warns or not [f for f in found if f[1] in ("warn", "critical")], found


def test_ibstat_value_cut_mid_word_is_not_judged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "CA 'mlx5_4'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Acti\n# [cut: excerpt ends here]"
    code, found = doctor_triples(text, tmp_path, capsys)
    assert code != 2 and not [f for f in found if f[0].startswith("nic_port_down")], found


def _ibstat(dev: str, guid: str, state: str, phys: str) -> str:
    return (
        f"CA '{dev}'\n\tCA type: MT4125\n\tNumber of ports: 1\n\tFirmware version: 22.43.2566\n\tNode GUID: {guid}\n"
        f"\tPort 1:\n\t\tState: {state}\n\t\tPhysical state: {phys}\n\t\tRate: 100\n\t\tLink layer: Ethernet"
    )


def test_a_card_with_every_ethernet_port_disabled_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    both = (
        _ibstat("mlx5_0", "0x5c25730300071900", "Down", "Disabled")
        + "\n"
        + _ibstat("mlx5_1", "0x5c25730300071901", "Down", "Disabled")
    )
    _, found = doctor_triples(both, tmp_path, capsys)
    assert {(c, m) for c, _, m in found} >= {
        ("nic_port_down_undeclared", "mlx5_0 port 1"),
        ("nic_port_down_undeclared", "mlx5_1 port 1"),
    }
    second_unused = (
        _ibstat("mlx5_0", "0x5c25730300071900", "Active", "LinkUp")
        + "\n"
        + _ibstat("mlx5_1", "0x5c25730300071901", "Down", "Disabled")
    )
    _, found = doctor_triples(second_unused, tmp_path, capsys)
    assert not [f for f in found if f[1] in ("warn", "critical")], found  # the card's second port, unused


GMI = """mthreads-gmi
Tue Mar 31 13:39:52 2026
---------------------------------------------------------------------
    mthreads-gmi:2.3.2           Driver Version:3.3.5-server
---------------------------------------------------------------------
ID   Name                 |PCIe                |%GPU  Mem
     Device Type   Perf   |Pcie Lane Width     |Temp  MPC Capable
                                               |      ECC Mode
+-------------------------------------------------------------------+
0    MTT S4000            |00000000:1b:00.0    |0%    2MiB(49152MiB)
     Physical      P0     |16x(16x)            |40C   YES
                                               |      On-die, EDC
+-------------------------------------------------------------------+"""
FIELDS = "\n".join(
    ["_" * 80, "          Long Name            Short Name       Field ID", "_" * 80]
    + [
        f"{n:<55}{s:<17}{i}"
        for n, s, i in [
            ("gpu_temp", "TMPTR", 140),
            ("power_usage", "POWER", 155),
            ("xid_errors", "XIDER", 230),
            ("thermal_violation", "TVIOL", 241),
        ]
    ]
)


@pytest.mark.parametrize("text", [GMI, FIELDS])
def test_other_tables_are_read_never_refused(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, found = doctor_triples(text, tmp_path, capsys)
    assert code != 2 and not [f for f in found if f[1] in ("warn", "critical")], found


def test_a_failed_peer_enable_names_the_pair(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (
        "Enabling peer access between GPU0 and GPU1...\nCUDA error at simpleP2P.cu:130 code=205"
        '(cudaErrorMapBufferObjectFailed) "cudaDeviceEnablePeerAccess(gpuid[1], 0)"'
    )
    _, found = doctor_triples(text, tmp_path, capsys)
    assert ("p2p_unavailable", "warn", "GPU 0–GPU 1 (CUDA devices, process view)") in found, found
    already = 'CUDA error at x.cu:9 code=704(cudaErrorPeerAccessAlreadyEnabled) "cudaDeviceEnablePeerAccess(1, 0)"'
    _, found = doctor_triples(already, tmp_path, capsys)
    assert not [f for f in found if f[0] == "p2p_unavailable"], found


@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("showgids_k8srdmasriov30_pod_no_gids_calico", {("rdma_no_gid", "warn", "")}),
        ("showgids_nccl1131_roce_gid_table", set()),
        ("showgids_spectrumscale4_cx6_nsdperf", set()),
        ("ethtool_fdiocsit3860_mlx5_nic_bad_state", {("nic_driver_failed", "warn", "enp94s0f0")}),
        ("mthreadsgmi_vllmomni2337_mtts5000", set()),
        ("dcgmi_slurmjobexporter4_field_list", set()),
        ("ibstat_sglang6823_h20_cx6_ports_down", {("nic_port_down_undeclared", "warn", f"mlx5_{i} port 1") for i in (0, 1)}),
        (
            "p2p_tinygrad29_rtx5090_mapbuffer_failed",
            {("p2p_unavailable", "warn", "GPU 0–GPU 1 (CUDA devices, process view)")},
        ),
    ],
)
def test_batch_ao_rows(
    name: str, want: set[tuple[str, str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (AO / f"{name}.txt").read_text(encoding="utf-8").rstrip("\n")
    code, found = doctor_triples(text, tmp_path, capsys)
    assert code != 2 and {f for f in found if f[1] in ("warn", "critical")} == want, found


# R11C: dcgmi stats --pid's box (dcgmi/ProcessStats.cpp) and the gddr6 tool's lines (olealgoritme/gddr6), written here
DCGMI_STATS = "\n".join(
    [
        "Successfully retrieved process info for PID: 4242. Process ran on 1 GPUs.",
        "+------------------------------------------------------------------------------+",
        "| GPU ID: 0                                                                    |",
        "+====================================+=========================================+",
        "|-----  Execution Stats  ------------+-----------------------------------------|",
        "| Start Time                     *   | Mon Jan  5 10:00:00 2026                |",
        "| No. of Conflicting Processes   *   | 0                                       |",
        "+-----  Performance Stats  ----------+-----------------------------------------+",
        "| Energy Consumed (Joules)           | 1200                                    |",
        "| Max GPU Memory Used (bytes)    *   | 0                                       |",
        "| SM Clock (MHz)                     | Avg: 1410, Max: 1980, Min: 210          |",
    ]
)
GDDR6 = "\n".join(
    [
        "Device: RTX 4090 GDDR6X (AD102 / 0x2684) pci=1:0:0",
        "Device: A6000 GDDR6 (GA102 / 0x2230) pci=41:0:0",
        "VRAM Temps: |  62°c |  54°c |",
    ]
)


@pytest.mark.parametrize("text", [DCGMI_STATS, "$ dcgmi stats --pid 4242 -v\n" + DCGMI_STATS, GDDR6, "# ./gddr6\n" + GDDR6])
def test_dcgmi_stats_and_gddr6_are_read_never_refused_nor_judged(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found = doctor_triples(text, tmp_path, capsys)
    assert code == 0 and not [f for f in found if f[1] in ("warn", "critical")], found
    from gpuvet.captures import side_tables
    from gpuvet.captures.text import Line

    notes = side_tables.parse([Line(i + 1, t) for i, t in enumerate(text.splitlines())]).notes
    assert any(n.startswith(("dcgmi stats: PID 4242 on 1 GPU(s), GPU ID(s) 0", "gddr6: 2 GPU(s)")) for n in notes)


@pytest.mark.parametrize("name", ["dcgmistats_dcgm268_l4_process_stats.txt", "gddr6_gddr6pr19_l40s_vram_temps.txt"])
def test_batch_av_rows_are_read_clean(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (AO.parent / "fresh_av" / name).read_text(encoding="utf-8")
    code, found = doctor_triples(text, tmp_path, capsys)
    assert code == 0 and not [f for f in found if f[1] in ("warn", "critical")], found
