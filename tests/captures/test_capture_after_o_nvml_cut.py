"""Batch O's NVML and cut-prefix faults as classes (issue 46): NVML's text for its code 15 ('GPU is lost') on any
program's line that names NVML (Slurm's gres/nvml plugin in slurmstepd or slurmd, a wrapper's nvml* call) is the
module lost from the bus, on the card the line names if any; and a pasted kernel line whose dev_printk prefix is
cut inside the driver's name ('dgpu 0000:2b:00.0: amdgpu: …') still places the module. Written in Slurm's
gpu_nvml wording and amdgpu's dev_printk prefix; bus ids, hosts, times and indices made up."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures import kernel, miner_lost
from gpuvet.captures.kernel import NO_BUS
from gpuvet.captures.text import clean
from tests.support.helpers import capture_findings, capture_json


def test_slurms_nvml_error_line_saying_gpu_is_lost_is_a_module_off_the_bus(tmp_path: Path) -> None:
    log = ("[2024-03-02T11:20:41.118] [8812.0] error: NVML: Failed to get usage(15): GPU is lost\n"
           "[2024-03-02T11:20:41.119] [8812.0] error: NVML: Failed to get usage(15): GPU is lost\n")
    got = miner_lost.parse(clean(log).lines)
    assert [(e.kind, e.module, e.count) for e in got.events] == [("gpu_lost", NO_BUS, 2)]
    assert capture_findings(tmp_path, log) == {("module_fell_off_bus", NO_BUS): "critical"}
    named = ("slurmd: error: _nvml_get_handle: Failed to get device handle for GPU 3: GPU is lost\n"
             "gpu_wrapper: nvmlDeviceGetTemperature() returned: GPU is lost\n")
    assert [e.module for e in miner_lost.parse(clean(named).lines).events] == ["GPU 3", NO_BUS]


def test_nvmls_other_errors_and_nvidia_smis_own_answer_are_not_this_reader(tmp_path: Path) -> None:
    for other in ("slurmstepd: error: NVML: Failed to get usage(999): Unknown Error",
                  "slurmd: error: NVML: Failed to get device count: Driver Not Loaded",
                  "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the system "
                  "to recover this GPU"):
        assert not miner_lost.parse(clean(other + "\n").lines).events, other


def test_a_kernel_line_cut_inside_the_drivers_name_still_names_its_module(tmp_path: Path) -> None:
    log = ("...\n"
           "pu 0000:0c:00.0: amdgpu: SMU is resuming...\n"
           "Mar 03 09:12:40 rig kernel: [drm] Fence fallback timer expired on ring sdma0\n"
           "Mar 03 09:12:41 rig kernel: [drm] Fence fallback timer expired on ring sdma0\n")
    got = kernel.parse(clean(log).lines)
    assert {e.module for e in got.events} == {"0000:0C:00.0"}
    assert capture_findings(tmp_path, log) == {("module_fence_timeout", "0000:0C:00.0"): "warn"}
    modules = capture_json(tmp_path, log, "inventory")["modules"]
    assert [m["bus_id"] for m in modules] == ["0000:0C:00.0"]  # type: ignore[index, union-attr]
    # a whole word that is not amdgpu's tail ('nvidia 0000:…', 'xhci_hcd 0000:…') places no AMD module
    other = "xhci_hcd 0000:0c:00.0: amdgpu: not a prefix\n[drm] Fence fallback timer expired on ring sdma0\n"
    assert {e.module for e in kernel.parse(clean(other).lines).events} != {"0000:0C:00.0"}


_TAGGED = ("[1,{r}]<stdout>:{h}:{p}:{p}1 [0] NCCL INFO NET/IB : No device found.\n"
           "[1,{r}]<stdout>:{h}:{p}:{p}1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.0.{r}<0>\n"
           "[1,{r}]<stdout>:{h}:{p}:{p}1 [0] NCCL INFO Using network Socket\n")


def test_open_mpi_rank_tags_prove_a_cross_node_job_only_where_the_lines_name_several_hosts(tmp_path: Path) -> None:
    two = _TAGGED.format(r=0, h="gn01", p=4410) + _TAGGED.format(r=1, h="gn02", p=5120)
    assert {c for c, _ in capture_findings(tmp_path, two)} == {"nccl_socket_fallback"}
    # ranks of several processes on one named host, a bare 'NET/Socket' (NCCL < 2.5 prints it for its bootstrap
    # on every process): the tags number ranks, not hosts, so no cross-node job is proven and nothing is judged
    one = "".join(f"[1,{r}]<stdout>:gn01:44{r}0:44{r}1 [{r}] NCCL INFO NET/Socket\n" for r in range(4))
    assert capture_findings(tmp_path, one) == {}
