"""Issue 46, batches AH/AI (R4C): fabric, scheduler and monitoring texts, each class on lines written here in the
tool's own form. NCCL's NET/IB async events (libibverbs' ibv_event_type_str names) on the HCA and host the line
names, the HCA's fatal event critical; an RDMA program's own local-QP completion error said as its request; Gaudi's
'no interfaces were detected' per accel; kubectl's daemonset READY column and an init container's exit; a node's
XidCriticalError condition and Xid 45 counted across nodes read, no fault; an NHC NVLink/P2P check on a PCIe GPU."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings, doctor_text


def _nccl_event(host: str, event: str, hca: str = "mlx5_0:1 ") -> str:
    return f"{host}:4711:4790 [0] transport/net_ib.cc:101 NCCL WARN NET/IB : {hca}Got async event : {event}\n"


def test_the_hcas_fatal_async_event_is_critical_on_its_host_and_hca(tmp_path: Path) -> None:
    # IBV_EVENT_DEVICE_FATAL ('local catastrophic error') is the HCA's failure; new (HCA named) and old forms
    log = _nccl_event("gpu-a07", "local catastrophic error") * 2 + _nccl_event("gpu-a08", "local catastrophic error", hca="")
    assert capture_findings(tmp_path, log) == {
        ("nic_firmware_fatal", "gpu-a07 mlx5_0:1"): "critical",
        ("nic_firmware_fatal", "gpu-a08"): "critical",
    }


def test_nccl_async_error_events_sit_on_the_hca_and_host_each_line_names(tmp_path: Path) -> None:
    log = (
        _nccl_event("node201", "port error")
        + _nccl_event("node202", "local access violation work queue error")
        + _nccl_event("node203", "SRQ catastrophic error", hca="mlx5_3:1 ")  # a queue's, not the HCA's
        + "node023:10214:10303 [0] NCCL INFO transport/net.cc:1137 -> 6\n"
    )  # another host's line after them
    assert capture_findings(tmp_path, log) == {
        ("collective_runtime_error", "node201 mlx5_0:1"): "warn",
        ("collective_runtime_error", "node202 mlx5_0:1"): "warn",
        ("collective_runtime_error", "node203 mlx5_3:1"): "warn",
    }


def test_nccl_async_events_no_failure_raises_stay_clear(tmp_path: Path) -> None:
    log = "".join(
        _nccl_event("gpu-a07", e)
        for e in (
            "GID table change",
            "client reregistration",
            "port active",
            "P_Key change",
            "communication established",
            "last WQE reached",
            "SRQ limit reached",
        )
    )
    assert capture_findings(tmp_path, log) == {}


def test_a_pasted_nccl_line_whose_source_github_made_a_link_keeps_its_own_host(tmp_path: Path) -> None:
    log = (
        "> node201:127799:127863 [0] transport/[net_ib.cc:101](http://net_ib.cc:101/) NCCL WARN NET/IB : "
        "mlx5_0:1 Got async event : port error\n"
        "> node023:10214:10303 [0] NCCL INFO transport/[net.cc:1137](http://net.cc:1137/) -> 6\n"
    )
    assert capture_findings(tmp_path, log) == {("collective_runtime_error", "node201 mlx5_0:1"): "warn"}


def _uccl(status: str) -> str:
    return (
        "[WARN gpu-host-01 1468470 1468470 pollOnce rdma/providers/ib_data_channel_impl.cc:202] pollOnce - "
        f"channel_id: 4, CQE error, wr_id=3, status={status}, opcode=1, byte_len=0, vendor_err=0x3, "
        "qp_num=0x2c91, wc_flags=0x0\n"
    )


def test_a_programs_own_local_qp_completion_error_is_its_request_and_fabric_errors_stay(tmp_path: Path) -> None:
    found = capture_findings(tmp_path, _uccl("2 (local QP operation error)") * 3)
    assert set(found.values()) == {"info"} and {c for c, _ in found} == {"rdma_request_local_error"}
    found = capture_findings(tmp_path, _uccl("12 (transport retry counter exceeded)"))
    assert {c for c, _ in found} == {"rdma_completion_error"} and set(found.values()) == {"warn"}
    kernel = "[ 8812.100201] mlx5_0/1: QP 51291 error: local length error (0x8e 0x0 0x0)\n"  # names no program
    assert set(capture_findings(tmp_path, kernel).values()) == {"warn"}


def test_gaudi_accels_with_no_network_interfaces_are_each_a_warn(tmp_path: Path) -> None:
    text = (
        "# /opt/habanalabs/qual/gaudi3/bin/manage_network_ifs.sh --status\n"
        "accel0\nno interfaces were detected\naccel1\nno interfaces were detected\n"
        "accel2\nhabanalabs0 up\n"
        "# /opt/habanalabs/qual/gaudi3/bin/manage_network_ifs.sh --up\n"
        "Warning: no habanalabs network interfaces were detected\n"
    )
    assert capture_findings(tmp_path, text) == {
        ("accel_scaleout_nics_absent", "accel0"): "warn",
        ("accel_scaleout_nics_absent", "accel1"): "warn",
    }


def test_gaudi_accels_listing_their_interfaces_are_read_clear(tmp_path: Path) -> None:
    text = "# manage_network_ifs.sh --status\naccel0\nenp25s0 enp26s0 enp27s0\naccel1\nenp28s0 enp29s0 enp30s0\n"
    code, data = doctor_text(tmp_path, text)
    assert code == 0 and data["findings"] == []


_DS = (
    "NAMESPACE                NAME                                 DESIRED   CURRENT   READY   UP-TO-DATE   "
    "AVAILABLE   NODE SELECTOR                                    AGE\n"
    "gpu-operator             nvidia-container-toolkit-daemonset   2         2         2       2            2"
    "           nvidia.com/gpu.present=true                      17m\n"
    "gpu-operator             {name:<36} 2         2         {ready}       2            {ready}"
    "           nvidia.com/gpu.present=true                      17m\n"
    "kube-system              calico-node                          3         3         2       3            2"
    "           kubernetes.io/os=linux                           33d\n"
)


def test_kubectl_get_ds_says_a_gpu_daemonset_not_ready_at_info(tmp_path: Path) -> None:
    found = capture_findings(tmp_path, _DS.format(name="nvidia-driver-daemonset", ready=0))
    assert found == {("gpu_stack_pod_not_ready", None): "info"}
    code, data = doctor_text(tmp_path, _DS.format(name="nvidia-device-plugin-daemonset", ready=2))
    assert code == 0 and data["findings"] == []  # every GPU daemonset ready; calico's 2/3 is not the GPU stack's


_DESCRIBE = (
    "Name:                 {pod}\nNamespace:            gpu-operator\nNode:                 gpu-node-3/10.0.0.13\n"
    "Init Containers:\n  k8s-driver-manager:\n    Image:         nvcr.io/nvidia/cloud-native/k8s-driver-manager"
    ":v0.6.2\n    State:          {state}\n{reason}"
    "    Last State:     Terminated\n      Reason:       Error\n      Exit Code:    1\n    Ready:          False\n"
)
_PODS = (
    "NAME                            READY   STATUS                  RESTARTS   AGE\n"
    "{pod}   0/1     Init:CrashLoopBackOff   6          12m\n"
)


def test_kubectl_describe_pod_an_init_container_that_exited_before_and_runs_again_is_info(tmp_path: Path) -> None:
    text = _DESCRIBE.format(pod="nvidia-driver-daemonset-x7k2p", state="Running", reason="")
    assert capture_findings(tmp_path, text) == {("gpu_stack_pod_not_ready", None): "info"}


def test_an_init_container_crash_looping_is_one_verdict_in_describe_pod_and_get_pods(tmp_path: Path) -> None:
    """describe pod's State Waiting/CrashLoopBackOff of an init container is what get pods shows as
    Init:CrashLoopBackOff (KL1): the same verdict, per operand (the driver: critical, FX68F; a validator: warn;
    DCGM: said)."""
    waiting = "      Reason:       CrashLoopBackOff\n"
    for pod in ("nvidia-driver-daemonset-x7k2p", "nvidia-operator-validator-pjhbf", "nvidia-dcgm-exporter-5xq2m"):
        described = capture_findings(tmp_path, _DESCRIBE.format(pod=pod, state="Waiting", reason=waiting))
        listed = capture_findings(tmp_path, _PODS.format(pod=pod))
        assert {c: s for (c, _), s in described.items()} == {c: s for (c, _), s in listed.items()}, pod
        assert set(described.values()) <= ({"critical"} if "driver-daemonset" in pod else {"warn"}), pod  # FX68F
    driver = _DESCRIBE.format(pod="nvidia-driver-daemonset-x7k2p", state="Waiting", reason=waiting)
    assert capture_findings(tmp_path, driver) == {("operator_driver_not_ready", None): "critical"}


def test_an_xid_node_condition_and_xid_45_counts_are_read_not_refused(tmp_path: Path) -> None:
    row = (
        "  XidCriticalError     True    Mon, 23 Jun 2025 18:45:43 +0000   Mon, 23 Jun 2025 18:44:57 +0000   "
        '{{"{xid}":true}}                  6e43a052-e544-467b-a972-63d7cd2ce80a\n'
    )
    code, data = doctor_text(tmp_path, row.format(xid=31))
    assert code == 0 and data["findings"] == []  # Xid 31: a program's page fault, the condition said
    assert capture_findings(tmp_path, row.format(xid=79)) == {("scheduler_gpus_short", None): "warn"}
    counts = (
        "On node r06-01 XID 45 is at 11,760, mid-pack for the rack:\n"
        "r06-12  13104        r06-08  11312\nr06-01  11760  <--   r06-06  10416\n"
    )
    code, data = doctor_text(tmp_path, counts)
    assert code == 0 and data["findings"] == []


_NHC = (
    "ERROR:  nhc:  Health check failed:  check_gpu_bw: P2P test on GPU 1 to GPU 0 failed. Bandwidth 256.63 is "
    "less than 335. FaultCode: NHC2020\n"
    "ERROR:  nhc:  Health check failed:  check_nvlink_status: GPU 0 has nvlinks inactive:     Link 4: Inactive\n"
)


def test_an_nhc_nvlink_check_on_a_pcie_gpu_is_the_checks_expectation(tmp_path: Path) -> None:
    pcie = capture_findings(tmp_path, "Node: Standard_NC80adis_H100_v5, 2x H100 NVL\n" + _NHC)
    assert pcie == {("health_check_expects_other_design", None): "info"}
    sxm = capture_findings(tmp_path, "Node: ND96isr_H100_v5, 8x H100 SXM\n" + _NHC)
    assert set(sxm.values()) == {"warn"}


def test_a_padded_line_beside_an_xid_45_count_is_read_not_backtracked(tmp_path: Path) -> None:
    # REV63: the count-row pattern had adjacent blank runs: a 12,000-blank tail took doctor 59 s (a hang here would
    # run into pytest's timeout); the rows beside 'Xid 45' are still read as counts
    text = "Xid 45 per node over the last day:\nnode001 120\nnode002 118\n" + "a 1 " + "b 2 " * 6 + " " * 20000 + "x\n"
    code, data = doctor_text(tmp_path, text)
    assert code != 2
    notes = " ".join(str(n) for n in data["notes"])
    assert "Xid 45 counted" in notes and "2 row(s) of counts per node" in notes


def test_an_nhc_bandwidth_that_is_no_number_is_read_not_a_crash(tmp_path: Path) -> None:
    # REV63: float('1.2.3') escaped doctor; a malformed figure is no P2P measurement to compare
    line = "ERROR: nhc: Health check failed: check_p2p: P2P Bandwidth 1.2.3 is less than 40\n"
    found = capture_findings(tmp_path, "NC40ads_H100_v5 H100 PCIe node\n" + line)
    assert found == {("node_health_check_failed", None): "warn"}
