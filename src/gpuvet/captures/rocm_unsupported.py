"""rocm-smi's own ERROR and WARNING lines for what a card or an environment does not offer: ``ERROR: GPU[0]
: fclk clock is unsupported``, ``ERROR: 2 GPU[0]: ras: RSMI_STATUS_NOT_SUPPORTED: …``, ``ERROR: 9 GPU[0]: od
volt: The called function has not been implemented …``, its closing ``WARNING: One or more commands failed``,
and ``--json``'s ``WARNING: No JSON data to report``. Each is a field absent, never a fault: the fields are
named, the GPUs listed by rocm-smi's index, nothing judged (a rocm-smi -a whose ERROR lines are all that was
pasted is the tool's healthy output, not an unknown text)."""

from __future__ import annotations

import re

from gpuvet.captures.marks import holding
from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import Line

TOOL = "rocm-smi"
MARKERS = ("unsupported", "NOT_SUPPORTED", "not supported", "not been implemented", "No JSON data to report")
_UNSUPPORTED = re.compile(r"^\s*ERROR:\s+(?:\d{1,3}\s+)?GPU\[(?P<gpu>\d{1,4})\]\s*:\s*(?P<field>[^:]{1,60}?)\s*"
                          r"(?:\bis unsupported\b|:\s*RSMI_STATUS_NOT_SUPPORTED\b|:\s*The called function has not been "
                          r"implemented\b|:\s*[^:]{0,40}\bnot supported\b)")
_FAILED = re.compile(r"^\s*WARNING:\s+One or more commands failed\s*$")
_NO_JSON = re.compile(r"^\s*WARNING:\s+No JSON data to report\s*$")


def read(lines: list[Line], out: ListedParse) -> None:
    """The fields rocm-smi said a GPU does not offer, and --json's 'no data', read into ``out`` (said, not judged)."""
    fields: dict[str, list[str]] = {}
    worded = [lines[i] for i in holding(lines, ("ERROR:", "No JSON", "WARNING:"))]  # issue 43: not every line
    for ln in worded:
        if "ERROR:" in ln.text and (m := _UNSUPPORTED.match(ln.text)) is not None:
            fields.setdefault(m.group("gpu"), [])
            if m.group("field") not in fields[m.group("gpu")]:
                fields[m.group("gpu")].append(m.group("field"))
            out.claimed.add(ln.no)
    empty = [ln.no for ln in worded if "No JSON" in ln.text and _NO_JSON.match(ln.text)]
    if not fields and not empty:
        return
    out.claimed |= set(empty) | ({ln.no for ln in worded if _FAILED.match(ln.text)} if fields else set())
    listed = {m.label for m in out.modules}
    out.modules += [ListedModule(f"GPU[{g}]", tool=TOOL) for g in sorted(fields, key=int) if f"GPU[{g}]" not in listed]
    for gpu, names in sorted(fields.items(), key=lambda kv: int(kv[0])):
        out.notes.append(f"rocm-smi: GPU[{gpu}] does not offer {len(names)} field(s) here ({', '.join(names)}): "
                         "its 'not supported' ERROR lines are absent fields, not a fault")
    if empty:
        out.notes.append(f"rocm-smi --json: 'No JSON data to report' ({len(empty)} time(s)): it printed nothing to read")
    if TOOL not in out.kinds and not any(k.startswith(TOOL) for k in out.kinds):
        out.kinds.append(TOOL)
