"""AMD's tools as people paste them: ``amd-smi static|metric|list`` (text and ``--json``), ``amd-smi topology``,
``rocm-smi --showtopo``, ``rocm-smi -a`` (``--showallinfo``) and its ``--json``/``--csv`` forms, ``rocm-bandwidth-test``'s
device list, ``amd-smi monitor``'s table, ``rocminfo``'s GPU agents and amd-smi's throttle status quoted.

Each reader claims the lines it understood; modules are listed in the tool's order with only what it printed (a name,
a bus id, memory, PCIe maxima); link tables are kept as printed (type, weight, hops, NUMA node) and turned into links
by the capture backend. xGMI is a word of this module and the backend's translation only.
"""

from __future__ import annotations

import csv
import itertools
import json
import re
from collections.abc import Callable

from gpuvet.captures import (
    amd_monitor,
    amd_smi_table,
    amd_throttle,
    amd_xgmi,
    rbt_agents,
    rocm_partitions,
    rocm_ras,
    rocm_table,
    rocm_temps,
    rocm_tools,
    rocm_unsupported,
    rocminfo,
    rocminfo_agent,
)
from gpuvet.captures.dedupe import merge_listed
from gpuvet.captures.json_cut import CUT_KEY, Salvage, fragment, salvage
from gpuvet.captures.marks import Marker, Marks
from gpuvet.captures.records import FabricTable, ListedModule, ListedParse
from gpuvet.captures.rocm_sensors import judged_fields
from gpuvet.captures.text import MAX_MODULES, Line, integer, number
from gpuvet.captures.verdicts import ras_fields
from gpuvet.errors import CaptureError

_BDF = r"[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
_GPU_HEAD = re.compile(r"^GPU: (\d{1,4})\s*$")
_AMD_COMMAND = re.compile(r"amd-smi\s+(?:static|metric)\b(?:.*?\s-g\s+(\d{1,4})\b)?")
_KEY = re.compile(r"^(\s+)([A-Z][A-Z0-9_ ]*):(?: (.*))?$")
_AMD_TABLE = re.compile(r"^(ACCESS|WEIGHT|HOPS|LINK TYPE|LINK STATUS|NUMA BW|FB SHARING) TABLE:\s*$")
_ROCM_TABLE = re.compile(r"^=+ *(Weight|Hops|Link Type) between two GPUs *=+$")
_ROCM_FIELD = re.compile(r"^GPU\[(\d{1,4})\]\s*:\s*([^:]+?):\s+(.*)$")
_ROCM_DRIVER = re.compile(r"^Driver version:\s*(\S{1,40})\s*$")
_ROCM_LINE = re.compile(r"^(GPU\[\d{1,4}\]\s*:|=.*=$|ERROR: \d+ GPU\[|No KFD PIDs|WARNING: )")
_INSTINCT = re.compile(r"\[(AMD Instinct [^\]]+)\]")
_JSON_OPENS = re.compile(r'\{|\[\s*(?:[\[{"\d-]|$)')  # not a shell prompt's '[root@gpu01 ~]# rocm-smi --json'


def parse(lines: list[Line], marks: Marks | None = None) -> ListedParse:
    """Every AMD tool output in the lines; the first module listing found is kept. Each tool's reader
    runs only where the text holds one of its markers (READERS; ``marks``: the whole text's, else the
    lines')."""
    out, marks = ListedParse(), marks or Marks(lines)
    seen, at = lines, 0
    for markers, reader in READERS:
        if not marks.any(markers):
            continue
        if len(out.claimed) != at:  # the lines no reader claimed yet, cut again only after a claim
            seen, at = [ln for ln in lines if ln.no not in out.claimed], len(out.claimed)
        reader(seen, out)
    out.modules, twice = merge_listed(out.modules, "AMD listing")  # a module listed twice (or by two tools) is one
    out.notes += twice
    if len(out.modules) > MAX_MODULES:
        out.notes.append(f"AMD listing: {len(out.modules)} modules, more than one node has: the first "
                         f"{MAX_MODULES} kept")
        out.modules = out.modules[:MAX_MODULES]
    return out


