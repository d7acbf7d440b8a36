"""A rig report's GPU section: a markdown summary that restates nvidia-smi's fields per GPU (club-3090's
`rig report`, and any report written the same way), one bullet per GPU and sub-bullets for its power and
PCIe link:

    - **GPU 0:** NVIDIA GeForce RTX 3090 | 24576 MiB | driver 610.43.02 | VBIOS 94.02.42.80.88 | persistence=Enabled
      - **Power:** limit=250.00 W (default=370.00 W, max=390.00 W) | current_draw=144.23 W
      - **PCIe:** x4 lanes negotiated (GPU max x16, Gen up to 4) | bus 00000000:05:00.0

Each value is read into the `nvidia-smi -q` field it restates, so every check judges it as it judges -q's;
the report's own remarks (its warning signs and words) are not read: the figures are judged from the design.
A GPU whose bullets give no bus id is not a module (nothing to place it by) and is named in a note."""

from __future__ import annotations

import re

from gpuvet.captures.records import SmiTextModule
from gpuvet.captures.smi_text import SmiText, bus
from gpuvet.captures.text import MAX_MODULES, Line

# the bullet and the bold as printed, or taken off by the cleaning of a paste (captures/decorations.py)
_GPU = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*)?GPU (\d{1,4}):(?:\*\*)?\s+(\S[^|]*\|.*)$")
_SUB = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*)?(Power|PCIe):(?:\*\*)?\s+(\S.*)$")
_MIB = re.compile(r"^(\d{1,7}) MiB$")
_POWER = re.compile(r"\blimit=(\d+(?:\.\d+)?) W \(default=(\d+(?:\.\d+)?) W, max=(\d+(?:\.\d+)?) W\)"
                    r"(?:.*?\bcurrent_draw=(\d+(?:\.\d+)?) W)?")
_PCIE = re.compile(r"\bx(\d{1,2}) lanes negotiated \(GPU max x(\d{1,2})(?:, Gen up to (\d))?\)"
                   r"(?:.*?\bbus ((?:[0-9A-Fa-f]{4,8}:)?[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]))?")


def parse(lines: list[Line]) -> SmiText:
    """The GPUs of the report's GPU section (none where the lines hold no such bullets)."""
    out = SmiText()
    gpus: list[tuple[str, dict[str, str]]] = []
    for ln in lines:
        if (g := _GPU.match(ln.text)) is not None and _restates(g.group(2)):
            gpus.append((g.group(1), _head(g.group(2), out)))
            out.claimed.add(ln.no)
        elif (s := _SUB.match(ln.text)) is not None:
            fields = gpus[-1][1] if gpus else {}  # above every GPU bullet: an excerpt cut its GPU's own line
            if _sub(s.group(1), s.group(2), fields):
                out.claimed.add(ln.no)
                if not gpus:
                    gpus.append(("", fields))
    headless = [f.get("bus", "") for index, f in gpus if not index]
    if any(headless):
        out.notes.append(f"rig report: the sub-bullets above the first GPU bullet (its own line cut) name the GPU at "
                         f"{headless[0]}: listed without its name")
    unplaced = [index for index, f in gpus if "bus" not in f and index]
    # R9A: a GPU whose bus id the excerpt cut is listed by its index, never dropped (cuda_samples does the same)
    out.modules = [SmiTextModule(bus(f.pop("bus")) if "bus" in f else f"GPU {index}", f.get("Product Name", ""), f)
                   for index, f in gpus if "bus" in f or index][:MAX_MODULES]
    if out.modules:
        out.notes.append(f"rig report: {len(out.modules)} GPU(s) read from its GPU section (nvidia-smi's fields "
                         "restated; the report's own remarks not read)")
    if unplaced:
        out.notes.append(f"rig report: GPU {', '.join(unplaced)} give(s) no bus id: listed by index")
    return out


def _restates(text: str) -> bool:
    """Whether a 'GPU N: NAME | …' line's cells are the report's (memory, driver, VBIOS, persistence), not a
    one-line list of GPUs ('GPU 0: NAME | GPU 1: NAME', as an issue template's hardware line has it)."""
    cells = [c.strip() for c in text.split(" | ")[1:]]
    return any(_MIB.match(c) or c.startswith(("driver ", "VBIOS ", "persistence=")) for c in cells)


def _head(text: str, out: SmiText) -> dict[str, str]:
    """The GPU bullet's cells: its name, memory, driver, VBIOS and persistence mode."""
    cells = [c.strip() for c in text.split(" | ")]
    fields = {"Product Name": cells[0]}
    for cell in cells[1:]:
        if (m := _MIB.match(cell)) is not None:
            fields["FB Memory Usage/Total"] = f"{m.group(1)} MiB"
        elif cell.startswith("driver "):
            out.driver = cell.split()[1]
        elif cell.startswith("VBIOS "):
            fields["VBIOS Version"] = cell.split()[1]
        elif cell.startswith("persistence="):
            fields["Persistence Mode"] = cell.split("=", 1)[1]
    return fields


def _sub(what: str, text: str, fields: dict[str, str]) -> bool:
    """A Power or PCIe sub-bullet read into the GPU's fields; False where it is not in the report's form."""
    if what == "Power" and (p := _POWER.search(text)) is not None:
        for key, value in zip(("Current Power Limit", "Default Power Limit", "Max Power Limit", "Power Draw"),
                              p.groups(), strict=True):
            if value is not None:
                fields[f"GPU Power Readings/{key}"] = f"{float(value):.2f} W"
        return True
    if what == "PCIe" and (c := _PCIE.search(text)) is not None:
        fields["Link Width/Current"], fields["Link Width/Max"] = f"{c.group(1)}x", f"{c.group(2)}x"
        if c.group(3):
            fields["PCIe Generation/Max"] = c.group(3)
        if c.group(4):
            fields["bus"] = c.group(4)
        return True
    return False
