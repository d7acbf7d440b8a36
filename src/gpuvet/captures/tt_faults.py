"""Tenstorrent's faults as its tools and driver print them (issue 46), beside accel_tools' tt-smi reset reader.
Each a verdict on its device (captures/verdicts.py judges the paths), read from the tools' own words:
- tt-smi's chip init failure (luwen's 'Error when re-initializing chips!' / 'Chip initialization failed' with its
  status lines 'ARC Status: In Progress, 0 out of 1 initialized') where no reset line names the device; an
  lm-sensors adapter ('blackhole-pci-0100') beside it names the bus, and all-ones readings (4294967295) are said
  as the chip not answering, not as heat;
- tt-umd's device open ('Opened PCI device 0; KMD version: 1.32.0, IOMMU: disabled', inventory) and its
  'DRAM training timed out after 60000 ms' (tt-umd device/chip/local_chip.cpp: the chip's DRAM never trained);
- tt-kmd's kernel lines: 'tenstorrent 0000:c7:00.0: Failed to initialize hwmon.' (wormhole.c/blackhole.c
  dev_warn: the firmware's telemetry was not ready; no hwmon, no tt_* sysfs), and a kernel oops right after the
  driver's probe line on a device (or with a [tenstorrent] frame): the driver crashed on it;
- a tt-smi -s snapshot cut before its JSON closes: its boards read (board id, bus id), nothing judged."""

from __future__ import annotations

import re

from gpuvet.captures import tt_eth
from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import Line

TT_SMI, TT_UMD, TT_KMD = "tt-smi", "tt-umd", "tt-kmd"
# the verdict paths written here (captures/verdicts.py: their severity)
INIT_FAILED = "tt-smi: chip not back after reset"  # accel_tools.RESET_FAILED: the same fact, one verdict
DRAM_TIMEOUT = "tt-umd: DRAM training timed out"
HWMON_FAILED = "tt-kmd: hwmon init failed"
KMD_OOPS = "tt-kmd: kernel oops"
SEVERITY = {DRAM_TIMEOUT: "critical", HWMON_FAILED: "warn", KMD_OOPS: "critical", **tt_eth.SEVERITY}  # R13D: tt-metal
_BUS = r"((?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"
_FAMILY = {"b": "Tenstorrent Blackhole", "w": "Tenstorrent Wormhole", "g": "Tenstorrent Grayskull"}
NO_INDEX = "TT device (index not in the log)"

# --- tt-smi / luwen: chips that failed to initialise ------------------------------------------------------------
# R13D: luwen's refusal to talk to a chip whose ARC firmware is not up ('It is not currently safe to communicate with
# ARC because, …', luwen-if's chip communication check; tt-smi after a resume from suspend): the same fact
_INIT = re.compile(r"Error when re-initializing chips|Chip initialization failed|luwen_if::chip::init::wait_for_init|"
                   r"not currently safe to communicate with ARC")
_STATUS = re.compile(r"\b(\w{1,20}) Status: ([A-Za-z ]{1,30}?)(?:, (\d{1,4}) out of (\d{1,4}) initialized)?\s*$")
_SENSORS = re.compile(r"^\s*(blackhole|wormhole|grayskull)-pci-([0-9a-f]{4})\s*$")
_ALL_ONES = re.compile(r"\b4294967295\b|\+65536\.0")


