"""Kernel lines of drivers beyond NVIDIA's (issue 46 dev set dev_h_other): Intel's i915 and xe (a GPU hang and
its engine or chip reset, an engine reset that failed, a device declared wedged), FreeBSD's drm-kmod placing
its drmn0 device on the bus through pciconf, and the older amdgpu page fault wordings. Written in the drivers'
own wording (i915, xe, amdgpu, FreeBSD's vgapci/pciconf); bus ids, hosts, processes and times made up."""

from __future__ import annotations

import json
from pathlib import Path

from gpuvet.captures import kernel
from gpuvet.captures.text import clean
from gpuvet.cli.app import main


def _events(log: str) -> list[tuple[str, str, int]]:
    return [(e.kind, e.module, e.count) for e in kernel.parse(clean(log).lines).events]


def _run(capsys, tmp_path: Path, command: str, text: str) -> dict:
    path = tmp_path / "kernel.txt"
    path.write_text(text)
    main([command, "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return json.loads(out)


def test_an_i915_gpu_hang_its_engine_reset_and_a_failed_engine_reset() -> None:
    recovered = ("[ 5120.114] i915 0000:00:02.0: [drm] GPU HANG: ecode 12:1:85dffffb, in blender [4711]\n"
                 "[ 5120.116] i915 0000:00:02.0: [drm] Resetting rcs0 for preemption time out\n"
                 "[ 5120.118] i915 0000:00:02.0: Resetting chip for stopped heartbeat on rcs0\n")
    assert _events(recovered) == [("intel_gpu_hang", "0000:00:02.0", 1)]
    failed = ("May 02 10:11:12 ws kernel: i915 0000:00:02.0: [drm] *ERROR* GT0: GUC: Engine reset failed on 0:0 "
              "(rcs0) because 0x00000000\n"
              "May 02 10:11:12 ws kernel: i915 0000:00:02.0: [drm] GPU HANG: ecode 12:1:85dffffb, in Xorg [812]\n")
    assert _events(failed) == [("intel_engine_reset_failed", "0000:00:02.0", 1),
                               ("intel_gpu_hang", "0000:00:02.0", 1)]


def test_xe_declaring_a_device_wedged_needs_a_reset_and_lists_the_intel_module(capsys, tmp_path: Path) -> None:
    log = ("[   12.40] xe 0000:0a:00.0: [drm] *ERROR* GT0: load failed: status = 0x400000A0, time = 10ms\n"
           "[   12.41] xe 0000:0a:00.0: [drm] *ERROR* CRITICAL: Xe has declared device 0000:0a:00.0 as wedged.\n")
    data = _run(capsys, tmp_path, "doctor", log)
    assert [(f["cause"], f["module"], f["severity"]) for f in data["findings"]] == [
        ("module_needs_reset", "0000:0A:00.0", "critical")]
    inventory = _run(capsys, tmp_path, "inventory", log)
    assert [(m["model"], m["bus_id"]) for m in inventory["modules"]] == [("unknown Intel module", "0000:0A:00.0")]


def test_a_freebsd_i915_hang_without_a_bus_id_warns_on_an_intel_module(capsys, tmp_path: Path) -> None:
    log = ("[drm] GPU HANG: ecode 7:0:0x85fffffc, reason: Ring hung, action: reset\n"
           "drm/i915: Resetting chip after gpu hang\n")
    data = _run(capsys, tmp_path, "doctor", log)
    assert [(f["cause"], f["module"], f["severity"]) for f in data["findings"]] == [
        ("module_ring_reset_recovered", kernel.INTEL_NO_BUS, "warn")]


def test_freebsd_pciconf_places_the_drmn_device_of_an_amdgpu_failure(capsys, tmp_path: Path) -> None:
    log = ("drmn0: <drmn> on vgapci1\n"
           "[drm] initializing kernel modesetting (VEGA10 0x1002:0x687F 0x1002:0x0B36 0xC1).\n"
           "[drm:amdgpu_device_ip_init] hw_init of IP block <psp> failed -22\n"
           "drmn0: Fatal error during GPU init\n"
           "vgapci1@pci0:67:0:0:\tclass=0x030000 rev=0xc1 hdr=0x00 vendor=0x1002 device=0x687f\n")
    assert {m for _, m, _ in _events(log)} == {"0000:43:00.0"}  # pci0:67:0:0 is bus 67 (decimal): 0x43
    inventory = _run(capsys, tmp_path, "inventory", log)
    # the modesetting line's 0x1002:0x687F names the one module's product (pci.ids' words, issue 46 INV2)
    assert [(m["model"], m["bus_id"]) for m in inventory["modules"]] == [
        ("AMD Radeon RX Vega 56/64 (Vega 10 XL/XT)", "0000:43:00.0")]


def test_a_freebsd_amdgpu_fault_with_no_bus_anywhere_lists_the_drmn_device(capsys, tmp_path: Path) -> None:
    log = ("Jun  9 19:25:15 host kernel: drmn0: [gfxhub0] no-retry page fault (src_id:0 ring:24 vmid:3 pasid:32770, "
           "for process python3.11 pid 4242 thread python3.11 pid 4242)\n"
           "Jun  9 19:25:15 host kernel: drmn0: VM_L2_PROTECTION_FAULT_STATUS:0x00301031\n")
    assert {(k, m) for k, m, _ in _events(log)} == {("amd_page_fault", kernel.AMD_NO_BUS),
                                                   ("amd_vm_protection_fault", kernel.AMD_NO_BUS)}
    inventory = _run(capsys, tmp_path, "inventory", log)
    assert [(m["model"], m["bus_id"]) for m in inventory["modules"]] == [("unknown AMD module", None)]
    assert any("drmn0: the driver's name for it" in n for n in inventory["notes"])


def test_older_amdgpu_page_fault_wordings_are_page_faults() -> None:
    vega = ("drmn0: [mmhub] VMC page fault (src_id:0 ring:158 vm_id:0 pas_id:0)\n"
            "drmn0:   at page 0x0000700000000000 from 18\n")
    assert _events(vega) == [("amd_page_fault", kernel.AMD_NO_BUS, 1)]
    gcn = ("[ 88.1] amdgpu 0000:01:00.0: GPU fault detected: 146 0x0c80440c\n"
           "[ 88.1] amdgpu 0000:01:00.0:   VM_CONTEXT1_PROTECTION_FAULT_ADDR   0x00100d48\n")
    assert _events(gcn) == [("amd_page_fault", "0000:01:00.0", 1)]


def test_a_probe_that_failed_is_an_init_failure_of_the_module_it_names() -> None:
    """The PCI core's own line ('<driver>: probe of <bus id> failed with error N') and i915's 'Device
    initialization failed': the module never came up, named by the bus id the line gives."""
    amd = "[    4.61] amdgpu: probe of 0000:0b:00.0 failed with error -22\n"
    assert _events(amd) == [("amd_init_failed", "0000:0B:00.0", 1)]
    intel = ("[    3.20] i915 0000:00:02.0: [drm] *ERROR* Device initialization failed (-5)\n"
             "[    3.21] i915: probe of 0000:00:02.0 failed with error -5\n")
    assert _events(intel) == [("intel_init_failed", "0000:00:02.0", 2)]


def test_xe_words_a_hang_as_a_timed_out_job_and_an_engine_reset() -> None:
    log = ("[ 812.4] xe 0000:03:00.0: [drm] GT0: Timedout job: seqno=4294967169, lrc_seqno=4294967169, guc_id=2, "
           "flags=0x0 in llama-server [3311]\n"
           "[ 812.4] xe 0000:03:00.0: [drm] GT0: Engine reset: engine_class=ccs, logical_mask: 0x1, guc_id=2\n")
    assert _events(log) == [("intel_gpu_hang", "0000:03:00.0", 2)]