# --- amd-smi static / metric / list (text) ------------------------------------------------

def _amd_smi_text(lines: list[Line], out: ListedParse) -> None:
    """``GPU: 0`` blocks of indented ``SECTION:`` / ``KEY: value`` lines; an excerpt without its ``GPU: N`` line
    (``amd-smi metric -g 0 -k | grep -A3 UMC``) is read when the command line stands right above it, its GPU
    the one the command's ``-g`` names."""
    blocks: list[tuple[str, dict[str, str]]] = []
    stack: list[tuple[int, str]] = []
    fields: dict[str, str] | None = None
    command: str | None = None  # the GPU of an amd-smi command line just read, its block not opened yet
    for ln in lines:
        m = _KEY.match(ln.text)
        if fields is None and command is not None and m is not None:
            fields, stack = {}, []  # the excerpt's first field: its block opened by the command line above
            blocks.append((command, fields))
        command = None if ln.text.strip() else command
        if (head := _GPU_HEAD.match(ln.text)) is not None:
            fields, stack = {}, []
            blocks.append((head.group(1), fields))
            out.claimed.add(ln.no)
            continue
        if (said := _AMD_COMMAND.search(ln.text)) is not None:
            fields, command = None, said.group(1) or "(not named)"
            continue
        if fields is not None and m is None and _continues(fields, ln.text):
            out.claimed.add(ln.no)  # a long list ('[N/A, N/A, …') wrapped over lines
            continue
        if fields is None or m is None:
            if ln.text.strip() and not ln.elision and not ln.text[:1].isspace():
                fields = None  # a flush-left line ends the block
            continue
        indent, key, value = len(m.group(1)), m.group(2).strip(), m.group(3)
        stack = [(i, k) for i, k in stack if i < indent]
        if value is None or not value.strip():
            stack.append((indent, key))
        else:
            _put(fields, [k for _, k in stack], key, value.strip())
        out.claimed.add(ln.no)
    for label, f in blocks:
        _add_module(out, _amd_module(f"GPU {label}", f), printed=bool(f))
    if blocks:
        out.kinds.append("amd-smi (static/metric/list)")
        out.driver = out.driver or next((f["DRIVER/VERSION"] for _, f in blocks if "DRIVER/VERSION" in f), None)


def _continues(fields: dict[str, str], text: str) -> bool:
    """An indented line that carries on the last field's open list (amd-smi wraps a long
    ``[N/A, N/A, …`` over lines): joined to it."""
    if not fields or not text[:1].isspace():
        return False
    last = next(reversed(fields))
    if not fields[last].startswith("[") or "]" in fields[last]:
        return False
    fields[last] = f"{fields[last]} {text.strip()}"
    return True


def _put(fields: dict[str, str], path: list[str], key: str, value: str) -> None:
    """One field; an older amd-smi's ECC_BLOCK_STATE pairs (``BLOCK: UMC`` then ``STATUS: …``) become
    ``ECC_BLOCK_STATE/UMC`` as the newer one prints it, so no block's state overwrites another's."""
    where = "/".join(path)
    if key == "STATUS" and path and path[-1] == "ECC_BLOCK_STATE" and f"{where}/BLOCK" in fields:
        fields[f"{where}/{fields.pop(f'{where}/BLOCK')}"] = value
        return
    fields["/".join([*path, key])] = value


def _field(f: dict[str, str], *keys: str) -> str | None:
    """The first key present (a path, or a last component anywhere), 'N/A' as absent."""
    for key in keys:
        value = f.get(key)
        if value is None:
            value = next((v for k, v in f.items() if k.rsplit("/", 1)[-1] == key), None)
        if value is not None and value.strip() not in ("N/A", "", "None"):
            return value.strip()
    return None