def init_failed(lines: list[Line], out: ListedParse) -> None:
    """luwen's chip init failure with no reset line naming the device: one verdict, the components it left
    unfinished named; an lm-sensors adapter of the chip gives its bus and its all-ones readings."""
    heads = [ln for ln in lines if _INIT.search(ln.text[:400])]
    if not heads or TT_SMI in out.kinds:  # the reset reader read the failure on its devices
        return
    stuck = [
        f"{m.group(1)} {m.group(2).strip()}" + (f" ({m.group(3)} of {m.group(4)})" if m.group(3) else "")
        for ln in lines
        if (m := _STATUS.search(ln.text[:200])) is not None
        and m.group(1) not in ("Communication",)
        and m.group(2).strip().lower() != "done"
        and (m.group(3) is None or m.group(3) != m.group(4) or m.group(1) == "ARC")
    ]
    sensor = next((m for ln in lines if (m := _SENSORS.match(ln.text[:80])) is not None), None)
    bus_id = None
    if sensor is not None:
        addr = int(sensor.group(2), 16)
        bus_id = f"0000:{addr >> 8:02X}:{(addr & 0xFF) >> 3:02X}.{addr & 7}"
    said = heads[0].text.strip().rstrip("!:,")[:100] + (": " + ", ".join(stuck[:4]) if stuck else "")
    if sensor is not None and any(_ALL_ONES.search(ln.text[:200]) for ln in lines):
        said += f"; {sensor.group(0).strip()} reads all ones (4294967295): the chip does not answer, not heat"
    family = _FAMILY[sensor.group(1)[0]] if sensor else "Tenstorrent device"
    out.modules.append(
        ListedModule(f"TT {bus_id}" if bus_id else NO_INDEX, family, bus_id, tool=TT_SMI, ras=((INIT_FAILED, said[:240]),))
    )
    out.claimed |= {ln.no for ln in heads}
    out.kinds.append(TT_SMI)


# --- tt-umd: the device it opened, DRAM training ---------------------------------------------------------------
_OPENED = re.compile(r"Opened PCI device (\d{1,3}); KMD version: ([\w.\-]{1,20})(?:, IOMMU: (\w{1,12}))?")
_DRAM = re.compile(r"DRAM training timed out after (\d{1,9}) ?ms")
# R13D: tt-umd's warning that a chip's board type is not in its table ('Unknown board type for chip 0. This might
# happen because chip is running old firmware. Defaulting to UNKNOWN', tt-umd device/tt_device): its firmware is
# older than the driver stack expects, and what depends on the board type (harvesting, clocks) is guessed
_OLD_FW = re.compile(r"Unknown board type for chip (\d{1,3})\. This might happen because chip is running old firmware")
OLD_FIRMWARE = "tt-umd: unknown board type (old firmware)"
SEVERITY[OLD_FIRMWARE] = "warn"


def umd(lines: list[Line], out: ListedParse) -> None:
    """tt-umd's opened devices (inventory, the KMD version said), its DRAM training timeout and a chip's unknown
    board type (old firmware): a verdict on the one device opened (else on a device whose index the log does not
    give)."""
    opened: dict[str, str] = {}
    dram: Line | None = None
    old: Line | None = None
    read: set[int] = set()
    for ln in lines:
        if (o := _OPENED.search(ln.text[:400])) is not None:
            opened.setdefault(o.group(1), f"KMD {o.group(2)}" + (f", IOMMU {o.group(3)}" if o.group(3) else ""))
        elif dram is None and _DRAM.search(ln.text[:400]) is not None:
            dram = ln
        elif _OLD_FW.search(ln.text[:400]) is not None:
            old = old or ln
        else:
            continue
        read.add(ln.no)
    if not opened and dram is None and old is None:
        return
    where = list(opened) if opened else []
    faults = tuple((path, ln.text.strip()[:200]) for path, ln in ((DRAM_TIMEOUT, dram), (OLD_FIRMWARE, old)) if ln)
    if faults and len(where) != 1:
        where.append("")
    for k in where:
        ras = faults if len(where) == 1 or not k else ()
        out.modules.append(ListedModule(f"TT device {k}" if k else NO_INDEX, "Tenstorrent device", tool=TT_UMD, ras=ras))
    out.notes.append(
        "tt-umd: " + "; ".join(f"PCI device {k} opened ({v})" for k, v in opened.items())
        if opened
        else f"tt-umd: {'DRAM training timed out' if dram else 'unknown board type'} (the device's index not in the log)"
    )
    out.claimed |= read
    out.kinds.append(TT_UMD)


# --- tt-kmd: the kernel driver's lines --------------------------------------------------------------------------
_KMD = re.compile(r"(?:^|[\s\]:])tenstorrent " + _BUS + r": (.{0,160})")
_FOUND = re.compile(r"Found a Tenstorrent (Blackhole|Wormhole|Grayskull) device at bus")
_HWMON = re.compile(r"Failed to initiali[sz]e hwmon")
_OOPS = re.compile(
    r"\bBUG: kernel NULL pointer dereference|\bBUG: unable to handle|\bgeneral protection fault\b|"
    r"\bOops: [0-9a-fx]+ \[#\d+\]|\bOops:\s*$|\bkernel BUG at \S+:\d+!"
)
OOPS_AFTER = 4  # lines: an oops this close after the driver's line on a device is the driver's, on that device


