"""The RMA packet calls each host by ONE pseudonym and holds its name nowhere: not in the
evidence's sources (``prodhost42.txt (nvidia-smi -q)``), not in a kernel line's host, not in a
captured file's name (newcomer run, finding 1)."""

from __future__ import annotations

import re
import shutil
import tarfile
from pathlib import Path

from gpuvet.cli.app import main
from gpuvet.ledger.packet import pseudonyms

CAPTURES = Path(__file__).parent.parent / "data" / "captures"
UUID = "GPU-1b0e7d3a-9c2f-4e61-8a77-5d3c9e2b4f22"
KERN = ("Dec  5 10:00:00 prodhost99.example.com kernel: [12345.678] NVRM: Xid (PCI:0000:2a:00): 48, pid=1, "
        "name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer.\n")


def _packet(tmp_path: Path, files: list[Path]) -> dict[str, str]:
    db, out = str(tmp_path / "lb.db"), tmp_path / "p.tar.gz"
    args = ["doctor", "--logbook", db]
    for f in files:
        args += ["--from", str(f)]
    main(args)
    assert main(["module", "rma", UUID, "-o", str(out), "--logbook", db]) == 0
    with tarfile.open(out) as tar:
        return {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]


def test_a_capture_named_after_its_host_leaves_the_name_nowhere_in_the_packet(tmp_path: Path, capsys) -> None:
    smi = tmp_path / "prodhost42.txt"
    shutil.copy(CAPTURES / "smi_q_h100_2gpu.txt", smi)
    members = _packet(tmp_path, [smi])
    assert len(members) == 10 and not [n for n, text in members.items() if "prodhost42" in text]
    findings = next(t for n, t in members.items() if n.endswith("findings.json"))
    assert '"source": "node-1.txt (nvidia-smi -q)"' in findings  # the evidence's source, the same pseudonym


def test_one_host_gets_one_pseudonym_in_every_member(tmp_path: Path, capsys) -> None:
    smi, kern = tmp_path / "prodhost99-smi.txt", tmp_path / "prodhost99-kern.log"
    shutil.copy(CAPTURES / "smi_q_h100_2gpu.txt", smi)
    kern.write_text(KERN)
    members = _packet(tmp_path, [smi, kern])
    everything = "".join(members.values())
    assert "prodhost99" not in everything and "example.com" not in everything
    kernel = next(t for n, t in members.items() if n.endswith("kernel_lines.txt"))
    assert " node-1 kernel: " in kernel  # the line's host, as its node is called
    captures = next(t for n, t in members.items() if n.endswith("captures.json"))
    assert {"node-1.txt", "node-1-kern.log"} <= set(re.findall(r'"file": "([^"]+)"', captures))
    host_pseudonyms = set(re.findall(r"node-\d+", captures + kernel))
    assert host_pseudonyms == {"node-1"}  # today: node-1, node-3 and node-4-kern.log


def test_pseudonyms_group_a_host_with_its_suffixed_names_and_never_reuse_a_real_name() -> None:
    got = pseudonyms(["prodhost99-smi", "gpuvet-ci", "prodhost99.example.com", "prodhost99", "node10"])
    assert got == {"prodhost99-smi": "node-1", "gpuvet-ci": "node-2", "prodhost99.example.com": "node-1",
                   "prodhost99": "node-1", "node10": "node-3"}
    assert pseudonyms(["node-2", "node-1"]) == {"node-2": "node-3", "node-1": "node-4"}  # a real name is no alias
