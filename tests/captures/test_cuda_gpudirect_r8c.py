"""Issue 46 (R8C), on lines written in the tools' own words: LAMMPS' Geryon prints the CUDA driver API's CUresult by
number ('Cuda driver error 100 in call at file …', lib/gpu/geryon/nvd_macros.h: 100 CUDA_ERROR_NO_DEVICE, 803/804 the
forward-compatibility pair), and Kokkos throws the runtime's name after the failed call
('cudaGetDeviceCount(&m_cudaDevCount) error( cudaErrorNoDevice): …', the C++ terminate handler's what())."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings

_GERYON = "Cuda driver error {} in call at file '/opt/lammps/lib/gpu/geryon/nvd_device.h' in line 333.\n"
_KOKKOS = (
    "terminate called after throwing an instance of 'std::runtime_error'\n"
    "  what():  cudaGetDeviceCount(&m_cudaDevCount) error( cudaErrorNoDevice): no CUDA-capable device is detected"
    " /opt/kokkos/core/src/Cuda/Kokkos_Cuda_Instance.cpp:224\n"
)


def test_geryons_cuda_driver_error_numbers_name_their_kind(tmp_path: Path) -> None:
    assert capture_findings(tmp_path, _GERYON.format(100)) == {("no_modules_visible", None): "critical"}
    for code in (803, 804):
        assert capture_findings(tmp_path, _GERYON.format(code)) == {("driver_runtime_mismatch", None): "critical"}


def test_kokkos_thrown_runtime_name_is_the_programs_message_not_code(tmp_path: Path) -> None:
    assert capture_findings(tmp_path, _KOKKOS) == {("no_modules_visible", None): "critical"}
    # a source line quoting the same call is still code
    assert not capture_findings(tmp_path, "    cudaGetDeviceCount(&m_cudaDevCount); // cudaErrorNoDevice\n")


def test_fresh_aq_rows(tmp_path: Path) -> None:
    root = Path(__file__).parent.parent / "data" / "captures" / "fresh_aq"
    no_device = capture_findings(tmp_path, (root / "cuda_lammps2981_a40_no_device.txt").read_text())
    assert no_device.get(("no_modules_visible", None)) == "critical"
    compat = capture_findings(tmp_path, (root / "cuda_lammps4849_rtx5080_error804.txt").read_text())
    assert compat.get(("driver_runtime_mismatch", None)) == "critical"


_PERFTEST_CUDA = (
    "root@pod:~# ib_write_bw -d mlx5_1 -F -R -q 2 --use_cuda=0 10.0.0.1\n"
    "initializing CUDA\n"
    "cuMemAlloc() of a 262144 bytes GPU buffer\n"
    "allocated GPU buffer address at 0000010013000000 pointer=0x10013000000\n"
    "Couldn't allocate MR\n"
    "Failed to create MR\n"
)


def test_a_gpu_buffer_the_hca_will_not_register_is_gpudirects_peer_memory(tmp_path: Path) -> None:
    assert capture_findings(tmp_path, _PERFTEST_CUDA) == {("peer_memory_missing", "mlx5_1"): "warn"}
    gdr = "ibv_reg_mr(pd 0x23f8ec0, buf 0x7f88c7200000, size = 100, access_flags = 0x7)\nCouldn't register GPU MR\n"
    assert capture_findings(tmp_path, gdr) == {("peer_memory_missing", None): "warn"}
    # the same refusal on host memory is the test's own failure, not GPUDirect's
    host = "root@pod:~# ib_write_bw -d mlx5_1 -F -R -q 2 10.0.0.1\nCouldn't allocate MR\nFailed to create MR\n"
    assert capture_findings(tmp_path, host) == {("rdma_test_failed", "mlx5_1"): "warn"}


_MQNIC = (
    "[  146.546006] mqnic 0000:01:00.0: mqnic PCI probe\n"
    "[  146.546024] mqnic 0000:01:00.0:  Link capability: gen 3 x16\n"
    "[  146.546025] mqnic 0000:01:00.0:  Link status: gen 3 x{}\n"
)
_NVME = (
    "[    2.100000] nvme 0000:05:00.0: 15.752 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x2 link at "
    "0000:00:1d.0 (capable of 31.504 Gb/s with 8.0 GT/s PCIe x4 link)\n"
)


def test_corundums_own_link_lines_and_another_devices_pci_core_line(tmp_path: Path) -> None:
    """mqnic (modules/mqnic/mqnic_main.c) prints its capability and status; x4 of x16 quarters a 100G card's path.
    Another driver's pcie_print_link_status line (nvme) is that device's link: read, said, never a warn."""
    assert capture_findings(tmp_path, _MQNIC.format(4)) == {
        ("nic_pcie_may_limit_rate", "mqnic 0000:01:00.0 (0000:01:00.0)"): "warn"
    }
    assert not capture_findings(tmp_path, _MQNIC.format(16))
    assert not capture_findings(tmp_path, _NVME)


_NCCL = (
    "node1:25668:27396 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\n"
    "node1:25668:27396 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n"
    "node1:25668:27396 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1'\n"
)


def test_nccl_disabling_gpudirect_rdma_for_its_hcas_is_peer_memory_unless_the_job_chose_it(tmp_path: Path) -> None:
    assert capture_findings(tmp_path, _NCCL) == {("peer_memory_missing", "node1 mlx5_0, mlx5_1"): "warn"}
    chosen = "node1:25668:27396 [0] NCCL INFO NCCL_NET_GDR_LEVEL set by environment to LOC\n" + _NCCL
    assert not capture_findings(tmp_path, chosen)


_FAH = (
    "20:10:36:Enabled folding slot 01: READY gpu:0:GP104 [GeForce GTX 1070 Ti] 8186\n"
    "20:10:36:ERROR:No compute devices matched GPU #0 NVIDIA:7 GP104 [GeForce GTX 1070 Ti] 8186.  You may need to update"
    " your graphics drivers.\n"
)


def test_folding_at_home_finding_no_compute_device_for_its_gpu(tmp_path: Path) -> None:
    assert capture_findings(tmp_path, _FAH) == {("framework_sees_no_module", "GPU #0"): "warn"}
    docker = "Running the client in a docker container:\n" + _FAH
    assert capture_findings(tmp_path, docker) == {("container_gpu_access", "GPU #0"): "warn"}


def test_an_lspci_block_with_no_device_line_is_never_called_nvidias(tmp_path: Path) -> None:
    from gpuvet.captures import links
    from gpuvet.captures.text import Line

    text = (
        Path(__file__).parent.parent / "data" / "captures" / "fresh_aq" / "lspci_fejkon18_fpga_aer_badtlp.txt"
    ).read_text()
    parsed = links.parse_lspci([Line(i + 1, t) for i, t in enumerate(text.splitlines())])
    assert parsed is not None and parsed.notes and not any("NVIDIA" in n for n in parsed.notes)


def test_rocminfo_of_rocm_2_printing_hsa_inits_status_by_number(tmp_path: Path) -> None:
    """rocminfo before ROCm 3: 'hsa api call failure at line N, file: …rocminfo.cc. Call returned 4104' (0x1008,
    HSA_STATUS_ERROR_OUT_OF_RESOURCES from hsa_init: no GPU agent ROCr can use), never an application's out of memory."""
    line = "hsa api call failure at line 900, file: /src/rocminfo/rocminfo.cc. Call returned 4104\n"
    assert capture_findings(tmp_path, line) == {("framework_sees_no_module", None): "warn"}


def test_i915s_guc_answering_an_mmio_request_with_a_failure(tmp_path: Path) -> None:
    text = (
        "[   23.701132] i915 0000:00:02.0: [drm] *ERROR* GT0: GUC: mmio request 0x4100: failure 201/0\n"
        "[   23.701253] i915 0000:00:02.0: [drm] *ERROR* GT0: Failed to retrieve hwconfig table: -ENOENT\n"
    )
    assert capture_findings(tmp_path, text) == {("module_firmware_unresponsive", "0000:00:02.0"): "warn"}


def test_amdkfds_hardware_scheduler_preemption_timeout_is_the_queue_fence_timeout(tmp_path: Path) -> None:
    """kfd_device_queue_manager.c: the HWS did not preempt the queues; the same fact as 'qcm fence wait loop timeout'."""
    text = (
        "[82022.975850] amdgpu 0000:03:00.0: amdgpu: HIQ MQD's queue_doorbell_id0 is not 0, Queue preemption time out\n"
        "[82022.975855] amdgpu: Pasid 0x8011 DQM create queue type 0 failed. ret -62\n"
    )
    assert capture_findings(tmp_path, text) == {("module_fence_timeout", "0000:03:00.0"): "warn"}
