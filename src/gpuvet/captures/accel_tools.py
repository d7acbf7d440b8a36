"""Other accelerators' tools, read as their vendor's modules (never as nvidia-smi's): Intel Gaudi's ``hl-smi``
table (shaped like nvidia-smi's: 'HL-SMI Version', 'AIP' rows, 'Compute Processes') and the habanalabs
driver's kernel lines, AWS Neuron's ``neuron-ls`` table (1.x and 2.x columns, the instance type above it), and
Tenstorrent's ``tt-smi`` reset output (a chip that does not come back), plus the non-NVIDIA entries of
``nvtop -s``. A fault the tool or driver printed is a verdict on its module (captures/verdicts.py judges it);
a listing alone is inventory."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from gpuvet.captures import axcl_smi, hl_smi_async, neuron_status, sycl_devices, tt_eth, tt_faults, tt_resets, xrt_tools
from gpuvet.captures.dedupe import merge_listed
from gpuvet.captures.marks import Marker, Marks
from gpuvet.captures.monitor_tools import NVIDIA_NAME, nvtop_devices
from gpuvet.captures.records import ListedModule, ListedParse, SmiProcess
from gpuvet.captures.text import MAX_MODULES, Line, ranges

HL_SMI, HABANALABS, NEURON_LS, TT_SMI, NVTOP = "hl-smi", "habanalabs driver", "neuron-ls", "tt-smi", "nvtop -s"
# the verdict paths this module writes (captures/verdicts.py: their severity)
NOT_USABLE = "habanalabs: device not usable"
HEARTBEAT, RESET_AFTER_FAULT = "habanalabs: heartbeat failed", "habanalabs: reset after a fault"  # ASC
ECC_COUNT = "hl-smi: volatile uncorrectable"
RESET_FAILED = "tt-smi: chip not back after reset"
RESET_DONE = "tt-smi: reset"
# tt-smi's Blackhole reset (tt_tools_common reset_common/bh_reset.py) prints it when the chip's config-space reset
# bit is not back within its wait, and exits non-zero: the chip is still on the bus, its reset unconfirmed (UMD
# logs the same check as a warning); a chip gone from the bus or failing to initialise after it stays critical
RESET_INCOMPLETE = "tt-smi: reset not completed"
_TT_INCOMPLETE = (" (the PCIe link reset did not complete; tt-smi exits with an error: update the board's firmware"
                  " bundle and board-management firmware with tt-flash, power-cycle the host, then reset again)")
_BUS = r"((?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"


def gaudi(product: str) -> str:
    """The Gaudi generation of an hl-smi product name (HL-205: Gaudi, HL-225: Gaudi 2, HL-325L/HL-338/HL-288:
    Gaudi 3), as 'Intel Gaudi 2 (HL-225)'."""
    gen = "" if re.match(r"HL-(?:1|20)", product) else " 2" if product.startswith("HL-22") else \
        " 3" if re.match(r"HL-(?:3|28)", product) else ""
    return f"Intel Gaudi{gen} ({product})"


# --- hl-smi's table ------------------------------------------------------------------------------
_HL_ROW1 = re.compile(r"^\s*(\d{1,3})\s+(HL-[\w-]{1,20}|\S[^|]{0,30}?)\s+(?:N/A|On|Off)?\s*$")
_HL_ROW2 = re.compile(r"^\s*\S+\s+(\d{1,3})C\s+\S+\s+(\d{1,5})W\s*/\s*(\d{1,5})W\s*$|^\s*\S+\s+N/A\s", re.I)
_HL_MEM = re.compile(r"^\s*(\d{1,9})\s*Mi?B\s*/\s*(\d{1,9})\s*Mi?B\s*$", re.I)
_HL_PROC = re.compile(r"^\|\s+(\d{1,3})\s+(\d{1,9})\s+(C|G|C\+G)\s+(\S+)(?:\s+(\S[^|]*?))?\s*\|?$")
_HL_NO_PROC = re.compile(r"^\|\s+(\d{1,3})\s+N/A\s+N/A\s+N/A\b|^\|\s+No running processes found", re.I)
_HL_VERSION = re.compile(r"HL-SMI Version:\s*(\S+)|^\|?\s*Driver Version:\s*(\S+)")


def _cells(text: str) -> list[str]:
    parts = text.strip().split("|")
    return parts[1:-1] if len(parts) >= 4 else []


def _hl_smi(lines: list[Line], out: ListedParse) -> None:
    """hl-smi's table: its banner (HL-SMI and driver versions), per module a row of index, product, bus id and
    the uncorrectable count, then a row of temperature, power / cap and memory used / total."""
    inside, rows, procs = False, 0, dict[str, list[SmiProcess]]()
    for i, ln in enumerate(lines):
        text = ln.text
        if "HL-SMI" in text or "AIP" in text:
            inside = True
        elif "NVIDIA-SMI" in text:
            inside = False  # an nvidia-smi table after hl-smi's is nvidia-smi's
        if not inside or "|" not in text:
            continue
        if (v := _HL_VERSION.search(text)) is not None:
            out.driver = v.group(2) or out.driver
            out.notes += [f"hl-smi: version {v.group(1)}"] if v.group(1) else []
            out.claimed.add(ln.no)
        elif (p := _HL_PROC.match(text.strip())) is not None:
            procs.setdefault(p.group(1), []).append(SmiProcess(p.group(2), p.group(3), p.group(4), p.group(5)))
            out.claimed.add(ln.no)
        elif (none := _HL_NO_PROC.match(text.strip())) is not None:
            procs.setdefault(none.group(1) or "*", [])
            out.claimed.add(ln.no)
        elif (cells := _cells(text)) and len(cells) >= 3 and (a := _HL_ROW1.match(cells[0])) and \
                (b := re.match(r"^\s*" + _BUS + r"\s", cells[1])) and i + 1 < len(lines):
            out.modules.append(_hl_module(a, b.group(1), cells[2], _cells(lines[i + 1].text)))
            out.claimed |= {ln.no, lines[i + 1].no}
            rows += 1
        elif text.strip().startswith(("|", "+")):
            out.claimed.add(ln.no)  # the frame, headings and the processes' empty rows
    if rows:
        out.kinds.append(HL_SMI)
        out.notes.append(f"hl-smi: {rows} Intel Gaudi module(s) read (index, product, bus id, temperature, power, "
                         "memory); hl-smi's table, not nvidia-smi's")
        _hl_processes(out, procs)
    elif out.driver is not None and HL_SMI not in out.kinds:  # its banner alone (a paste cut before the modules)
        out.kinds.append(HL_SMI)
        out.notes.append(f"hl-smi: its banner alone (driver {out.driver}): cut before any module row, no module listed")


def _hl_processes(out: ListedParse, procs: dict[str, list[SmiProcess]]) -> None:
    """The Compute Processes section onto its modules by AIP index, as nvidia-smi's table's are (doctor's
    other_processes step judges them); a section that lists some AIPs lists none on the others. No section
    (a cut paste): not known."""
    if not procs:
        return
    out.modules = [replace(m, processes=tuple(procs.get(m.label.split()[-1], ())))
                   if m.tool == HL_SMI and m.label.startswith("AIP ") else m for m in out.modules]


def _hl_module(a: re.Match[str], bus_id: str, ecc: str, second: list[str]) -> ListedModule:
    """One module from its two rows; a second row cut or absent leaves its readings unknown."""
    product = a.group(2).strip()
    temp = cap = mib = None
    if len(second) >= 2:
        if (r := _HL_ROW2.match(second[0])) is not None and r.group(1):
            temp, cap = float(r.group(1)), float(r.group(3))
        if (m := _HL_MEM.match(second[1])) is not None:
            mib = float(m.group(2))
    count = ecc.strip()
    return ListedModule(f"AIP {a.group(1)}", gaudi(product) if product.startswith("HL-") else product,
                        bus_id.upper(), mib, temperature_c=temp, power_limit_w=cap, tool=HL_SMI,
                        ras=((ECC_COUNT, count),) if count.isdigit() else ())


# --- hl-smi -q and hl-smi -Q (CSV) ------------------------------------------------------------------
_HL_BLOCK = re.compile(r"^\s*\[(\d{1,3})\]\s+AIP\s+\((accel\d+)\)\s+" + _BUS + r"\s*$")
_HL_KV = re.compile(r"^\s*(?:\[\s*\d+\]\s*)?([A-Za-z][\w .()/-]{0,40}?)\s*:\s*(.*)$")
MODULE_STATUS, ROWS_PENDING = "hl-smi: Module status", "hl-smi: Replaced Rows pending"


def _hl_query(lines: list[Line], out: ListedParse) -> None:
    """hl-smi -q's blocks ('[0] AIP (accel0) 0000:19:00.0' over indented 'Key : value' lines): product, bus id,
    memory total, the first temperature, the 54 V power limit, the module status and pending row replacements."""
    at: dict[str, str] | None = None
    blocks: list[dict[str, str]] = []
    for ln in lines:
        text = ln.text
        if (b := _HL_BLOCK.match(text)) is not None:
            at = {"index": b.group(1), "bus": b.group(3)}
            blocks.append(at)
        elif at is not None and text.strip() and (text[:1].isspace() or text.lstrip().startswith("[")):
            if (kv := _HL_KV.match(text)) is not None:
                at.setdefault(kv.group(1).strip(), kv.group(2).strip())
        elif at is not None and text.strip():
            at = None
            continue
        elif at is None and not ("HL-SMI" in text or re.match(r"^(Timestamp|Driver Version|Attached AIPs)\s", text)):
            continue
        out.claimed.add(ln.no)
    for blk in blocks:
        out.modules.append(_hl_block(blk))
    if blocks:
        out.kinds.append(HL_SMI + " -q")


def _hl_block(blk: dict[str, str]) -> ListedModule:
    mem = re.match(r"(\d+)\s*MB", blk.get("Total", ""))
    temp = next((float(t.group(1)) for k, v in blk.items() if k.startswith("On Chip") and
                 (t := re.match(r"(\d{1,3})\s*C", v)) is not None), None)
    cap = re.match(r"(\d+)\s*W", blk.get("Power Limit", ""))
    said = tuple((p, blk[k]) for p, k in ((MODULE_STATUS, "Module status"), (ROWS_PENDING, "Pending")) if k in blk)
    product = blk.get("Product Name", "")
    return ListedModule(f"AIP {blk['index']}", gaudi(product) if product.startswith("HL-") else product or None,
                        blk["bus"].upper(), float(mem.group(1)) if mem else None, temperature_c=temp,
                        power_limit_w=float(cap.group(1)) if cap else None, tool=HL_SMI, ras=said)


def _hl_csv(lines: list[Line], out: ListedParse) -> None:
    """hl-smi -Q …  -f csv: a header naming hl-smi's own fields (temperature.aip, utilization.aip) or under its
    command line, then one row per module: name, bus id, memory total as printed."""
    columns: list[str] | None = None
    asked, before = False, len(out.modules)
    for ln in lines:
        cells = [re.sub(r"\s*\[[^\]]*\]$", "", c.strip()) for c in ln.text.split(",")]
        asked = asked or "hl-smi" in ln.text and "-Q" in ln.text
        if len(cells) >= 2 and all(re.fullmatch(r"[a-z][a-z0-9_.-]{1,60}", c) for c in cells) and \
                (asked or any(c.endswith(".aip") for c in cells)):
            columns = cells
            out.claimed.add(ln.no)
        elif columns is not None and len(cells) == len(columns):
            row = dict(zip(columns, cells, strict=True))
            mem = re.match(r"(\d+)", row.get("memory.total", ""))
            temp = re.match(r"(\d{1,3})", row.get("temperature.aip", ""))
            product = row.get("name", "")
            out.modules.append(ListedModule(f"AIP {row.get('index', len(out.modules))}", gaudi(product) if
                                            product.startswith("HL-") else product or None,
                                            row.get("bus_id", "").upper() or None, float(mem.group(1)) if mem else None,
                                            temperature_c=float(temp.group(1)) if temp else None, tool=HL_SMI))
            out.claimed.add(ln.no)
        elif ln.text.strip():
            columns = None
    if len(out.modules) > before:
        out.kinds.append(HL_SMI + " -Q")


# --- the habanalabs driver's kernel lines ----------------------------------------------------------
_HABANA = re.compile(r"habanalabs\s+(\S+?):\s+(.*)$")
# the driver's lines read: a device found, its DRAM, its firmware loaded, the device added; its init failures
# YX1: its healthy boot lines too (the out-of-tree driver's 'Habana Labs Gaudi2E device detected', 'Driver version: X',
# the firmware versions it reports, the secured-firmware load): read quietly, never refused
_HL_KNOWN = re.compile(r"device found \[1da3:|Found GAUDI|Successfully (?:loaded firmware|added device)|NOT usable|"
                       r"[Ff]ailed to initialize|CPU-CP timeout|Failed to communicate with Device CPU|"
                       r"Habana Labs \w+ device detected|^Driver version: |^(?:Linux|preboot|boot-fit|firmware) version |"
                       r"^Loading secured firmware|"
                       # ASC: device.c's heartbeat and reset paths (a reset that failed is the device NOT usable)
                       r"heartbeat failed|Failed to do compute reset|stopping hard reset|after (?:hard )?reset|"
                       r"Going to reset device|Successfully finished resetting")
# ASC: device.c's lines of a reset that did not bring the device back (then 'Failed to reset! Device is NOT usable')
_HL_RESET_FAILED = re.compile(r"stopping hard reset|failed to initialize the H/W after reset|Failed to detect if device "
                              r"is alive after reset|Failed late init after hard reset|PCI link is broken")
_HL_ID = {"1000": "Intel Gaudi", "1001": "Intel Gaudi", "1010": "Intel Gaudi", "1011": "Intel Gaudi",
          "1020": "Intel Gaudi 2", "1030": "Intel Gaudi 2"}


def _hl_boot(said: str, mod: dict[str, str]) -> None:
    """YX1: the model and driver version the out-of-tree driver's boot lines print, as printed."""
    if (seen := re.match(r"Habana Labs (Gaudi\w*|GAUDI\w*) device detected", said)) is not None:
        mod["name"] = f"Intel {seen.group(1)}"  # Gaudi2E: the export variant of Gaudi 2
    if (version := re.match(r"Driver version: (\S{1,40})", said)) is not None:
        mod["driver"] = version.group(1)


