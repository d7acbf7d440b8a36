"""Issue 46 (PCR): the PCI core's lines about a GPU (captures/pci_resources.py, pci_enum.py's claim wording), in
the kernel's own words (drivers/pci/pci.c, probe.c, setup-res.c, quirks.c, hotplug/pciehp_ctrl.c, pcie/dpc.c;
arch/x86's resource sanity check and PAT notes), each framed as dmesg, journalctl and syslog show it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.helpers import capture_findings, run

_FRAMES = ("[    3.141592]", "Dec 07 08:12:03 node1 kernel:", "Dec  7 08:12:03 node1 kernel:")
_GPU = (
    "{p} pci 0000:01:00.0: [10de:2204] type 00 class 0x030000 PCIe Legacy Endpoint\n"
    "{p} pci 0000:00:01.1: PCI bridge to [bus 01]\n"
)
GPU = "0000:01:00.0"


def _each(tmp_path: Path, body: str) -> list[dict[tuple[str, str | None], str]]:
    return [capture_findings(tmp_path, (_GPU + body).format(p=p)) for p in _FRAMES]


def test_a_gpu_function_that_never_answered_after_a_resume_or_reset_left_the_bus(tmp_path: Path) -> None:
    for line in (
        "pci 0000:01:00.0: not ready 1023ms after resume; giving up",
        "nvidia 0000:01:00.0: not ready 65535ms after FLR; giving up",
        "vfio-pci 0000:01:00.0: not ready 65535ms after bus reset; giving up",
        "pci 0000:01:00.0: not ready after 60000ms; giving up",
    ):
        for got in _each(tmp_path, "{p} " + line + "\n"):
            assert got == {("module_fell_off_bus", GPU): "critical"}, line


def test_a_slot_dpc_or_retraining_failure_on_the_port_above_a_gpu_is_placed_on_the_gpu(tmp_path: Path) -> None:
    cases = (
        (
            "{p} pcieport 0000:00:01.1: pciehp: Slot(1): Link Down\n"
            "{p} pcieport 0000:00:01.1: pciehp: Slot(1): Card not present\n",
            "module_fell_off_bus",
        ),
        ("{p} pcieport 0000:00:01.1: DPC: containment event, status:0x1f01 source:0x0000\n", "pcie_aer_fatal"),
        (
            "{p} pci 0000:00:01.1: broken device, retraining non-functional downstream link at 2.5GT/s\n"
            "{p} pci 0000:00:01.1: retraining failed\n",
            "module_fell_off_bus",
        ),
    )
    for body, cause in cases:
        for got in _each(tmp_path, body):
            assert got == {(cause, GPU): "critical"}, body


def test_a_port_with_no_gpu_below_it_is_not_judged(tmp_path: Path) -> None:
    other = (
        "{p} pci 0000:00:1c.0: PCI bridge to [bus 05]\n"
        "{p} pcieport 0000:00:1c.0: pciehp: Slot(8): Link Down\n"
        "{p} pcieport 0000:00:1c.0: pciehp: Slot(8): Card not present\n"
        "{p} pcieport 0000:00:1c.0: DPC: containment event, status:0x1f01 source:0x0000\n"
        "{p} pci 0000:05:00.0: not ready 1023ms after resume; giving up\n"
    )
    assert _each(tmp_path, other) == [{}, {}, {}]


def test_a_bar_the_firmware_left_outside_every_window_and_never_reassigned_is_the_gpus(tmp_path: Path) -> None:
    for line in (
        "pci 0000:01:00.0: can't claim BAR 1 [mem 0xc0000000-0xcfffffff 64bit pref]: no compatible bridge window",
        "pci 0000:01:00.0: BAR 1 [mem 0xc0000000-0xcfffffff 64bit pref]: can't claim; no compatible bridge window",
    ):
        for got in _each(tmp_path, "{p} " + line + "\n"):
            assert ("module_cannot_attach", GPU) in got, line
    later = "{p} pci 0000:01:00.0: BAR 1: assigned [mem 0x7800000000-0x7fffffffff 64bit pref]\n"
    rom = "{p} pci 0000:01:00.0: can't claim BAR 6 [mem 0xfff80000-0xffffffff pref]: no compatible bridge window\n"
    assert _each(
        tmp_path,
        "{p} pci 0000:01:00.0: can't claim BAR 1 [mem 0xc0000000-0xcfffffff 64bit pref]: no "
        "compatible bridge window\n" + later + rom,
    ) == [{}, {}, {}]


def test_the_classes_healthy_lines_stay_clear(tmp_path: Path) -> None:
    healthy = (
        "{p} pci 0000:00:01.1: bridge window [mem 0x00100000-0x000fffff 64bit pref] to [bus 01] add_size 200000\n"
        "{p} pci 0000:00:1c.0: bridge window [io  size 0x1000]: can't assign; no space\n"
        "{p} pci 0000:01:00.0: BAR 5 [io  size 0x0080]: failed to assign\n"
        "{p} pci 0000:01:00.0: ROM [mem 0xfff80000-0xffffffff pref]: can't claim; no compatible bridge window\n"
        "{p} pci 0000:01:00.0: BAR 1 [mem 0x7800000000-0x7fffffffff 64bit pref]: assigned\n"
        "{p} nvidia 0000:01:00.0: enabling device (0000 -> 0003)\n"
        "{p} pci 0000:01:00.0: not ready 1023ms after resume; waiting\n"
        "{p} pci 0000:01:00.0: ready 2047ms after resume\n"
        "{p} pcieport 0000:00:01.1: pciehp: Slot(1): Card present\n"
        "{p} pcieport 0000:00:01.1: pciehp: Slot(1): Link Up\n"
        "{p} x86/PAT: Xorg:1524 map pfn expected mapping type uncached-minus for [mem 0xdc000000-0xdc0fffff], "
        "got write-combining\n"
        "{p} vfio-pci 0000:01:00.0: No more image in the PCI ROM\n"
    )
    assert _each(tmp_path, healthy) == [{}, {}, {}]


def test_the_resource_sanity_check_the_nvidia_driver_causes_is_read_and_clear(tmp_path: Path) -> None:
    # x86's ioremap sanity check when the NVIDIA driver maps the legacy VGA window (an Unraid syslog's form)
    text = (
        "Jun 18 18:07:26 Tower kernel: resource sanity check: requesting [mem 0x000c0000-0x000fffff], which "
        "spans more than PCI Bus 0000:00 [mem 0x000c0000-0x000dffff window]\n"
        "Jun 18 18:07:26 Tower kernel: caller _nv000908rm+0x1bf/0x1f0 [nvidia] mapping multiple BARs\n"
    )
    assert capture_findings(tmp_path, text) == {}  # read (capture_findings fails on a refusal), no finding


def test_a_gpu_bar_another_driver_holds_is_a_host_setting_on_that_module(tmp_path: Path) -> None:
    # the boot framebuffer holding a passed-through GPU's BAR: vfio-pci cannot reserve it (pci.c, both wordings);
    # AGX2: the module is fine, the host's console holds its window (warn, module_bar_held), also where the log has
    # no enumeration line: vfio-pci's large prefetchable window is a GPU's aperture
    for line in (
        "vfio-pci 0000:01:00.0: BAR 1: can't reserve [mem 0xc0000000-0xcfffffff 64bit pref]",
        "vfio-pci 0000:01:00.0: BAR 1 [mem 0xc0000000-0xcfffffff 64bit pref]: can't reserve",
    ):
        for got in _each(tmp_path, "{p} " + line + "\n"):
            assert got == {("module_bar_held", GPU): "warn"}, line
        assert capture_findings(tmp_path, f"[   44.702115] {line}\n") == {("module_bar_held", GPU): "warn"}
    nic = "{p} vfio-pci 0000:05:00.0: BAR 0: can't reserve [mem 0xfb000000-0xfbffffff 64bit]\n"  # no GPU's function
    assert _each(tmp_path, nic) == [{}, {}, {}]


def test_the_older_kernels_port_service_prefixes_are_read_on_the_gpu_below(tmp_path: Path) -> None:
    # before 4.19 the hot-plug and DPC services printed as their own devices (pciehp_ctrl.c, dpc.c of 4.x)
    for body, cause in (
        ("{p} pciehp 0000:00:01.1:pcie004: Slot(1): Link Down\n", "module_fell_off_bus"),
        ("{p} pciehp 0000:00:01.1:pcie04: Card not present on Slot(1)\n", "module_fell_off_bus"),
        ("{p} dpc 0000:00:01.1:pcie008: DPC containment event, status:0x1f01 source:0x0000\n", "pcie_aer_fatal"),
    ):
        for got in _each(tmp_path, body):
            assert got == {(cause, GPU): "critical"}, body


def test_a_poster_quoting_a_function_that_never_came_back_or_a_bar_with_no_space_is_read(tmp_path: Path) -> None:
    for line, cause in (
        ("pci 0000:01:00.0: not ready 1023ms after resume; giving up", "module_fell_off_bus"),
        ("pci 0000:01:00.0: BAR 1: no space for [mem size 0x10000000 64bit pref]", "module_cannot_attach"),
        ("vfio-pci 0000:01:00.0: BAR 1: can't reserve [mem 0xc0000000-0xcfffffff 64bit pref]", "module_bar_held"),
    ):
        text = f"Since the BIOS update my server's dmesg shows `{line}` at every boot.\n"
        got = capture_findings(tmp_path, text)  # a poster's report: its severity is doctor's for quoted lines
        assert set(got) == {(cause, GPU)} and got[(cause, GPU)] in ("warn", "critical"), line
    asked = "Does anyone know what `pci 0000:01:00.0: not ready 1023ms after resume; giving up` means?\n"
    assert _causes(tmp_path, asked) == set()  # a question about the line is no report of it


def _causes(tmp_path: Path, text: str) -> set[str]:
    """The causes doctor finds in ``text``; none where it refused the file (nothing in it read)."""
    (tmp_path / "q.txt").write_text(text)
    code, out, _ = run(["doctor", "--from", str(tmp_path / "q.txt"), "--json"])
    return set() if code == 2 or not out.strip() else {f["cause"] for f in json.loads(out)["findings"]}
