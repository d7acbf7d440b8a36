"""Issue 46 (REV68a on FX68C): gpu_driver_oops, mended. Each host's oops is its own critical finding (a syslog of two
hosts: the second's no longer a warn); ssh's 'Last login: … from …' names no host, a shell prompt
'[root@gpu17 ~]#' does; ppc64's oops ('Oops: Kernel access of bad area, sig: 11 [#1]', 'NIP [c008…] f+0x…
[nvidia]'); frames the unwinder marked '? ' are not the driver's crash where a reliable frame names a module; an
oops quoted in a commit message is no crash; one list of GPU modules ([panthor] is a GPU driver's). Inputs written
from the kernel's print formats (dumpstack.c, traps.c, arch/powerpc/kernel/traps.c, show_trace's '? ')."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import doctor_text


def _syslog(host: str, stamp: str, rip: str, comm: str) -> str:
    lead = f"Dec  7 {stamp} {host} kernel: [ 100.1] "
    return "".join(lead + t + "\n" for t in (
        "BUG: kernel NULL pointer dereference, address: 0000000000000008", "Oops: 0000 [#1] SMP NOPTI",
        f"CPU: 3 PID: 4242 Comm: {comm} Tainted: P           OE      5.15.0-91-generic #101-Ubuntu",
        f"RIP: 0010:{rip}", "---[ end trace 0000000000000000 ]---"))


def _crashes(tmp_path: Path, text: str) -> list[dict[str, object]]:
    code, answer = doctor_text(tmp_path, text)
    return [f for f in answer.get("findings", []) if f["cause"] == "gpu_driver_oops"]


def test_each_hosts_oops_is_its_own_critical_finding(tmp_path: Path) -> None:
    text = (_syslog("node-a1", "10:00:01", "nv_rm_alloc+0x4b/0x60 [nvidia]", "python3")
            + _syslog("node-b2", "11:00:01", "i915_vma_pin+0x11/0x90 [i915]", "Xorg"))
    crashes = _crashes(tmp_path, text)
    assert {(f["host"], f["severity"]) for f in crashes} == {("node-a1", "critical"), ("node-b2", "critical")}, crashes
    code, answer = doctor_text(tmp_path, text)
    assert not [f for f in answer["findings"] if f["severity"] == "warn"], answer["findings"]


def test_two_distinct_oopses_of_one_host_are_both_said(tmp_path: Path) -> None:
    text = (_syslog("node-a1", "10:00:01", "nv_rm_alloc+0x4b/0x60 [nvidia]", "python3")
            + _syslog("node-a1", "11:00:01", "i915_vma_pin+0x11/0x90 [i915]", "Xorg"))
    crashes = _crashes(tmp_path, text)
    assert len(crashes) == 1 and crashes[0]["evidence"]["times"] == 2, crashes  # type: ignore[index]
    assert "i915_vma_pin" in str(crashes[0]["evidence"]["log"]), crashes  # type: ignore[index]


_AMD_DMESG = [
    "[ 51.1] amdgpu 0000:c1:00.0: amdgpu: Failed to create process VM object",
    "[ 51.2] BUG: kernel NULL pointer dereference, address: 0000000000000008",
    "[ 51.2] Oops: 0000 [#1] SMP NOPTI",
    "[ 51.2] CPU: 3 PID: 4242 Comm: python3 Tainted: G           OE      5.14.0-284.11.1.el9_2.x86_64 #1",
    "[ 51.2] RIP: 0010:ida_free+0xc2/0x140",
    "[ 51.2] Call Trace:",
    "[ 51.2]  amdgpu_pasid_free_delayed+0x116/0x1f0 [amdgpu]",
]


def test_ssh_last_login_names_no_host_a_shell_prompt_does(tmp_path: Path) -> None:
    lastlogin = "Last login: Tue Dec  8 09:12:44 2026 from 10.1.2.3\n"
    crashes = _crashes(tmp_path, lastlogin + "\n".join(_AMD_DMESG) + "\n")
    assert len(crashes) == 1 and crashes[0].get("host") in (None, ""), crashes
    crashes = _crashes(tmp_path, lastlogin + "[admin@node-c3 ~]# dmesg\n" + "\n".join(_AMD_DMESG) + "\n")
    assert len(crashes) == 1 and crashes[0].get("host") == "node-c3", crashes


def test_a_ppc64_oops_in_the_nvidia_module_is_read(tmp_path: Path) -> None:
    text = "".join(f"[ 77.1] {t}\n" for t in (
        "Unable to handle kernel paging request for data at address 0x00000010",
        "Faulting instruction address: 0xc008000001234560",
        "Oops: Kernel access of bad area, sig: 11 [#1]",
        "LE PAGE_SIZE=64K MMU=Radix SMP NR_CPUS=2048 NUMA PowerNV",
        "CPU: 8 PID: 100 Comm: cudaapp Tainted: P           OE    4.18.0-305.el8.ppc64le #1",
        "NIP:  c008000001234560 LR: c008000001234500 CTR: c000000000100000",
        "NIP [c008000001234560] _nv001122rm+0x40/0x100 [nvidia]",
        "LR [c008000001234500] _nv001121rm+0x20/0x60 [nvidia]",
        "Call Trace:",
        "[c000001fff000000] [c008000001234500] _nv001121rm+0x20/0x60 [nvidia] (unreliable)",
        "---[ end trace 0123456789abcdef ]---"))
    crashes = _crashes(tmp_path, text)
    assert len(crashes) == 1 and crashes[0]["severity"] == "critical", crashes
    assert "RIP _nv001122rm+0x40/0x100 [nvidia]" in str(crashes[0]["evidence"]["log"]), crashes  # type: ignore[index]


def test_unreliable_frames_are_not_the_drivers_crash(tmp_path: Path) -> None:
    text = "".join(f"[ 9.1] {t}\n" for t in (
        "general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] SMP NOPTI",
        "CPU: 2 PID: 77 Comm: kworker/2:0 Tainted: P           OE     6.5.0-27-generic #28-Ubuntu",
        "RIP: 0010:__list_del_entry_valid+0x2a/0x90", "Call Trace:", " <TASK>",
        " ? uvm_va_block_free+0x4c/0x90 [nvidia_uvm]", " ? die_addr+0x36/0x90",
        " ixgbe_clean_rx_irq+0x44/0x90 [ixgbe]", " </TASK>"))
    code, answer = doctor_text(tmp_path, text)
    causes = {f["cause"] for f in answer["findings"]}
    assert "gpu_driver_oops" not in causes and "host_kernel_oops" in causes, causes
    only_q = text.replace(" ixgbe_clean_rx_irq+0x44/0x90 [ixgbe]", " net_rx_action+0x44/0x90")
    assert len(_crashes(tmp_path, only_q)) == 1  # no reliable frame names a module: the '? ' one is all there is


def test_an_oops_quoted_in_a_commit_message_is_no_crash(tmp_path: Path) -> None:
    text = ("commit 0123456789abcdef0123\nAuthor: A Dev <a@example.org>\n\n    drm/amdgpu: fix a crash\n\n"
            "    BUG: kernel NULL pointer dereference, address: 0000000000000010\n"
            "    RIP: 0010:ida_free+0xc2/0x140\n    Call Trace:\n"
            "     amdgpu_pasid_free_delayed+0x116/0x1f0 [amdgpu]\n\n    Signed-off-by: A Dev <a@example.org>\n")
    assert _crashes(tmp_path, text) == []


def test_a_panthor_oops_is_a_gpu_drivers(tmp_path: Path) -> None:
    text = "".join(f"[ 12.1] {t}\n" for t in (
        "Unable to handle kernel NULL pointer dereference at virtual address 0000000000000030",
        "Internal error: Oops: 0000000096000004 [#1] PREEMPT SMP",
        "CPU: 1 PID: 90 Comm: vkcube Not tainted 6.10.0 #1",
        "pc : panthor_gem_create+0x20/0x140 [panthor]", "Call trace:",
        " panthor_gem_create+0x20/0x140 [panthor]", "---[ end trace 0000000000000000 ]---"))
    code, answer = doctor_text(tmp_path, text)
    causes = {f["cause"] for f in answer["findings"]}
    assert "gpu_driver_oops" in causes and "host_kernel_oops" not in causes, causes


def test_hostile_prompts_cost_linear_time() -> None:
    """100 KB shell and console prompt look-alikes before an oops: CPU time grows with them (a ratio)."""
    import time

    from gpuvet.captures import kernel_driver_oops
    from gpuvet.captures.kernel import KernelParse
    from gpuvet.captures.text import Line

    def cost(n: int) -> float:
        lines = [Line(1, "[root@" + "a" * n + " ~]# dmesg"), Line(2, "b@" + "c:" * n + "# x"),
                 Line(3, "d" * n + " login: Mon"), Line(4, "BUG: kernel NULL pointer dereference"),
                 Line(5, "RIP: 0010:f+0x1/0x2 [nvidia]")]
        start = time.process_time()
        kernel_driver_oops.read(lines, KernelParse())
        return time.process_time() - start
    assert cost(100_000) < 40 * max(cost(10_000), 0.002)