def _amd_module(label: str, f: dict[str, str]) -> ListedModule:
    gen = _field(f, "BUS/PCIE_INTERFACE_VERSION", "PCIE_INTERFACE_VERSION")
    return ListedModule(
        label, name=_field(f, "ASIC/MARKET_NAME", "MARKET_NAME"), bus_id=_bus(_field(f, "BUS/BDF", "BDF")),
        memory_mib=_mib(_field(f, "VRAM/SIZE", "VRAM/VRAM_SIZE", "TOTAL_VRAM")), uuid=_field(f, "UUID"),
        pcie_gen_max=integer(gen.removeprefix("Gen").strip()) if gen else None,
        pcie_width_max=integer(_field(f, "BUS/MAX_PCIE_WIDTH", "MAX_PCIE_WIDTH")),
        temperature_c=number(_field(f, "TEMPERATURE/HOTSPOT", "HOTSPOT")),
        ecc_uncorrectable=integer(_field(f, "ECC/TOTAL_UNCORRECTABLE_COUNT", "TOTAL_UNCORRECTABLE_COUNT")),
        ras=ras_fields(f), tool="amd-smi")


def _monitor(lines: list[Line], out: ListedParse) -> None:
    amd_monitor.read(lines, out, _mib)


def _bus(text: str | None) -> str | None:
    return text.upper() if text and re.fullmatch(_BDF, text) else None


def _mib(text: str | None) -> float | None:
    """'196592 MB' (amd-smi's MB are MiB), '192 GB', or bytes when no unit follows."""
    value = number(text)
    if value is None or text is None:
        return None
    unit = text.strip()[len(text.strip().split()[0]):].strip().upper()
    scale = {"MB": 1.0, "MIB": 1.0, "GB": 1024.0, "GIB": 1024.0, "KB": 1 / 1024, "B": 1 / 2**20, "": 1 / 2**20}
    return value * scale[unit] if unit in scale else None


def _add_module(out: ListedParse, module: ListedModule, printed: bool = False) -> None:
    """A module the tool printed fields for (a block of its own: ``GPU: 0``, ``GPU[0]``, ``card0``) is one
    even when none of them names it (amd-smi metric has no BDF; an old rocm-smi -a only a GPU ID)."""
    if printed or module.name or module.bus_id or module.memory_mib or module.ras \
            or module.ecc_uncorrectable is not None:
        out.modules.append(module)


# --- --json: amd-smi (a list of {"gpu": 0, "asic": {…}}) and rocm-smi ({"card0": {…}}) --------

def _json(lines: list[Line], out: ListedParse) -> None:
    start = _json_start([_unquoted(ln.text) for ln in lines])
    if start is None:
        return
    end = max((i for i, ln in enumerate(lines) if _unquoted(ln.text)[-1:] in ("]", "}")), default=-1)
    twice: list[str] = []
    data, cut = _load([_unquoted(ln.text) for ln in lines[start:end + 1]], twice) if end >= start else (None, None)
    if data is None:  # cut before its closing braces: what is complete
        twice.clear()
        data, cut = _load([_unquoted(ln.text) for ln in lines[start:]], twice, salvaged=True)
        end = start + cut.lines_kept - 1 if cut is not None else end
    readers: tuple[tuple[str, Callable[[object, ListedParse], bool]], ...] = (
        ("amd-smi --json", _amd_smi_json), ("rocm-smi --json", _rocm_smi_json))
    for kind, reader in readers:
        if data is not None and reader(data, out):
            out.kinds.append(kind)
            out.claimed |= {ln.no for ln in lines[start:end + 1]}
            if twice:
                more = f" and {len(twice) - 4} more" if len(twice) > 4 else ""
                out.notes.append(f"{kind}: key(s) given twice in one JSON object: {', '.join(twice[:4])}{more}: "
                                 "the first kept (a listing pasted twice, or edited?)")
            if cut is not None:
                how = "breaks inside a string (text lost where the paste broke)" if cut.broken else "ends"
                out.notes.append(f"{kind}: the JSON {how} at line {lines[end].no}, before its closing braces: read "
                                 "up to its last complete field; what followed is not read (cut, not absent)")
            return


