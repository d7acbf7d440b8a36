"""Collectives across nodes (issue 47): bound by what the node's NICs carry, at the share of the line
rate NCCL reaches per NIC — fitted on one published figure and checked on another, within 15 %."""

from __future__ import annotations

import json

import pytest
import yaml

from gpuvet.cli.app import main
from gpuvet.node.network import NET_EFFICIENCY

# NVIDIA/nccl-tests #119: 8 A100 SXM4 and 4 HDR (200G) NICs per node, 3 nodes; a maintainer: "~24 GB/s
# is the peak per 200G NIC ... 96 GB/s is the target"; the posted run reaches 95.7-96.7 GB/s (the fit)
A100_4X_HDR = {"name": "a100-4hdr", "modules": {"count": 8, "model": "A100-SXM-80GB"},
               "fabric": {"kind": "switched", "switch": "nvswitch0",
                          "link": {"kind": "nvlink", "width": 12, "lane_gbps": 25}},
               "pcie": {"gen": 4, "switches_per_socket": 2, "nics_per_switch": 1, "nic_model": "ConnectX-6"},
               "host": {"sockets": 2}}


def _busbw(capsys, node: str, nodes: int) -> dict:
    assert main(["plan", "collective", "--node", node, "--bytes", "8GiB", "--nodes", str(nodes), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_fit_four_hdr_nics_give_96_gbs(capsys, tmp_path):
    spec = tmp_path / "a100.yaml"
    spec.write_text(yaml.safe_dump(A100_4X_HDR))
    data = _busbw(capsys, str(spec), 3)
    assert data["modules"] == 24 and data["nodes"] == 3
    assert data["busbw"] == pytest.approx(96.2, rel=0.01)  # the run's 95.7-96.7 GB/s
    assert "limited by the NICs (4 x 200 Gb/s ConnectX-6)" in data["algorithm"]


def test_the_check_ndr_gives_46_to_48_gbs_per_nic_within_15_percent(capsys):
    """NVIDIA/nccl-tests #290, a maintainer: "For NDR @ 400Gbps you should see 46-48GB/s per NIC" —
    not used to fit."""
    data = _busbw(capsys, "hgx-h200-8", 2)
    per_nic = data["busbw"] / 8
    assert 46 * 0.85 <= per_nic <= 48 * 1.15 and abs(per_nic - 47) / 47 < 0.05
    assert NET_EFFICIENCY == 0.96
    # NVIDIA/nccl-tests #309: two HGX hosts, 8 GPU-NIC pairs, NVLS off: 368.76 GB/s — not used to fit
    assert abs(data["busbw"] - 368.76) / 368.76 < 0.15


def test_within_one_node_nothing_changes_and_the_fabric_bound_is_named(capsys):
    one = _busbw(capsys, "hgx-h200-8", 1)
    assert one["nodes"] == 1 and one["modules"] == 8 and "NICs" not in one["algorithm"]


def test_a_node_whose_nics_name_no_model_is_refused_for_several_nodes(capsys):
    code = main(["plan", "collective", "--node", "mesh-4", "--nodes", "2"])
    err = capsys.readouterr().err
    assert code == 2 and "--nodes" in err and "nic_model" in err
