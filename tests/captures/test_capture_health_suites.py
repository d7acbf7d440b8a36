"""Node health check suites' failure lines (issue 46, batch L's aznhc142 as a class): NHC prints
'ERROR:  nhc:  Health check failed:  <check>: <message>' (Azure's azurehpc-health-checks add 'FaultCode: NHCnnnn').
A measurement below the suite's threshold (NCCL/RCCL all-reduce bus bandwidth, IB write bandwidth, a GPU copy test)
is the suite's verdict on the node, a warning naming no module; another GPU or interconnect check that failed is
the same finding; a file system's or service's check is said, not judged; a GPU check whose message names a GPU
fault stays the scheduler's GPU shortfall it was."""

from __future__ import annotations

from pathlib import Path

from gpuvet.cli.app import main
from tests.support.helpers import capture_findings, capture_json

NODE = ("node_health_check_failed", None)
_FAILED = "ERROR:  nhc:  Health check failed:  "


def test_a_bandwidth_check_below_its_threshold_is_a_node_warning_on_no_module(tmp_path: Path) -> None:
    lines = [
        "check_nccl_allreduce: NCCL allreduce, BUS BW (expected >=440.0 GB/s, but measured 201.7 GB/s). FaultCode: NHC2010",
        "check_rccl_allreduce: RCCL allreduce, BUS BW (expected >=310 GB/s, but measured 95.2 GB/s). FaultCode: NHC2010",
        "check_nccl_allreduce_ib_loopback: NCCL allreduce, BUS BW (expected >=40.0 GB/s, but measured 3.9 GB/s). "
        "FaultCode: NHC2003",
        "check_ib_bw_gdr: ib_write_bw, IB=mlx5_ib3, mlx5_ib3, IB BW (expected > 380 Gbps, but measured 96.4 Gbps. "
        "FaultCode: NHC2003",
        "check_gpu_bw: Device to Host test on GPU 5 failed. Bandwidth 9.8 is less than 24. FaultCode: NHC2020",
    ]
    for line in lines:
        text = "```\n" + _FAILED + line + "\nHealth checks completed with exit code: 1.\n```\n"
        assert capture_findings(tmp_path, text) == {NODE: "warn"}, line
    data = capture_json(tmp_path, _FAILED + lines[0] + "\n")
    assert "201.7 GB/s" in str(data["findings"][0]["evidence"])  # the measurement, cited


def test_other_gpu_and_interconnect_checks_that_failed_are_the_same_finding(tmp_path: Path) -> None:
    for line in ("check_nvlink_status: GPU 3 has nvlinks inactive: 4 5. FaultCode: NHC2016",
                 "check_hw_topology: Topology mismatch! Expected to find mlx5_ib5. FaultCode: NHC2010",
                 "check_ib_link_flapping: IB link flapping detected. Devices: mlx5_ib2. FaultCode: NHC2005",
                 "check_gpu_ecc: GPU id 2: Row remap pending. FaultCode: NHC2007"):
        findings = capture_findings(tmp_path, "[2025-06-02 11:04:51] " + _FAILED + line + "\n")
        assert findings == {NODE: "warn"}, line


def test_a_gpu_count_short_or_a_gpu_lost_is_the_node_offering_fewer_gpus(tmp_path: Path) -> None:
    for line in ("check_gpu_count: Expected to see 8 but found 7. FaultCode: NHC2009",
                 "check_nv_healthmon: nvidia-healthmon: The GPU has fallen off the bus. FaultCode: NHC2010"):
        assert capture_findings(tmp_path, _FAILED + line + "\n") == {("scheduler_gpus_short", None): "warn"}, line


def test_a_check_of_no_gpu_or_interconnect_is_read_and_not_judged(tmp_path: Path) -> None:
    path = tmp_path / "nhc.txt"
    path.write_text(_FAILED + "check_fs_mount:  /scratch not mounted\n")
    assert main(["doctor", "--from", str(path), "--json"]) == 0  # read (not refused), nothing judged


def test_the_measurement_is_never_read_as_a_gpu_count_short(tmp_path: Path) -> None:
    """'GPU 5 failed' in a copy test's message names a GPU word; the measurement says what failed."""
    text = _FAILED + "check_gpu_bw: Host to Device test on GPU 0 failed. Bandwidth 3.1 is less than 24. FaultCode: NHC2020\n"
    assert capture_findings(tmp_path, text) == {NODE: "warn"}


def test_a_kubernetes_listing_names_its_node_in_the_finding(tmp_path: Path) -> None:
    """kubectl describe node's first line 'Name:' (a node's: 'Roles:' follows), its hostname label, or -o yaml's
    Hostname address names the node the GPU shortfall is on, as Slurm's NodeName= does."""
    describe = ("Name:               gpu-node-031\nRoles:              <none>\n"
                "Labels:             beta.kubernetes.io/arch=amd64\n"
                "Capacity:\n  cpu:                96\n  nvidia.com/gpu:     8\nAllocatable:\n  cpu:                96\n"
                "  nvidia.com/gpu:     7\n")
    labelled = describe.replace("Name:               gpu-node-031\n", "Name:               x\n").replace(
        "beta.kubernetes.io/arch=amd64", "kubernetes.io/hostname=gpu-node-044")
    yaml = ("status:\n  addresses:\n  - address: 10.0.0.7\n    type: InternalIP\n  - address: gpu-node-052\n"
            "    type: Hostname\n  allocatable:\n    nvidia.com/gpu: \"6\"\n  capacity:\n    nvidia.com/gpu: \"8\"\n")
    for text, node in ((describe, "gpu-node-031"), (labelled, "gpu-node-044"), (yaml, "gpu-node-052")):
        data = capture_json(tmp_path, text)
        assert [f["cause"] for f in data["findings"]] == ["scheduler_gpus_short"], node  # type: ignore[index]
        assert f"node {node}: nvidia.com/gpu: allocatable" in str(data["findings"]), node