# amd-smi metric --json's own field names: a fragment holding one of them is that tool's
_AMD_FIELDS = frozenset({"CLK_LOCKED", "DEEP_SLEEP", "MIN_CLK", "MAX_CLK", "HOTSPOT", "SOCKET_POWER",
                         "GFX_ACTIVITY", "UMC_ACTIVITY", "MM_ACTIVITY", "GFX_VOLTAGE"})
FRAGMENT_MARKERS = tuple(f'"{f.lower()}"' for f in sorted(_AMD_FIELDS))
_SHOWN = 6  # fields named in the fragment's note; the rest counted


def _json_fragment(lines: list[Line], out: ListedParse) -> None:
    """amd-smi --json pasted from inside the document (no '[' or '{' opens it, no "gpu" key): what it
    holds is read and said, as printed; no module is named, since the part that named it was cut."""
    texts = [_unquoted(ln.text) for ln in lines]
    start = next((i for i, t in enumerate(texts) if t.startswith('"')), None)
    if start is None or out.kinds:
        return
    cut = fragment("\n".join(texts[start:]))
    try:
        data = json.loads(cut.text) if cut is not None else None
    except (ValueError, RecursionError):
        return
    if cut is None or not isinstance(data, dict):
        return
    f = {k.replace(f"{CUT_KEY.upper()}/", ""): v for k, v in _flat(data).items()}
    if not _AMD_FIELDS & {k.rsplit("/", 1)[-1] for k in f}:
        return
    kept = lines[start:start + cut.lines_kept]
    end = start + cut.lines_kept
    after = [ln for ln, t in zip(lines[end:], texts[end:], strict=True) if t[:1] in '"{}[]']
    out.kinds.append("amd-smi --json")
    out.claimed |= {ln.no for ln in kept + after}
    said = [f"{k} {v}" for k, v in f.items() if v.upper() not in ("N/A", "")]
    more = f" and {len(said) - _SHOWN} more" if len(said) > _SHOWN else ""
    rest = f"; lines {after[0].no}-{after[-1].no} open fields the paste cut (not read)" if after else ""
    out.notes.append(f"amd-smi --json: a fragment (lines {kept[0].no}-{kept[-1].no}) that starts inside the "
                     "document: the part naming its module was cut, so no module is listed; it holds "
                     f"{len(f)} field(s): {', '.join(said[:_SHOWN]) or 'all N/A'}{more} (as printed, not judged){rest}")


def _json_start(texts: list[str]) -> int | None:
    """The first line that opens a JSON value: one json's decoder reads past the line, or to its end. A line
    that only looks like one ('[  12.345] amdgpu …', '[root@gpu01 ~]# rocm-smi --json') stops it on the line."""
    decoder, joined = json.JSONDecoder(), ""
    starts: list[int] = []
    for i, text in enumerate(texts):
        if not _JSON_OPENS.match(text):
            continue
        if not starts:
            joined = "\n".join(texts)
            starts = list(itertools.accumulate((len(t) + 1 for t in texts), initial=0))
        line_end = starts[i] + len(text)
        try:
            _, end = decoder.raw_decode(joined, starts[i])
        except json.JSONDecodeError as e:
            if e.pos >= line_end:
                return i  # ran past its own line: a JSON, perhaps cut (salvaged by the caller)
            continue
        except RecursionError:
            return i
        if end > line_end or not joined[end:line_end].strip():
            return i
    return None


def _unquoted(text: str) -> str:
    """A line without the inline-code backticks a paste put around it (`{"card0": …}`)."""
    return text.strip().strip("`").strip()


def _load(texts: list[str], twice: list[str], salvaged: bool = False) -> tuple[object | None, Salvage | None]:
    """The JSON in the lines, or (salvaged) its complete part and how it was cut; None where neither reads."""
    text, cut = "\n".join(texts), None
    if salvaged:
        cut = salvage(text)
        if cut is None:
            return None, None
        text = cut.text
    try:
        return json.loads(text, object_pairs_hook=_first_of(twice)), cut
    except (ValueError, RecursionError):
        return None, None


