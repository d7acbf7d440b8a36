"""Issue 46 (FX68C): the kernel crashed in a GPU driver. An oops (mm/fault.c's 'BUG: kernel NULL pointer dereference,
address: …' and 'BUG: unable to handle page fault for address: …', arch/x86/kernel/dumpstack.c's 'Oops: 0000 [#1]',
traps.c's 'general protection fault …: 0000 [#1]') whose RIP or call trace ('func+0x1/0x2 [module]', show_trace's
frames) names a GPU driver's module is gpu_driver_oops (critical, the node): the kernel its CPU/PID/Comm line names,
the RIP and the driver's frame, the driver's line before it and the host (a serial console's 'login:' prompt; a
syslog's or journal's host column) said. Written in the kernel's own print formats: dmesg without a stamp (a serial
console), dmesg's '[ seconds]', syslog's 'Mon DD HH:MM:SS host kernel:' and journalctl -k's."""

from __future__ import annotations

import time
from pathlib import Path

from gpuvet.captures import kernel_driver_oops
from gpuvet.captures.kernel import KernelParse
from gpuvet.captures.text import Line
from tests.support.helpers import capture_findings, doctor_text

# an amdgpu process's exit freeing its PASID: the RIP in the kernel's IDA, the driver's frames below it
_AMD = [
    "amdgpu: Failed to create process VM object",
    "BUG: kernel NULL pointer dereference, address: 0000000000000008",
    "#PF: supervisor read access in kernel mode",
    "#PF: error_code(0x0000) - not-present page",
    "Oops: 0000 [#1] PREEMPT SMP NOPTI",
    "CPU: 12 PID: 4711 Comm: hipapp Tainted: G           OE      6.4.0-150600.23.25-default #1 SLE15-SP6",
    "Hardware name: Example Board X/Y, BIOS 1.2 01/02/2024",
    "RIP: 0010:ida_free+0x60/0x140",
    "Code: 48 8b 3c 24 4c 89 ee <4c> 0f a3 20",
    "RSP: 0018:ffffc90001a3bbe0 EFLAGS: 00010046",
    "Call Trace:",
    " <TASK>",
    " amdgpu_pasid_free_delayed+0x54/0x1f0 [amdgpu]",
    " amdgpu_driver_postclose_kms+0x1a0/0x330 [amdgpu]",
    " drm_file_free+0x1dd/0x230 [drm]",
    " drm_release+0x69/0xe0 [drm]",
    " __fput+0x8a/0x240",
    " do_exit+0x3a6/0xc10",
    " </TASK>",
    "Modules linked in: amdgpu(OE) amdttm(OE) amd_sched(OE) drm(E) nvme(E)",
    "CR2: 0000000000000008",
]


def _findings(tmp_path: Path, text: str) -> list[dict[str, object]]:
    code, answer = doctor_text(tmp_path, text)
    assert code == 1, answer
    return answer["findings"]  # type: ignore[no-any-return]


def _the_crash(found: list[dict[str, object]], host: str) -> str:
    crashes = [f for f in found if f["cause"] == "gpu_driver_oops"]
    assert len(crashes) == 1 and crashes[0]["severity"] == "critical" and crashes[0]["module"] == "node", found
    assert crashes[0].get("host") == host, crashes[0]
    log = str(crashes[0]["evidence"]["log"])  # type: ignore[index]
    for said in ("6.4.0-150600.23.25-default", "ida_free+0x60/0x140", "amdgpu_pasid_free_delayed+0x54/0x1f0 [amdgpu]",
                 "after 'amdgpu: Failed to create process VM object'", "task hipapp"):
        assert said in log, log
    return log


def test_a_serial_consoles_oops_in_amdgpu_is_the_node_crashing_in_the_driver(tmp_path: Path) -> None:
    text = "\n".join(["node0042 login: " + _AMD[0], *_AMD[1:]]) + "\n"
    found = _findings(tmp_path, text)
    _the_crash(found, "node0042")
    assert {f["cause"] for f in found} == {"gpu_driver_oops"}  # not the host's oops, nor the line before it a lead


def test_dmesg_syslog_and_journal_forms_read_alike(tmp_path: Path) -> None:
    stamped = [f"[ 8123.{k:06d}] {s}" for k, s in enumerate(_AMD)]
    forms = {
        "dmesg": ("\n".join(stamped), None),
        "syslog": ("\n".join(f"Dec  7 10:11:12 gpunode7 kernel: {s}" for s in stamped), "gpunode7"),
        "journal": ("\n".join(f"Dec 07 10:11:12 gpunode7 kernel: {s}" for s in _AMD), "gpunode7"),
    }
    for name, (text, host) in forms.items():
        found = _findings(tmp_path, text + "\n")
        _the_crash(found, host)  # type: ignore[arg-type]
        assert {f["cause"] for f in found} == {"gpu_driver_oops"}, (name, found)


