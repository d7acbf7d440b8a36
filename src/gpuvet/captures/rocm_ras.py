"""``rocm-smi --showrasinfo`` (issue 46): each GPU's RAS blocks (UMC, SDMA, GFX, MMHUB, XGMI_WAFL, …), their
ECC state and error counts, in both layouts rocm-smi has printed.

- ROCm 5.x and later: a ``GPU[0]:  RAS INFO`` title, a header row ``Block  Status  <count> <count>`` and one
  row per block (``UMC  ENABLED  0  0``). The version whose header reads ``uncorrectable err  correctable
  err`` prints its rows correctable count first (its source appends the correctable count, then the
  uncorrectable one, under that header): the counts are taken in the order the rows carry them. A header
  that names the columns otherwise (``Correctable … Uncorrectable …``) is read by its names.
- ROCm 4.x and earlier: ``GPU[0] : Block UMC is: ENABLED`` then the block's sysfs counters ``ue: 0`` and
  ``ce: 0`` (the second often without the ``GPU[0] :`` prefix, as the tool printed the file's two lines).

Each block gives ``RAS/ECC_BLOCK_STATE/<BLOCK>`` and ``<BLOCK>/UNCORRECTABLE_COUNT`` / ``CORRECTABLE_COUNT``
fields on the GPU's module, judged in captures.verdicts like amd-smi's (an uncorrectable count above zero
is critical; a correctable count alone is said, not judged)."""

from __future__ import annotations

import re

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import Line

MARKERS = ("RAS INFO", "RAS Info", " is: ")
_TITLE = lazy(r"^\s*GPU\[(\d{1,4})\]\s*:\s*RAS INFO\s*$")
_HEAD = lazy(r"^\s*Block\s+Status\s+(\S.*?)\s*$", re.I)
_ROW = lazy(r"^\s*([A-Z][A-Z0-9_]{1,15})\s+([A-Z_/]+(?: ERROR)?)(?:\s+(\d+|N/A))?(?:\s+(\d+|N/A))?\s*$")
_OLD_STATE = lazy(r"^\s*GPU\[(\d{1,4})\]\s*:\s*Block\s+([A-Za-z0-9_]+)\s+is:\s*([A-Za-z_]+)\s*$")
_OLD_COUNT = lazy(r"^\s*(?:GPU\[(\d{1,4})\]\s*:\s*)?(ue|ce):\s*(\d+)\s*$")
_SPACER = lazy(r"^\s*[=_]{6,}(?:\s*RAS Info\s*[=_]*)?\s*$")
TOOL = "rocm-smi"


def read(lines: list[Line], out: ListedParse) -> None:
    """Every GPU's RAS blocks in the lines, added as rocm-smi's modules ``GPU[n]`` (merged with -a's)."""
    per: dict[str, dict[str, str]] = {}
    gpu: str | None = None
    order: tuple[str, str] | None = None
    block: str | None = None
    claimed: set[int] = set()
    for ln in lines:
        if (title := _TITLE.match(ln.text)) is not None:
            gpu, order, block = title.group(1), None, None
            claimed.add(ln.no)
        elif gpu is not None and order is None and (head := _HEAD.match(ln.text)) is not None:
            order = _order(head.group(1))
            claimed.add(ln.no)
        elif gpu is not None and order is not None and (row := _ROW.match(ln.text)) is not None:
            _row(per.setdefault(gpu, {}), row, order)
            claimed.add(ln.no)
        elif (old := _OLD_STATE.match(ln.text)) is not None:
            gpu, block, order = old.group(1), old.group(2).upper(), None
            per.setdefault(gpu, {})[f"RAS/ECC_BLOCK_STATE/{block}"] = old.group(3).upper()
            claimed.add(ln.no)
        elif block is not None and gpu is not None and (count := _OLD_COUNT.match(ln.text)) is not None:
            name = "UNCORRECTABLE_COUNT" if count.group(2) == "ue" else "CORRECTABLE_COUNT"
            per[gpu][f"RAS/{block}/{name}"] = count.group(3)
            claimed.add(ln.no)
        elif _SPACER.match(ln.text):
            if gpu is not None or "RAS Info" in ln.text:
                claimed.add(ln.no)
        elif ln.text.strip():
            gpu, order, block = (gpu, order, block) if _OLD_STATE.match(ln.text) else (None, None, None)
    if not per:
        return
    out.claimed |= claimed
    out.kinds.append("rocm-smi --showrasinfo")
    out.modules += [ListedModule(f"GPU[{g}]", ras=tuple(list(f.items())[:256]), tool=TOOL)
                    for g, f in sorted(per.items(), key=lambda kv: int(kv[0]))]


def _order(columns: str) -> tuple[str, str]:
    """The two count columns' meaning: by their names, save the lowercase header whose rows carry the
    correctable count first (see the module's docstring)."""
    said = columns.lower()
    if re.fullmatch(r"uncorrectable err\s+correctable err", said):
        return "CORRECTABLE_COUNT", "UNCORRECTABLE_COUNT"
    first = re.search(r"(un)?correctable", said)
    if first is not None and first.group(1):
        return "UNCORRECTABLE_COUNT", "CORRECTABLE_COUNT"
    return "CORRECTABLE_COUNT", "UNCORRECTABLE_COUNT"


def _row(fields: dict[str, str], row: re.Match[str], order: tuple[str, str]) -> None:
    block = row.group(1)
    fields[f"RAS/ECC_BLOCK_STATE/{block}"] = row.group(2)
    for name, value in zip(order, (row.group(3), row.group(4)), strict=True):
        if value is not None and value != "N/A":
            fields[f"RAS/{block}/{name}"] = value