def _first_of(twice: list[str]) -> Callable[[list[tuple[str, object]]], dict[str, object]]:
    """json's object_pairs_hook: a key given twice in one object keeps its first value and is named in
    ``twice`` (json alone keeps the last, silently)."""
    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        kept: dict[str, object] = {}
        for key, value in items:
            if key not in kept:
                kept[key] = value
            elif len(twice) < 64:
                twice.append(f"{key[:40]!r}" + ("" if kept[key] == value else " (the two differ)"))
        return kept
    return pairs


def _flat(obj: object, prefix: str = "") -> dict[str, str]:
    """amd-smi's JSON as the text form's KEY paths: {"vram": {"size": {"value": 8, "unit": "MB"}}}
    -> {"VRAM/SIZE": "8 MB"}."""
    out: dict[str, str] = {}
    if isinstance(obj, dict):
        if set(obj) == {"value", "unit"}:
            return {prefix: f"{obj['value']} {obj['unit']}"}
        for k, v in list(obj.items())[:1000]:
            out |= _flat(v, f"{prefix}/{str(k).upper()}" if prefix else str(k).upper())
    elif isinstance(obj, (str, int, float)) and not isinstance(obj, bool):
        out[prefix] = str(obj)
    return out


def _amd_smi_json(data: object, out: ListedParse) -> bool:
    items = data.get("gpu_data") if isinstance(data, dict) else data
    if not isinstance(items, list) or not items or not all(isinstance(g, dict) and "gpu" in g for g in items):
        return False
    for g in items[:MAX_MODULES + 1]:
        f = _flat({k: v for k, v in g.items() if k != "gpu"})
        _add_module(out, _amd_module(f"GPU {g['gpu']}", f), printed=bool(f))
        out.driver = out.driver or _field(f, "DRIVER/VERSION")
    return True


def _rocm_smi_json(data: object, out: ListedParse) -> bool:
    if not isinstance(data, dict) or not any(re.fullmatch(r"card\d+", str(k)) for k in data):
        return False
    for card, fields in list(data.items())[:MAX_MODULES + 1]:
        if isinstance(fields, dict) and re.fullmatch(r"card\d+", str(card)):
            _add_module(out, _rocm_module(str(card), {str(k): str(v) for k, v in fields.items()}), printed=bool(fields))
        elif isinstance(fields, dict) and card == "system":
            out.driver = out.driver or fields.get("Driver version")
    return True


# --- rocm-smi -a / --showallinfo text and --csv ---------------------------------------------

def _rocm_module(label: str, f: dict[str, str]) -> ListedModule:
    lower = {k.lower(): v for k, v in f.items()}

    def get(*keys: str) -> str | None:
        return next((lower[k].strip() for k in keys if lower.get(k, "N/A").strip() not in ("N/A", "")), None)

    series = get("card series", "device name", "card sku")
    instinct = _INSTINCT.search(series or "")
    vram = number(get("vram total memory (b)"))
    uid, mib = get("unique id"), number(get("vram total memory (mib)"))  # MiB: Hygon's DCU fork's --json
    gen, width = _metrics_link(get("pcie_link_speed (0.1 gt/s)"), get("pcie_link_speed (gt/s)"),
                               get("pcie_link_width (lanes)"))
    return ListedModule(label, name=instinct.group(1) if instinct else series, bus_id=_bus(get("pci bus")),
                        memory_mib=vram / 2**20 if vram else mib or None, uuid=uid if uid and uid != "0x0" else None,
                        pcie_gen_current=gen, pcie_width_current=width, serial=get("serial number"),
                        temperature_c=number(get("temperature (sensor junction) (c)", "temperature (sensor edge) (c)")),
                        device_id=get("gpu id", "device id"), vbios=get("vbios version"), tool="rocm-smi")


