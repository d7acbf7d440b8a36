"""Issue 43: an nvidia-bug-report.log read a section at a time (captures/sections.py) gives what the
whole-file read gives, field by field, and holds one section's lines at a time. Reports are built here in
the bundle's own layout (its header, a rule of underscores, a blank, the section's title) from generated
kernel logs and corpus captures; the whole-file read is the same parse with the sectioned one turned off."""

from __future__ import annotations

import random
import tracemalloc
import xml.etree.ElementTree as ET
from dataclasses import fields
from pathlib import Path

import pytest

from gpuvet.captures import sections
from gpuvet.captures.read import FileCapture, parse_text
from gpuvet.captures.text import clean

CAPTURES = Path(__file__).resolve().parents[1] / "data" / "captures"
_HEAD = ("Start of NVIDIA bug report log file.  Please include this file, along\nwith a detailed description of "
         "your problem, when reporting a graphics\ndriver bug.\n\nnvidia-bug-report.sh Version: 34082325\n")
_RULE = "_" * 44
_NOISE = ("usb 1-1.{n}: new high-speed USB device number {k} using xhci_hcd",
          "systemd[1]: Started session-{k}.scope - Session {k} of User slurm.",
          "mlx5_core 0000:{n:02x}:00.0: mlx5_pcie_event:301: PCIe slot advertised sufficient power (75W).")
_XID = "NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics SM Warp Exception on (GPC 1, TPC 0, SM 0)"


def _report(*parts: tuple[str, str]) -> str:
    body = "".join(f"\n{_RULE}\n\n{title}\n\n{text.rstrip()}\n" for title, text in parts)
    return _HEAD + body + f"\n{_RULE}\n\nEnd of NVIDIA bug report log file.\n"