def _habanalabs(lines: list[Line], out: ListedParse) -> None:
    """The driver's lines per device (named hlN, or by bus id): a device it could not initialise ('Device is NOT
    usable', 'failed to initialize the H/W') is a verdict on it; one it loaded is listed."""
    mods: dict[str, dict[str, str]] = {}
    for ln in lines:
        if "habanalabs" not in ln.text or (h := _HABANA.search(ln.text)) is None:
            continue
        who, said = h.group(1), h.group(2).strip()
        if _HL_KNOWN.search(said) is None:
            continue  # a line of the driver's this reader does not know: left to the file's unread lines (named)
        named = re.search(r"Failed to initialize (hl\d+)", said)
        key = named.group(1) if named else who
        mod = mods.setdefault(key, {})
        if named and re.fullmatch(_BUS, who):
            mod["bus"] = who
        elif re.fullmatch(_BUS, who):
            mod["bus"] = who
        if (dev := re.search(r"device found \[1da3:([0-9a-f]{4})\]", said)) is not None:
            mod["name"] = _HL_ID.get(dev.group(1), "Intel Gaudi 3" if dev.group(1).startswith("106") else "Intel Gaudi")
        _hl_boot(said, mod)
        if (found := re.search(r"Found (GAUDI\d?) device with (\d+)GB", said)) is not None:
            mod["name"], mod["mib"] = f"Intel {found.group(1).title()}", str(int(found.group(2)) * 1024)
        _hl_state(said, mod)
        out.claimed.add(ln.no)
    for m in [m for k, m in mods.items() if k.startswith("hl") and "bus" in m]:
        m |= {k: v for k, v in mods.pop(m["bus"], {}).items() if k not in m}  # its lines by bus id are its own
    for key, m in mods.items():
        if not (m.get("failed") or m.get("heartbeat") or m.get("name") or key.startswith("hl")):
            continue
        out.modules.append(ListedModule(key if key.startswith("hl") else f"habanalabs {key}", m.get("name",
                                        "Intel Gaudi (model not in the log)"), m.get("bus", "").upper() or None,
                                        float(m["mib"]) if "mib" in m else None, tool=HABANALABS, ras=_hl_said(m)))
    if out.modules:
        out.kinds.append(HABANALABS)
        out.driver = out.driver or next((m["driver"] for m in mods.values() if "driver" in m), None)