_GEN_OF_RATE = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}  # GT/s per lane: the PCIe generation


def _metrics_link(tenths: str | None, rate: str | None, lanes: str | None) -> tuple[int | None, int | None]:
    """rocm-smi --showmetrics' current link (the gpu_metrics table): speed in 0.1 GT/s (or GT/s) as its
    generation, width in lanes; 65535, the table's 'not supported', and a rate no generation runs stay unread."""
    t = number(tenths)
    gts = t / 10 if t is not None else number(rate)
    width = integer(lanes)
    return _GEN_OF_RATE.get(gts) if gts is not None else None, width if width is not None and width < 65535 else None


def _rocm_smi_fields(lines: list[Line], out: ListedParse) -> None:
    """``GPU[0]  : Key: value`` lines and the banners between them."""
    per: dict[str, dict[str, str]] = {}
    numa: dict[str, int] = {}
    changed: list[str] = []
    for ln in lines:
        if (m := _ROCM_FIELD.match(ln.text)) is not None:
            key, value = m.group(2).strip(), m.group(3).strip()
            if key == "(Topology) Numa Node" and value.isdigit():
                numa[f"GPU{m.group(1)}"] = int(value)
            elif per.setdefault(m.group(1), {}).setdefault(key, value) != value:  # printed again, differently
                changed.append(f"line {ln.no}: GPU[{m.group(1)}] {key} {per[m.group(1)][key]!r} then {value!r}")
    if not per and not numa:
        return
    driver = next((d for ln in lines if (d := _ROCM_DRIVER.match(ln.text))), None)
    if driver is not None:  # rocm-smi -a's banner section before the GPU[n] lines
        out.driver = out.driver or driver.group(1)
        out.claimed.add(next(ln.no for ln in lines if _ROCM_DRIVER.match(ln.text)))
    if changed:
        out.notes.append(f"rocm-smi: {len(changed)} field(s) printed again with another reading (first: {changed[0]}): "
                         "the first kept")
    out.claimed |= {ln.no for ln in lines if _ROCM_LINE.match(ln.text) or "ROCm System Management" in ln.text
                    or "End of ROCm SMI Log" in ln.text}
    for index, fields in sorted(per.items(), key=lambda kv: int(kv[0])):
        _add_module(out, judged_fields(_rocm_module(f"GPU[{index}]", fields), fields, lines), printed=bool(fields))
    if numa:
        out.fabric = out.fabric or FabricTable("rocm-smi --showtopo")
        out.fabric.numa.update(numa)
    if per:
        out.kinds.append("rocm-smi -a")


def _csv_cells(text: str) -> list[str]:
    """One CSV line's cells as a CSV reader reads them: rocm-smi quotes a cell holding a comma
    ("Advanced Micro Devices, Inc. [AMD/ATI]", its Card vendor), which a split at each comma broke."""
    try:
        return next(csv.reader([text]), [])
    except csv.Error:
        return []


def _rocm_smi_csv(lines: list[Line], out: ListedParse) -> None:
    at = next((i for i, ln in enumerate(lines) if ln.text.startswith("device,")), None)
    if at is None:
        return
    header = _csv_cells(lines[at].text)
    out.claimed.add(lines[at].no)
    for ln in lines[at + 1:]:
        cells = _csv_cells(ln.text)
        if not cells or not re.fullmatch(r"card(\d+|system)", cells[0]) or len(cells) != len(header):
            break
        out.claimed.add(ln.no)
        fields = dict(zip(header[1:], cells[1:], strict=True))
        if cells[0] == "cardsystem":
            out.driver = out.driver or fields.get("Driver version")
        else:
            _add_module(out, _rocm_module(cells[0], fields), printed=True)
    out.kinds.append("rocm-smi --csv")


# --- link tables: amd-smi topology and rocm-smi --showtopo ----------------------------------