def _kern_log(lines: int, start: float, xids: int = 1, seed: int = 43) -> str:
    """A rotated kern.log: other drivers' lines with their stamps, the same Xid ``xids`` times (seeded)."""
    rnd = random.Random(seed)
    out = [f"[{start + i * 0.37:12.6f}] " + rnd.choice(_NOISE).format(n=rnd.randrange(1, 200), k=i) for i in range(lines)]
    for j in range(xids):
        out.insert((j + 1) * lines // (xids + 1), f"[{start + j:12.6f}] {_XID}")
    return "\n".join(out)


def _capture(name: str) -> str:
    """A corpus capture as its tool printed it: what clean() leaves of the post (header, fences, quote marks and
    the poster's cuts gone), as a bug report's section holds it."""
    return "\n".join(ln.text for ln in clean((CAPTURES / name).read_text()).lines if not ln.elision)


def _whole(text: str, monkeypatch: pytest.MonkeyPatch) -> FileCapture:
    with monkeypatch.context() as m:
        m.setattr(sections, "read_sections", lambda text, where: None)
        return parse_text(text, "nvidia-bug-report.log")


def _same(text: str, monkeypatch: pytest.MonkeyPatch, *, by_section: bool) -> FileCapture:
    """The parse as read.py gives it, the same as the whole-file read in every field; ``by_section``: whether
    the sectioned read gave it (else it handed the text back to the whole read)."""
    assert (sections.read_sections(text, "nvidia-bug-report.log") is not None) is by_section
    got, whole = parse_text(text, "nvidia-bug-report.log"), _whole(text, monkeypatch)
    for f in fields(FileCapture):
        if f.name == "xml" and got.xml is not None and whole.xml is not None:  # an Element is equal to itself alone
            assert (ET.tostring(got.xml.root), got.xml.claimed, got.xml.notes) == \
                (ET.tostring(whole.xml.root), whole.xml.claimed, whole.xml.notes)
            continue
        assert getattr(got, f.name) == getattr(whole, f.name), f.name
    return got


def test_the_same_xid_in_two_rotated_kernel_logs_reads_as_the_whole_file(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _report(("lspci -nnDvvv", _capture("real/lspci_jan183_4090_riser_gen1.txt")),
                   ("nvidia-smi -q", _capture("smi_q_h100_2gpu.txt")),
                   ("/var/log/kern.log.0", _kern_log(300, 100.0, xids=2)),
                   ("/var/log/kern.log.1", _kern_log(300, 900.0, xids=3, seed=44)))
    fc = _same(text, monkeypatch, by_section=True)
    assert [x.code for x in fc.kernel.xids] == [13] * 5 and len(fc.kernel.modules) == 1
    assert fc.notes[0] == "nvidia-bug-report: read kernel log, lspci -vvv, nvidia-smi -q inside it"
    first = text.split("\n").index(f"[{100.0:12.6f}] {_XID}") + 1
    assert min(fc.kernel.claimed) == first  # the file's own line numbers
    assert "other sections of the bug report, skipped" in fc.notes[-1]


def test_two_smi_q_sections_are_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """-q twice (issue 41: one module listed twice is one module) is weighed across the two: the whole read."""
    q = _capture("smi_q_h100_2gpu.txt")
    fc = _same(_report(("nvidia-smi -q", q), ("/var/log/kern.log", _kern_log(50, 1.0)), ("nvidia-smi -q", q)),
               monkeypatch, by_section=False)
    assert fc.smi is not None and len(fc.smi.modules) == 2


def test_a_kernel_log_pairing_lines_across_sections_is_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """A module fallen off the bus and its 'GPU at' UUID line are weighed against the whole log's Xids."""
    dmesg = _capture("dmesg_xid.txt")
    _same(_report(("/var/log/kern.log.0", dmesg), ("/var/log/kern.log.1", dmesg)), monkeypatch, by_section=False)


@pytest.mark.parametrize(("names", "by_section"), [
    (("real/lspci_jan183_4090_riser_gen1.txt", "real/xid_gpud1174_nvlink_145_149_94.txt",
      "real/nvlink_hpejapan_h100pcie_bridged.txt"), True),
    (("real/smi_q_gvisor10676_ecc_blocked.txt", "real/xid_gpud1174_nvlink_145_149_94.txt",
      "real/smi_q_gpustat135_clocks.txt"), False),  # -q twice
    (("real/smi_q_gvisor10676_ecc_blocked.txt", "real/kern_ogkm688_dgx_gpu_lost.txt"), False),  # driver events
    (("real/xid_gpud1174_nvlink_145_149_94.txt", "real/xid_akash244_43_31_94.txt"), False),  # 'GPU at' at the end
    (("real/nvlink_azhpc73_v100_inactive.txt", "smi_q_x_h100_8gpu.xml"), False),
    (("real/smi_q_gpud80_remapped_pending.txt", "real/kern_ogkm688_dgx_gpu_lost.txt", "topo_pcie_8gpu.txt"), False),
])
def test_corpus_captures_as_sections_read_as_the_whole_file(names: tuple[str, ...], by_section: bool,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Each section read alone, or the text read whole (topo -m's legend is read on past the banner; -q -x's
    span runs from the file's first '<', here nvlink's '<inactive>'): either way the whole-file read's parse."""
    _same(_report(*((name, _capture(name)) for name in names)), monkeypatch, by_section=by_section)


# One section's Lines are about 2.6x its text (tests/captures/test_reading_memory.py) and a section is an eighth
# of this report; beside them is the walk's own work, a few MB whatever the size (1.4x the text with sections four
# times these). Measured: 3.4x the text read a section at a time, 7.4x read whole (every line at once).
_PEAK = 4.5


def test_a_report_of_eight_sections_holds_one_sections_lines() -> None:
    text = _report(*((f"/var/log/kern.log.{k}", _kern_log(2500, 1000.0 * k, seed=k)) for k in range(8)))
    sections.read_sections(text, "warm")  # the first read compiles patterns and imports readers
    tracemalloc.start()
    try:
        fc = sections.read_sections(text, "nvidia-bug-report.log")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert fc is not None and len(fc.kernel.xids) == 8
    assert peak < _PEAK * len(text), f"peak {peak / len(text):.2f}x the text"