def test_an_oops_at_a_rip_in_the_nvidia_driver_of_a_running_task(tmp_path: Path) -> None:
    text = ("[ 512.1] BUG: unable to handle page fault for address: ffffb1c2c0a1e000\n"
            "[ 512.1] #PF: supervisor write access in kernel mode\n"
            "[ 512.1] Oops: 0002 [#1] SMP NOPTI\n"
            "[ 512.1] CPU: 3 PID: 9120 Comm: python3 Tainted: P           OE     5.15.0-91-generic #101-Ubuntu\n"
            "[ 512.1] RIP: 0010:uvm_va_block_make_resident+0x8c/0x4d0 [nvidia_uvm]\n"
            "[ 512.1] Call Trace:\n"
            "[ 512.1]  uvm_va_block_service_locked+0x1d5/0x840 [nvidia_uvm]\n"
            "[ 512.1]  ---[ end trace 2c1a3b4d5e6f7a8b ]---\n")
    found = _findings(tmp_path, text)
    (crash,) = [f for f in found if f["cause"] == "gpu_driver_oops"]
    assert "RIP uvm_va_block_make_resident+0x8c/0x4d0 [nvidia_uvm]" in str(crash["evidence"])
    assert "5.15.0-91-generic" in str(crash["evidence"])
    assert "host_kernel_oops" not in {f["cause"] for f in found}


def test_a_general_protection_fault_in_i915s_trace(tmp_path: Path) -> None:
    text = ("[ 77.0] general protection fault, probably for non-canonical address 0xdead000000000122: 0000 [#1] SMP\n"
            "[ 77.0] CPU: 0 PID: 1543 Comm: Xorg Not tainted 6.1.0-18-amd64 #1 Debian 6.1.76-1\n"
            "[ 77.0] RIP: 0010:list_del_entry_valid+0x2b/0x90\n"
            "[ 77.0] Call Trace:\n"
            "[ 77.0]  i915_vma_unbind+0x5e/0x90 [i915]\n"
            "[ 77.0]  i915_gem_object_unbind+0x1c9/0x350 [i915]\n")
    found = _findings(tmp_path, text)
    assert [(f["cause"], f["severity"]) for f in found] == [("gpu_driver_oops", "critical")]
    assert "6.1.0-18-amd64" in str(found[0]["evidence"]) and "i915_vma_unbind+0x5e/0x90 [i915]" in str(found[0])


def test_an_oops_naming_no_gpu_driver_stays_the_hosts(tmp_path: Path) -> None:
    text = "\n".join(s for s in _AMD if "[amdgpu]" not in s and not s.startswith("amdgpu:")) + "\n"
    assert capture_findings(tmp_path, text) == {("host_kernel_oops", "node"): "critical"}


def test_a_drivers_warning_is_not_an_oops(tmp_path: Path) -> None:
    text = ("[ 9.1] WARNING: CPU: 5 PID: 1 at drivers/gpu/drm/amd/amdgpu/amdgpu_irq.c:631 amdgpu_irq_put+0x68/0x90 "
            "[amdgpu]\n[ 9.1] RIP: 0010:amdgpu_irq_put+0x68/0x90 [amdgpu]\n"
            "[ 9.1] Call Trace:\n[ 9.1]  gmc_v9_0_hw_fini+0x2a/0x60 [amdgpu]\n")
    assert "gpu_driver_oops" not in {c for c, _ in capture_findings(tmp_path, text)}


def test_an_oops_while_the_driver_loads_is_left_to_the_load_reader(tmp_path: Path) -> None:
    text = ("[ 4.2] BUG: kernel NULL pointer dereference, address: 0000000000000000\n"
            "[ 4.2] Oops: 0000 [#1] SMP NOPTI\n"
            "[ 4.2] CPU: 1 PID: 612 Comm: modprobe Tainted: P           O      5.15.0-91-generic #101-Ubuntu\n"
            "[ 4.2] RIP: 0010:nv_pci_probe+0x2f1/0x9a0 [nvidia]\n"
            "[ 4.2] Call Trace:\n[ 4.2]  do_init_module+0x5c/0x260\n")
    causes = {c for c, _ in capture_findings(tmp_path, text)}
    assert "gpu_driver_oops" not in causes and "module_init_failed" in causes, causes


def _cpu(lines: list[Line]) -> float:
    start = time.process_time()
    kernel_driver_oops.read(lines, KernelParse())
    return time.process_time() - start


def test_hostile_lines_cost_linear_time() -> None:
    """A 100 KB line of frame-like words and a long log of oops headers: CPU time grows with the input, not its
    square (ratios in the same run)."""
    def long(n: int) -> list[Line]:
        return [Line(1, "BUG: kernel NULL pointer dereference " + "a" * n + "+0x1/0x2 [amdgpu] RIP: " + "b" * 1000)]
    assert _cpu(long(100_000)) < 40 * max(_cpu(long(10_000)), 0.002)  # linear: 10x; quadratic: 100x
    block = ["Oops: 0000 [#1] SMP", "CPU: 1 PID: 2 Comm: x Tainted: G " + " " * 30 + "x", "nid1 login: amdgpu: x"]
    small = [Line(n + 1, block[n % 3]) for n in range(30_000)]
    big = [Line(n + 1, block[n % 3]) for n in range(120_000)]
    assert _cpu(big) < 12 * max(_cpu(small), 0.01)