def _tables(lines: list[Line], out: ListedParse) -> None:
    i = 0
    while i < len(lines):
        text = lines[i].text.strip()
        amd, rocm = _AMD_TABLE.match(text), _ROCM_TABLE.match(text)
        if amd is None and rocm is None:
            if (untitled := _untitled(lines, i)) is not None:
                out.fabric = out.fabric or FabricTable("rocm-smi --showtopo")
                i = _matrix(lines, i, untitled, out)
                continue
            i += 1
            continue
        source = "amd-smi topology" if amd else "rocm-smi --showtopo"
        what = (amd or rocm).group(1).lower()  # type: ignore[union-attr]
        out.claimed.add(lines[i].no)
        out.fabric = out.fabric or FabricTable(source)
        i = _matrix(lines, i + 1, what, out)
        if source not in out.kinds:
            out.kinds.append(source)
    if out.fabric is not None and out.fabric.source.startswith("rocm-smi"):  # its banners between the tables
        out.claimed |= {ln.no for ln in lines if _ROCM_LINE.match(ln.text) and ln.text.startswith("=")}


def _matrix(lines: list[Line], i: int, what: str, out: ListedParse) -> int:
    """The header and rows after a table's title; returns the index after the last row."""
    fabric = out.fabric
    assert fabric is not None
    while i < len(lines) and not lines[i].text.strip():
        i += 1
    if i >= len(lines):
        return i
    header = lines[i].text.split()
    if not header or not all(re.fullmatch(_BDF + r"|GPU\d{1,4}", t) for t in header) or len(header) > MAX_MODULES:
        return i
    twice = _repeated(header)
    if twice is not None:  # which column is that module's? a guess either way (npu-smi -t topo is refused alike)
        raise CaptureError(f"line {lines[i].no}: the {fabric.source} {what} table's header names {twice} twice: "
                           "its columns cannot be told apart", where=fabric.source,
                           fix="give the table as the tool printed it (one column per GPU).")
    out.claimed.add(lines[i].no)
    for d in header:
        if d not in fabric.devices:
            fabric.devices.append(d)
    i += 1
    while i < len(lines):
        row = lines[i].text.split()
        if lines[i].elision:  # a poster's cut between rows: the rows after it are the same table's
            i += 1
            continue
        if not row or row[0] not in header:
            break
        out.claimed.add(lines[i].no)
        for other, cell in zip(header, row[1:], strict=False):
            if other != row[0]:
                _cell(fabric, what, frozenset((row[0], other)), cell, out.notes)
        i += 1
    return i


def _untitled(lines: list[Line], i: int) -> str | None:
    """A matrix whose title was cut off (an excerpt opens inside it): rocm-smi --showtopo prints weight,
    hops, then link type, so a matrix of whole numbers (0 on its diagonal, where topo -m prints X) right
    above the hops or link type title is the table before it in that order."""
    header = lines[i].text.split()
    if not header or not all(re.fullmatch(r"GPU\d{1,4}", t) for t in header) or len(header) > MAX_MODULES:
        return None
    j = i + 1
    while j < len(lines) and (lines[j].elision or (row := lines[j].text.split()) and row[0] in header):
        if not lines[j].elision and not all(c.isdigit() and len(c) < 7 for c in row[1:]):  # a cut: rows go on
            return None
        j += 1
    while j < len(lines) and not lines[j].text.strip():
        j += 1
    if j == i + 1 or j >= len(lines) or (title := _ROCM_TABLE.match(lines[j].text.strip())) is None:
        return None
    before = {"hops": "weight", "link type": "hops"}
    return before.get(title.group(1).lower())


def _repeated(names: list[str]) -> str | None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None


def _cell(fabric: FabricTable, what: str, pair: frozenset[str], cell: str, notes: list[str]) -> None:
    table: dict[frozenset[str], int] | dict[frozenset[str], str]
    value: int | str
    if what == "link type":
        table, value = fabric.link_type, cell.upper()
    elif what in ("weight", "hops") and cell.isdigit() and len(cell) < 7:
        table, value = (fabric.weight if what == "weight" else fabric.hops), int(cell)
    else:
        return
    seen = table.get(pair)
    if seen is not None and seen != value:
        notes.append(f"{fabric.source}: the {what} table disagrees with itself for {' and '.join(sorted(pair))} "
                     f"({seen} one way, {value} the other): the first kept")
        return
    table[pair] = value  # type: ignore[assignment]