def kmd(lines: list[Line], out: ListedParse) -> None:
    """tt-kmd's lines per device: its probe (inventory), hwmon init failed (warn), an oops right after its line."""
    family, devices, said, last = "Tenstorrent device", dict[str, list[tuple[str, str]]](), set[int](), (-99, "")
    for i, ln in enumerate(lines):
        head = ln.text[:400]
        if (f := _FOUND.search(head)) is not None:
            family = "Tenstorrent " + f.group(1)
            said.add(ln.no)
        elif (m := _KMD.search(head)) is not None:
            bus_id = m.group(1).upper()
            devices.setdefault(bus_id, [])
            if _HWMON.search(m.group(2)):
                devices[bus_id].append(
                    (
                        HWMON_FAILED,
                        m.group(2).strip()[:160] + " (the firmware's telemetry was not "
                        "ready: no hwmon readings, no tt_* firmware versions in sysfs)",
                    )
                )
            last = (i, bus_id)
            said.add(ln.no)
        elif _OOPS.search(head) and not any(p == KMD_OOPS for r in devices.values() for p, _ in r):
            framed = "[tenstorrent]" in " ".join(t.text[:400] for t in lines[i : i + 30])  # its RIP or trace in tt-kmd
            if not framed and not (last[1] and i - last[0] <= OOPS_AFTER):
                continue
            where = (
                " right after tt-kmd's line on the device"
                if last[1] and i - last[0] <= OOPS_AFTER
                else " in tt-kmd's code ([tenstorrent] frame)"
            )
            devices.setdefault(last[1], []).append((KMD_OOPS, head.strip()[:160] + where))
            said.add(ln.no)
    if not devices:
        return
    for bus_id, ras in devices.items():
        label = f"TT {bus_id}" if bus_id else "tenstorrent driver (bus id not in the log)"
        out.modules.append(ListedModule(label, family, bus_id or None, tool=TT_KMD, ras=tuple(ras)))
    out.claimed |= said
    out.kinds.append(TT_KMD)


# --- tt-smi -s: a snapshot cut before its end ------------------------------------------------------------------
_KEY = re.compile(r'^\s*"(Hostname|Driver|BOARD_ID|board_id|board_type|bus_id|dram_status)":\s*"?([^",]{0,80})"?,?\s*$')
_CHIP = re.compile(r'^\s*"(smbus_telem|board_info)":\s*\{')


def snapshot_cut(lines: list[Line], out: ListedParse) -> None:
    """A tt-smi -s snapshot the JSON reader could not take (cut by its poster): its chips by their board_info or
    smbus_telem objects, board id and bus id said; dram_status judged as the full reader does; nothing else."""
    if not any('"device_info"' in ln.text for ln in lines):
        return
    chips: list[dict[str, str]] = []
    host: dict[str, str] = {}
    read: set[int] = set()
    for ln in lines:
        if (c := _CHIP.match(ln.text)) is not None:
            if not chips or c.group(1) in chips[-1]:
                chips.append({})
            chips[-1][c.group(1)] = ""
        elif (k := _KEY.match(ln.text)) is not None:
            (chips[-1] if chips and k.group(1) not in ("Hostname", "Driver") else host)[k.group(1)] = k.group(2)
        else:
            continue
        read.add(ln.no)
    if not chips:
        return
    for n, chip in enumerate(chips):
        kind = chip.get("board_type", "")
        ras = (("tt-smi: dram_status", chip["dram_status"].lower()),) if "dram_status" in chip else ()
        out.modules.append(
            ListedModule(
                f"TT device {n}",
                f"Tenstorrent {kind}".strip() if kind else "Tenstorrent chip (board type not read)",
                chip.get("bus_id", "").upper() or None,
                serial=chip.get("BOARD_ID") or chip.get("board_id"),
                tool=TT_SMI,
                ras=ras,
            )
        )
    out.notes.append(
        f"tt-smi -s snapshot cut before its end: {len(chips)} chip(s) read" + "".join(f", {k} {v}" for k, v in host.items())
    )
    out.claimed |= read
    out.kinds.append(TT_SMI + " -s")
