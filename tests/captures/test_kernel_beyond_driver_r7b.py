"""Issue 46 (R7B), on lines written in the kernel's and the tools' own words: the PCI core's bridge window a GPU's
BAR needs left unplaced (drivers/pci/setup-bus.c, setup-res.c), a port's lone corrected receiver error (said in a
note, not silence), amdgpu's DisplayPort repeater (LTTPR) lines (display, never a GPU fault), a poster's
inline-code fragment of a page fault and amdgpu_cs_ioctl's cancelled-context parser line (no invented warn), and
i915's chip reset and context ban as Linux 4.x and FreeBSD's drm port print them."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings, doctor_text

_PORT = "[    0.195774] pci 0000:00:01.0: PCI bridge to [bus 01]\n"
_NEW = "[    0.195779] pci 0000:00:01.0: bridge window [mem size 0xc00000000 64bit pref]: can't assign; no space\n"
_OLD = (
    "[    0.311000] pci 0000:00:01.0: BAR 15: no space for [mem size 0xc00000000 64bit pref]\n"
    "[    0.311002] pci 0000:00:01.0: BAR 15: failed to assign [mem size 0xc00000000 64bit pref]\n"
)
_GPU = "[    0.162100] pci 0000:01:00.0: [10de:17fd] type 00 class 0x030200 PCIe Legacy Endpoint\n"


def test_a_gpu_sized_bridge_window_never_placed_is_the_module_that_cannot_attach(tmp_path: Path) -> None:
    for text in (_PORT + _NEW, _PORT + _OLD):
        assert capture_findings(tmp_path, text) == {("module_cannot_attach", "0000:00:01.0"): "critical"}
    # the GPU below the bridge named by its enumeration line: the finding is its own
    assert ("module_cannot_attach", "0000:01:00.0") in capture_findings(tmp_path, _GPU + _PORT + _NEW)


def test_a_bridge_window_placed_on_the_retry_or_a_small_one_is_the_healthy_boots_notice(tmp_path: Path) -> None:
    fixed = (
        _PORT
        + _NEW
        + "[    0.196001] pci 0000:00:01.0: bridge window [mem 0x4000000000-0x4bffffffff 64bit pref]: assigned\n"
    )
    small = (
        _PORT + "[    0.195779] pci 0000:00:1c.0: bridge window [mem size 0x00200000 64bit pref]: can't assign; no space\n"
    )
    for text in (fixed, small):
        assert not capture_findings(tmp_path, text)


_AER = (
    " pcieport 0000:00:1c.5: AER: Corrected error received: id=00e5\n"
    " pcieport 0000:00:1c.5: PCIe Bus Error: severity=Corrected, type=Physical Layer, id=00e5(Receiver ID)\n"
    " pcieport 0000:00:1c.5:   device [8086:9d15] error status/mask=00000001/00002000\n"
    " pcieport 0000:00:1c.5:    [ 0] Receiver Error         (First)\n"
)


def test_a_ports_lone_corrected_receiver_error_is_said_in_a_note_not_silent_and_no_finding(tmp_path: Path) -> None:
    code, answer = doctor_text(tmp_path, _AER)
    assert code == 0 and not answer["findings"]  # one alone is no burst (batch D's rule stands)
    assert any("port 0000:00:1C.5 (vendor 8086) logged 1 corrected PCIe error" in n for n in answer["notes"])


_LTTPR = "".join(
    f"[    9.2205{n}] amdgpu 0000:12:00.0: [drm] *ERROR* {said}\n"
    for n, said in enumerate(
        (
            "lttpr_caps phy_repeater_cnt is 0x0, forcing it to 0x80.",
            "LTTPR count is nonzero but invalid lane count reported. Assuming no LTTPR present.",
            "LTTPR count is nonzero but invalid lane count reported. Assuming no LTTPR present.",
        ),
        start=63,
    )
)


def test_amdgpu_displayport_repeater_lines_are_the_screens_path_not_a_gpu_fault(tmp_path: Path) -> None:
    assert not capture_findings(tmp_path, _LTTPR)


def test_a_posters_inline_fragment_of_a_page_fault_invents_no_warn_the_drivers_line_is_read(tmp_path: Path) -> None:
    prose = (
        "I get `[gfxhub] page fault` and then `[drm:amdgpu_cs_ioctl [amdgpu]] *ERROR* Failed to initialize parser -125!`\n"
    )
    assert not capture_findings(tmp_path, prose)
    quoted = (
        "amdgpu 0000:03:00.0: amdgpu: [gfxhub0] no-retry page fault (src_id:0 ring:24 vmid:8 "
        "pasid:32769, for process python3 pid 4242 thread python3 pid 4242)\n"
    )
    assert capture_findings(tmp_path, quoted) == {("module_page_fault", "0000:03:00.0"): "warn"}


def test_i915s_chip_reset_and_context_ban_as_linux_4_and_freebsd_print_them_are_the_hang(tmp_path: Path) -> None:
    text = "[drm:i915_reset_and_wakeup] resetting chip\n[drm:0xffffffff82a2b4bd] _ERROR_ gpu hanging too fast, banning!\n"
    assert capture_findings(tmp_path, text) == {
        ("module_ring_reset_recovered", "an Intel module, bus id not in the log"): "warn"
    }
    # the ban alone, as Linux 4.x's DRM_ERROR and FreeBSD's port print it
    for ban in (
        "[drm:i915_context_is_banned [i915]] *ERROR* gpu hanging too fast, banning!\n",
        "[drm:0xffffffff82a2b4bd] _ERROR_ gpu hanging too fast, banning!\n",
    ):
        assert set(capture_findings(tmp_path, ban)) == {
            ("module_ring_reset_recovered", "an Intel module, bus id not in the log")
        }


_GPF = (
    "[243209.352156] general protection fault, probably for non-canonical address 0x78d29c0722bf7aa1: 0000 [#1] SMP NOPTI\n"
    "[243209.352200] CPU: 21 PID: 389232 Comm: python3 Tainted: P           OE     5.15.0-83-generic #92-Ubuntu\n"
    "[243209.352226] Hardware name: Supermicro SYS-4029GP-TRT/X11DPG-OT-CPU, BIOS 3.4 08/02/2023\n"
    "[243209.352242] RIP: 0010:__kmalloc+0x111/0x330\n"
)


def test_the_host_kernels_own_oops_is_a_critical_on_the_node_its_task_rip_and_taint_said(tmp_path: Path) -> None:
    code, answer = doctor_text(tmp_path, _GPF)
    assert [(f["cause"], f["severity"], f.get("module")) for f in answer["findings"]] == [
        ("host_kernel_oops", "critical", "node")
    ]
    assert "RIP __kmalloc+0x111/0x330, tainted P OE" in str(answer["findings"][0])


def test_an_oops_in_a_gpu_drivers_code_is_that_drivers_not_the_hosts(tmp_path: Path) -> None:
    text = _GPF.replace("RIP: 0010:__kmalloc+0x111/0x330", "RIP: 0010:_nv011447rm+0x2d/0x90 [nvidia]")
    assert ("host_kernel_oops", "node") not in capture_findings(tmp_path, text)


def test_an_oops_right_after_a_gpu_drivers_fault_is_that_faults_aftermath(tmp_path: Path) -> None:
    xid = "[243100.000001] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n"
    assert ("host_kernel_oops", "node") not in capture_findings(tmp_path, xid + _GPF)


_DISPLAY = (
    "[drm:intel_dp_start_link_train [i915]] *ERROR* failed to train DP, aborting",
    "[drm:drm_atomic_helper_wait_for_flip_done [drm_kms_helper]] *ERROR* [CRTC:51:crtc-0] flip_done timed out",
    "amdgpu 0000:0b:00.0: [drm] *ERROR* dc_dmub_srv_log_diagnostic_data: DMCUB error - collecting diagnostic data",
    "[drm:0xffffffff82a5c1e0] _ERROR_ failed to train DP, aborting",
    "i915 0000:00:02.0: [drm] *ERROR* Link Training Unsuccessful",
)


def test_a_graphics_drivers_display_path_lines_are_read_and_said_never_warned_nor_refused(tmp_path: Path) -> None:
    for line in _DISPLAY:
        code, answer = doctor_text(tmp_path, line + "\n")
        assert code == 0 and not answer["findings"], line
        assert any("display-path line(s)" in n for n in answer["notes"]), line