def _hl_state(said: str, mod: dict[str, str]) -> None:
    """What a line says of the device's state: it failed (its init, or a reset that did not bring it back), its
    heartbeat failed (ASC), a reset brought it back, or why it failed (its CPU not answering)."""
    if re.search(r"NOT usable|failed to initialize the H/W|Failed to initialize hl", said, re.I) or \
            _HL_RESET_FAILED.search(said):
        mod["failed"] = mod.get("failed") or said[:160]
    elif "heartbeat failed" in said or "Failed to do compute reset" in said:
        mod["heartbeat"] = mod.get("heartbeat") or said[:160]
    elif said.startswith("Successfully finished resetting"):
        mod["reset_ok"] = said[:160]
    elif "CPU-CP timeout" in said or "Failed to communicate with Device CPU" in said:
        mod["why"] = said[:120]


def _hl_said(m: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The driver's verdict on a device: not usable (its init or a reset failed); its heartbeat failed and no reset
    brought it back; or it was reset after a fault and came back (a warning: the job on it was lost)."""
    if m.get("failed"):
        return ((NOT_USABLE, f"{m['failed']} (after: {m['why']})" if m.get("why") else m["failed"]),)
    if m.get("heartbeat"):
        return ((RESET_AFTER_FAULT, f"{m['heartbeat']}; then {m['reset_ok']}"),) if m.get("reset_ok") else \
            ((HEARTBEAT, m["heartbeat"]),)
    return ()


# --- neuron-ls -----------------------------------------------------------------------------------
_NEURON_NAMES = (("inf1", "AWS Inferentia"), ("inf2", "AWS Inferentia2"), ("trn1", "AWS Trainium"),
                 ("trn2", "AWS Trainium2"), ("trn3", "AWS Trainium3"))


def _neuron_ls(lines: list[Line], out: ListedParse) -> None:
    """neuron-ls's table: its header rows name the columns (NEURON DEVICE, NEURON CORES, NEURON MEMORY, PCI BDF,
    PID …, split over two lines), one row per device (a device's further processes on rows under it)."""
    kind = next((n for ln in lines if "instance" in ln.text for t, n in _NEURON_NAMES if t in ln.text.lower()),
                "AWS Neuron device")
    columns: list[str] = []
    cores: list[str] = []  # R14C: each device's NeuronCores, said (the inventory has no column for them)
    for i, ln in enumerate(lines):
        cells = [c.strip() for c in _cells(ln.text)]
        if cells and cells[0] == "NEURON" and i + 1 < len(lines):
            below = [c.strip() for c in _cells(lines[i + 1].text)]
            columns = [f"{a} {b}".strip() for a, b in zip(cells, below + [""] * len(cells), strict=False)]
            out.claimed |= {ln.no, lines[i + 1].no}
        elif columns and len(cells) == len(columns) and cells[0].isdigit():
            row = dict(zip(columns, cells, strict=True))
            out.modules.append(_neuron_module(row, kind))
            cores.append(f"ND {row.get('NEURON DEVICE', '?')}: {row.get('NEURON CORES') or 'n/a'}")
            out.claimed.add(ln.no)
        elif columns and (ln.text.strip().startswith(("+", "|")) or "instance-" in ln.text):
            out.claimed.add(ln.no)
    if out.modules and NEURON_LS not in out.kinds:
        out.kinds.append(NEURON_LS)
        out.notes.append(f"neuron-ls: {len(out.modules)} Neuron device(s) read ({kind}; NeuronCores "
                         f"{', '.join(cores[:16]) or 'not printed'})")


def _neuron_module(row: dict[str, str], kind: str) -> ListedModule:
    memory = re.match(r"(\d+(?:\.\d+)?)\s*GB", row.get("NEURON MEMORY", ""))
    bdf = next((v for k, v in row.items() if "BDF" in k), "")
    found = re.search(_BUS, bdf)
    return ListedModule(f"ND {row.get('NEURON DEVICE', '?')}", kind, found.group(1).upper() if found else None,
                        float(memory.group(1)) * 1024 if memory else None, tool=NEURON_LS)


# --- tt-smi's reset --------------------------------------------------------------------------------
_TT_FAMILY = {"BH": "Tenstorrent Blackhole", "WH": "Tenstorrent Wormhole", "GS": "Tenstorrent Grayskull"}
_TT_START = re.compile(r"reset on (?:(BH|WH|GS) )?devices(?: at PCI indices)?:\s*(.*?)(?:\s*\(warm_reset|\s*$)",
                       re.IGNORECASE)  # tt-smi 2.x: 'pci link reset on WH devices at pci indices: 0'
_TT_LOST = re.compile(r"Timeout waiting for device at BDF " + _BUS + r" to reappear|"
                      r"Config space reset not completed for device (\d{1,3})")
_TT_FAILED = re.compile(r"Error when re-initializing chips|Chip initialization failed|\bReset failed\b|"
                        r"ARC Status: Timeout")


def _tt_smi(lines: list[Line], out: ListedParse) -> None:
    """tt-smi's reset: the devices it resets (by PCI index, or BDF), then a device that did not reappear, or chips
    that failed to initialise after it (ARC timeout): each a verdict on the device; a reset that completed
    without one of them is ok."""
    family, devices, failed, lost = "Tenstorrent device", list[str](), list[str](), dict[str, str]()
    read: set[int] = set()
    for ln in lines:
        text = ln.text
        if (s := _TT_START.search(text)) is not None:
            family = _TT_FAMILY.get((s.group(1) or "").upper(), family)
            devices = re.findall(r"BDF:\s*" + _BUS, s.group(2)) or re.findall(r"\b(\d{1,3})\b", s.group(2))
        elif (g := _TT_LOST.search(text)) is not None:
            lost[g.group(1) or g.group(2)] = text[g.start():].strip()[:160]
        elif (f := _TT_FAILED.search(text)) is not None:
            failed.append(text[f.start():].strip()[:120])
        else:
            continue
        read.add(ln.no)
    if not devices and not lost:
        return  # failure words without the reset they follow: not tt-smi's (nothing claimed)
    out.claimed |= read
    said = "; ".join(dict.fromkeys(failed))[:200]
    if lost and len([d for d in lost if ":" in d]) == len(devices) and not any(":" in d for d in devices):
        devices = []  # the devices it reset by PCI index are the ones it names by BDF when they do not reappear
    for d in dict.fromkeys([*devices, *lost]):
        verdict = lost.get(d, "")
        ras = (RESET_INCOMPLETE, verdict + _TT_INCOMPLETE) if verdict.startswith("Config") and not failed else \
            (RESET_FAILED, verdict or said) if verdict or failed else (RESET_DONE, "completed")
        bus_id = d.upper() if ":" in d else None
        out.modules.append(ListedModule(f"TT {bus_id}" if bus_id else f"TT device {d}", family, bus_id, tool=TT_SMI,
                                        ras=(ras,)))
    out.kinds.append(TT_SMI)


_TT_BOARDS = {"e": "Grayskull", "n": "Wormhole", "p": "Blackhole"}  # tt-smi's board types: e150, n150/n300, p100/p150
DRAM_STATUS, NOT_ANSWERING = "tt-smi: dram_status", "tt-smi: chip not answering"


def _tt_snapshot(lines: list[Line], out: ListedParse) -> None:
    """tt-smi -s's snapshot: per chip its board_info (board type, bus id, DRAM trained or not) and telemetry; a chip
    whose board_info and telemetry are empty did not answer (its ARC wedged); DRAM not trained is a verdict."""
    from gpuvet.captures.monitor_tools import json_span  # its document reader, shared

    doc = json_span(lines, '"board_info"')
    chips = doc[0].get("device_info") if doc is not None and isinstance(doc[0], dict) else None
    if doc is None or not isinstance(chips, list):
        return
    for k, chip in enumerate(c for c in chips if isinstance(c, dict)):
        board: dict[str, object] = chip["board_info"] if isinstance(chip.get("board_info"), dict) else {}
        tele: dict[str, object] = chip["telemetry"] if isinstance(chip.get("telemetry"), dict) else {}
        kind = str(board.get("board_type") or "")
        name = f"Tenstorrent {_TT_BOARDS.get(kind[:1].lower(), '')} {kind}".replace("  ", " ").strip() if kind else \
            "Tenstorrent chip (board type not read)"
        said: tuple[tuple[str, str], ...] = ((DRAM_STATUS, str(board["dram_status"]).lower()),) \
            if "dram_status" in board else ()
        if not board.get("board_type") and not board.get("board_id") and not tele:
            said += ((NOT_ANSWERING, "board_info and telemetry empty"),)
        temp = re.match(r"\s*(\d{1,3}(?:\.\d+)?)", str(tele.get("asic_temperature", "")))
        out.modules.append(ListedModule(f"TT device {k}", name, str(board.get("bus_id") or "").upper() or None,
                                        temperature_c=float(temp.group(1)) if temp else None, tool=TT_SMI, ras=said))
    out.claimed |= doc[1]
    out.kinds.append(TT_SMI + " -s")


def _nvtop(lines: list[Line], out: ListedParse) -> None:
    """The non-NVIDIA entries of nvtop -s: AMD's and Intel's GPUs (an entry named by a CPU is its integrated GPU)."""
    devices, span = nvtop_devices(lines)
    others = [d for d in devices if not NVIDIA_NAME.search(d["device_name"])]
    for k, d in enumerate(others):
        name = d["device_name"] + (" (its integrated GPU)" if re.search(r"Processor|\bCPU\b", d["device_name"]) or
                                   d.get("fan_speed") == "CPU Fan" else "")
        temp = re.match(r"^\s*(\d{1,3})\s*C", d.get("temp", ""))
        out.modules.append(ListedModule(f"nvtop {k}", name, temperature_c=float(temp.group(1)) if temp else None,
                                        tool=NVTOP))
    if others:
        out.claimed |= span
        out.kinds.append(NVTOP)


READERS: tuple[tuple[tuple[Marker, ...], Callable[[list[Line], ListedParse], None]], ...] = (
    (("HL-SMI", "AIP"), _hl_smi),
    (("] AIP (",), _hl_query),
    ((".aip", "hl-smi"), _hl_csv),
    (("habanalabs",), _habanalabs),
    (("NEURON",), _neuron_ls),
    (("reset on", "to reappear", "space reset"), _tt_smi),
    (('"device_name"',), _nvtop),
    (('"board_info"',), _tt_snapshot),
    # R8A: Tenstorrent's other faults (tt_faults); R13D: tt-flash's chip init status, luwen's ARC not safe to talk to
    (("ing chips", "wait_for_init", "Chip initialization", "safe to communicate"), tt_faults.init_failed),
    (("Opened PCI device", "DRAM training", "Unknown board type"), tt_faults.umd),
    (tt_resets.MARKERS, tt_resets.kmd_unresponsive),  # R10A: before kmd, which then leaves those lines
    (tt_resets.RESET_MARKERS, tt_resets.reset_script),
    (("tenstorrent", "Tenstorrent"), tt_faults.kmd),
    (('"device_info"',), tt_faults.snapshot_cut),
    (tt_eth.MARKERS, tt_eth.read),  # R13D: tt-metal's ethernet ports that never train
    (xrt_tools.MARKERS, xrt_tools.examine),  # R13C: XRT's xbutil/xbmgmt/xrt-smi, amdxdna, NRT status codes
    (xrt_tools.MARKERS, xrt_tools.validate),
    (xrt_tools.MARKERS, xrt_tools.amdxdna),
    (neuron_status.MARKERS, neuron_status.read),
    (sycl_devices.MARKERS, sycl_devices.read),  # issue 46: sycl-ls, syclinfo, llama.cpp's SYCL device list
    (axcl_smi.MARKERS, axcl_smi.read),  # issue 46: Axera's AX650N cards
    (hl_smi_async.MARKERS, hl_smi_async.read),  # issue 46: Gaudi's telemetry lines
)
MARKERS: tuple[Marker, ...] = tuple(dict.fromkeys(m for markers, _ in READERS for m in markers))


def parse(lines: list[Line], marks: Marks | None = None) -> ListedParse:
    """Every other accelerator's listing in the lines; each reader runs only where the text holds its markers."""
    out, marks = ListedParse(), marks or Marks(lines)
    for markers, reader in READERS:
        if marks.any(markers):
            reader([ln for ln in lines if ln.no not in out.claimed], out)
    out.modules, twice = merge_listed(out.modules, "accelerator listing")
    out.notes += twice
    if len(out.modules) > MAX_MODULES:
        out.notes.append(f"accelerator listing: {len(out.modules)} modules: the first {MAX_MODULES} kept")
        out.modules = out.modules[:MAX_MODULES]
    if out.modules:
        out.notes.insert(0, f"{', '.join(out.kinds)}: {len(out.modules)} module(s) at line(s) "
                            f"{ranges(sorted(out.claimed))}")
    return out


def vendor(listed: ListedParse) -> str:
    """The vendor the listing's modules are, named for inventory and for a file that mixes vendors."""
    tools = {m.tool for m in listed.modules}
    return "Intel Gaudi" if tools & {HL_SMI, HABANALABS, hl_smi_async.TOOL} else \
        "Axera" if axcl_smi.TOOL in tools else "AWS Neuron" if NEURON_LS in tools else \
        "Tenstorrent" if TT_SMI in tools else "another vendor (nvtop -s)" if NVTOP in tools else \
        "the SYCL runtime" if sycl_devices.TOOL in tools else "another vendor"