# --- rocm-bandwidth-test ----------------------------------------------------------------------

# --- each reader's markers (issue 43): strings every line it can claim or read holds, or without which it
# reads nothing (its title, its header, its JSON keys), as each version and decoration it reads prints them
READERS: tuple[tuple[tuple[Marker, ...], Callable[[list[Line], ListedParse], None]], ...] = (
    (("GPU: ", "amd-smi static", "amd-smi metric"), _amd_smi_text),  # at 'GPU: N' or under an excerpt's command
    (('"gpu"', '"gpu_data"', '"card'), _json),  # amd-smi's items each name "gpu"; rocm-smi's keys are "cardN"
    (FRAGMENT_MARKERS, _json_fragment),  # amd-smi --json pasted from inside: only where _json read none
    (amd_xgmi.MARKERS, amd_xgmi.read),  # amd-smi xgmi's LINK METRIC TABLE (its GPU0 GPU1 header is not topo -m's)
    ((" TABLE:", "between two GPUs"), _tables),  # both tools' titles (an untitled one: above the next title)
    (("GPU[",), rocm_tools.read_set),  # rocm-smi --setsclk, …: before the fields, whose shape its lines share
    (rocm_ras.MARKERS, rocm_ras.read),  # --showrasinfo: before 'GPU[' fields, which would take 'Block X is: …'
    (("GPU[",), _rocm_smi_fields),  # 'GPU[0]  : Key: value'
    (("device,",), _rocm_smi_csv),  # its header row
    (rocm_partitions.MARKERS, rocm_partitions.read),  # R14C: the table's Partitions column, named in a note (before the
    # table's reader claims its rows)
    (rocm_table.MARKERS, rocm_table.read_tables),
    (rocm_table.HEADLESS_MARKERS, rocm_table.read_headless),  # only where read_tables found no table
    (("RocmBandwidthTest", "Device:"), rbt_agents.read_listed),  # read only after its title or a device line
    (rocm_temps.MARKERS, rocm_temps.read),  # R6C: --showtemp's lines without 'GPU[N] :', amdgpu's hwmon files
    (rbt_agents.MARKERS, rbt_agents.read),  # 2.6's 'Device Index:' / 'Device Type:' blocks (CPU agents alone: said)
    (amd_monitor.MARKERS, _monitor),
    (("gfx",), rocminfo.read), (rocminfo.CPU_MARKERS, rocminfo.read_cpu_only),  # a 'Name: gfx…' agent; CPUs alone
    (rocminfo_agent.MARKERS, rocminfo_agent.read_head),  # R14C: its driver line and system attributes alone
    (amd_throttle.MARKERS, amd_throttle.read),  # R4A: amd-smi's THROTTLE_STATUS quoted in prose or a table
    (rocm_unsupported.MARKERS, rocm_unsupported.read),  # rocm-smi's 'not supported' lines, --json's 'no data'
    (("GPU-Name",), amd_smi_table.read),  # its header's first row; rows are read only under it
    (amd_smi_table.PROCESS_MARKERS, amd_smi_table.read_processes),  # amd-smi process's box, where nothing listed
    (("DevicePath", '"DeviceName"'), rocm_tools.read_top),  # amdgpu_top -d's blocks, its --json dump
    (("[RESULT]", "pcie-bandwidth"), rocm_tools.read_rvs),  # rvs pqt/pebb results (pebb: its [INFO ] pairs)
    (("Numa Distance",), rocm_tools.read_numa),  # rocm_bandwidth_test's topology
)
MARKERS: tuple[Marker, ...] = tuple(dict.fromkeys(m for markers, _ in READERS for m in markers))
