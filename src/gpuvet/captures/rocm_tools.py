"""AMD tools' outputs that name modules without a listing of their own (issue 46, batch M), each read into the
AMD listing as amd_smi's readers are:

- rocm-smi's set commands (``--setsclk``, ``--setmclk``, ``--setperfdeterminism``, ``--setpoweroverdrive``,
  ``--resetclocks``, …): under a ``Set …``/``Reset …`` title or the command line, one ``GPU[N] : …`` line per
  module — ``Successfully …`` (applied), ``…, Not supported on the given system`` (the part or its firmware has
  no such control: an answer to a request, not a fault) or ``ERROR: GPU[N] : Unable to …`` (not applied). Each
  module is listed; the outcome is said per command, never judged as the module's health.
- amdgpu_top's ``-d`` device dump (``Device Name : [name]``, ``PCI (domain:bus:dev.func): BDF``, ``VRAM : usage
  N MiB, total N MiB``, ``Power Cap. : N W``, ``Edge Temp. : N C (Current)``; one block per ``#N DevicePath``)
  and its ``--json``/``-J`` dump (``"DeviceName"``, ``"PCI"``, ``"VRAM": {"Total VRAM": {"value": N}}``): read
  by key from the text, so a dump cut mid-line keeps what stands before the cut.
- ROCm Validation Suite's ``[RESULT]`` lines of the pqt/pebb/peqt modules: ``p2p-bandwidth`` / ``pcie-bandwidth
  [i/n] <gpu id> <peer id> bidirectional: … <GB/s> GBps`` and ``p2p [i/n] <gpu id> <peer id> peers:… distance:…``
  name the modules by rvs's GPU id; the bandwidths are said as measured; a ``pass: FALSE`` (or ``false``) is kept
  as the suite's own verdict on the action.
- rocm_bandwidth_test's ``Device Numa Distance`` matrix (a ``D/D`` header, a row per device): its size and the
  distances it states, said as printed; which device is a GPU only where the device list names it.
"""

from __future__ import annotations

import re

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import TEMP_C, Line, number, reading

_SET_TITLE = lazy(r"^\s*=+\s*((?:Set|Reset)\b[^=]*?)\s*=+\s*$", re.I)
_OTHER_TITLE = lazy(r"^\s*=+\s*([A-Za-z][^=]*?)\s*=+\s*$")
_SET_COMMAND = lazy(r"\brocm-smi\b.*?(--(?:set|reset)[\w-]*|\s-r\b)")
_SET_LINE = lazy(r"^\s*(ERROR:\s*|WARNING:\s*)?GPU\[(\d{1,4})\]\s*:\s*(.+?)\s*$")
_BANNER = ("ROCm System Management Interface", "End of ROCm SMI Log")
SET_TOOL = "rocm-smi"


def read_set(lines: list[Line], out: ListedParse) -> None:
    """rocm-smi's set/reset commands: each GPU[N] line under their title or command line; the outcome per command."""
    command: str | None = None
    said: dict[tuple[str, str], list[str]] = {}
    gpus: list[str] = []
    for ln in lines:
        text = ln.text
        if (started := _set_start(text)) is not None:
            command = started
            out.claimed.add(ln.no)
            continue
        if command is None:
            continue
        if any(b in text for b in _BANNER) or not text.strip():
            out.claimed.add(ln.no)
            continue
        if _OTHER_TITLE.match(text):
            command = None
            continue
        if (m := _SET_LINE.match(text)) is None:
            continue
        out.claimed.add(ln.no)
        gpus.append(m.group(2))
        said.setdefault((command, _outcome(m.group(1), m.group(3))), []).append(m.group(2))
    if not gpus:
        return
    for gpu in dict.fromkeys(gpus):
        out.modules.append(ListedModule(f"GPU[{gpu}]", tool=SET_TOOL))
    for (command, outcome), which in said.items():
        out.notes.append(f"rocm-smi {command}: GPU[{_span(which)}]: {outcome}")
    out.kinds.append("rocm-smi set command")


def _set_start(text: str) -> str | None:
    """The set command a title or a command line starts: its title's words, else its option."""
    if (title := _SET_TITLE.match(text)) is not None:
        return title.group(1)
    cmd = _SET_COMMAND.search(text) if "rocm-smi" in text else None
    return cmd.group(1).strip() if cmd is not None else None


def _outcome(prefix: str | None, message: str) -> str:
    """What a set line says: applied, not supported (the part has no such control: not a fault), or not applied."""
    low = message.lower()
    if "not supported" in low:
        return f"not supported on this part or firmware ({message[:120]}): a request the module refused, not a fault"
    if "successfully" in low and not (prefix or "").startswith("ERROR"):
        return f"applied ({message[:120]})"
    if (prefix or "").startswith("ERROR") or any(w in low for w in ("unable", "failed", "permission", "error")):
        return f"NOT applied ({message[:120]}): the setting did not take; the module runs as before"
    return message[:160]


def _span(ids: list[str]) -> str:
    unique = list(dict.fromkeys(ids))
    nums = sorted(int(i) for i in unique)
    return f"{nums[0]}..{nums[-1]}" if len(nums) > 2 and nums == list(range(nums[0], nums[-1] + 1)) else ",".join(unique)


_TOP_BLOCK = lazy(r"^\s*#(\d{1,3})\s+DevicePath\b.*?(?:pci:\s*\"([0-9a-fA-F:.]+)\")?\s*\}?\s*$")
_TOP_FIELD = lazy(r"^\s*(Device Name|PCI \(domain:bus:dev\.func\)|VRAM|Power Cap\.|Edge Temp\.)\s*:\s*(.*?)\s*$")
_BDF = lazy(r"^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
_TOTAL = lazy(r"total\s+(\d+(?:\.\d+)?)\s*MiB")
TOP_TOOL = "amdgpu_top"


def read_top(lines: list[Line], out: ListedParse) -> None:
    """amdgpu_top -d's device blocks, then its JSON dump's devices."""
    blocks: list[dict[str, str]] = []
    for ln in lines:
        if (m := _TOP_BLOCK.match(ln.text)) is not None:
            blocks.append({"#": m.group(1), **({"bus": m.group(2)} if m.group(2) else {})})
            out.claimed.add(ln.no)
        elif blocks and (f := _TOP_FIELD.match(ln.text)) is not None:  # only under a '#N DevicePath' line
            if f.group(1) in blocks[-1]:
                blocks.append({"#": str(len(blocks))})
            blocks[-1][f.group(1)] = f.group(2)
            out.claimed.add(ln.no)
        elif blocks and ("amdgpu_top" in ln.text or ln.text.startswith("drm version")):
            out.claimed.add(ln.no)
    found = [_top_module(b, out.notes) for b in blocks if b.get("Device Name") or b.get("bus")]
    json_found = _top_json(lines, out)
    out.modules += found + json_found
    if found:
        out.kinds.append("amdgpu_top -d")
    if json_found:
        out.kinds.append("amdgpu_top --json")


def _top_module(block: dict[str, str], notes: list[str]) -> ListedModule:
    bad: list[str] = []
    bus = block.get("PCI (domain:bus:dev.func)") or block.get("bus")
    total = _TOTAL.search(block.get("VRAM", ""))
    hot = reading(block.get("Edge Temp."), TEMP_C, "amdgpu_top: Edge Temp.", bad)
    cap = number(block.get("Power Cap."))
    notes.extend(bad)
    return ListedModule(f"#{block['#']}", name=(block.get("Device Name") or "").strip("[] ") or None,
                        bus_id=bus.upper() if bus and _BDF.match(bus) else None,
                        memory_mib=float(total.group(1)) if total else None, temperature_c=hot,
                        power_limit_w=cap if cap and 0 < cap < 5000 else None, tool=TOP_TOOL)


_JSON_NAME = lazy(r'"DeviceName"\s*:\s*"([^"\n]{1,200})"')
_JSON_PCI = lazy(r'"PCI"\s*:\s*"([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"')
_JSON_VRAM = lazy(r'"Total VRAM"\s*:\s*\{[^{}]*?"value"\s*:\s*(\d+(?:\.\d+)?)')


def _top_json(lines: list[Line], out: ListedParse) -> list[ListedModule]:
    """Its JSON dump, read by key: one module per "DeviceName", what follows it up to the next one its own."""
    at = [(ln.no, m.start(), ln.text) for ln in lines for m in _JSON_NAME.finditer(ln.text)]
    if not at:
        return []
    rows = {ln.no: ln.text for ln in lines}
    text = "\n".join(rows.values())
    found: list[ListedModule] = []
    for i, m in enumerate(_JSON_NAME.finditer(text)):
        part = text[m.start():m.end() + 200_000]
        nxt = _JSON_NAME.search(part, 1)
        part = part[:nxt.start()] if nxt else part
        pci, vram = _JSON_PCI.search(part), _JSON_VRAM.search(part)
        found.append(ListedModule(f"#{i}", name=m.group(1), bus_id=pci.group(1).upper() if pci else None,
                                  memory_mib=float(vram.group(1)) if vram else None, tool=TOP_TOOL + " --json"))
    out.claimed |= {no for no, _, _ in at}
    return found


# rvs's log line: '[RESULT] [ 94.478367] [action_4] …' (its [INFO ] lines carry pebb's pair before its figure)
_RVS = lazy(r"^\s*\[(RESULT|INFO)\s*\]\s*\[\s*[\d.]+\s*\]\s*\[?([\w.-]+)\]?\s+(.*?)\s*$")
_RVS_PAIR = lazy(r"^(p2p-bandwidth|pcie-bandwidth|p2p)\s*\[(\d+)/(\d+)\]\s+(\d+)\s+(\d+)\s*(.*)$")
# an action's verdict ('pass: FALSE'); p2p's peer query ('p2p 7707 51576 peers:false distance:-1')
_RVS_PASS = lazy(r"\bpass:\s*(\w+)", re.I)
_RVS_PEERS = lazy(r"^p2p\s+(\d+)\s+(\d+)\s+peers:\s*(true|false)\b", re.I)
_GBPS = lazy(r"(\S+)\s*GBps")
RVS_TOOL = "rvs"


def read_rvs(lines: list[Line], out: ListedParse) -> None:
    """rvs's [RESULT] lines (pqt, pebb, p2p) and pebb's [INFO ] pairs: the GPUs (rvs's ids) they name, each
    pair's bandwidth, the peers rvs found none between, and the actions' verdicts. pcie-bandwidth's pair is a
    host node and a GPU."""
    gpus: list[str] = []
    verdicts: list[tuple[str, str]] = []
    said: list[str] = []
    apart: list[str] = []
    for ln in lines:
        if (m := _RVS.match(ln.text)) is None:
            continue
        level, action, rest = m.groups()
        if level == "RESULT" and (verdict := _RVS_PASS.search(rest)) is not None:
            verdicts.append((f"rvs {action}: pass", verdict.group(1)))
        elif level == "RESULT" and (peers := _RVS_PEERS.match(rest)) is not None:
            gpus += [peers.group(1), peers.group(2)]
            if peers.group(3).lower() == "false" and peers.group(1) != peers.group(2):
                apart.append(f"{peers.group(1)}->{peers.group(2)}")
        elif (pair := _RVS_PAIR.match(rest)) is not None:
            gpus += [pair.group(5)] if pair.group(1) == "pcie-bandwidth" else [pair.group(4), pair.group(5)]
            said.append(_measured(pair))
        else:
            continue
        out.claimed.add(ln.no)
    if not gpus and not verdicts:
        return
    for gpu in dict.fromkeys(gpus):
        out.modules.append(ListedModule(f"rvs GPU {gpu}", ras=tuple(verdicts[:256]), tool=RVS_TOOL))
    if said:
        out.notes.append(f"rvs: {len(said)} p2p/pcie result(s) as measured (not judged: rvs names no model): "
                         + "; ".join(said[:8]) + ("; …" if len(said) > 8 else ""))
    if apart:
        out.notes.append(f"rvs p2p: no peer access between {len(apart)} GPU pair(s) ({', '.join(apart[:8])}): "
                         "peer copies between them go through the host")
    out.kinds.append("rvs (ROCm Validation Suite)")


def _measured(pair: re.Match[str]) -> str:
    """One pair's result as rvs printed it: 'src->dst <direction> N GB/s', or its words where no figure came."""
    rest = pair.group(6)
    rate = _GBPS.search(rest)
    what = " ".join(rest.split()[:2]) if rate else " ".join(rest.split())[:60]
    return f"{pair.group(4)}->{pair.group(5)} {what}" + (f" {rate.group(1)} GB/s" if rate else "")


_NUMA_TITLE = lazy(r"^\s*Device Numa Distance\s*$", re.I)
_MATRIX_HEAD = lazy(r"^\s*D/D((?:\s+\d{1,4})+)\s*$")
_MATRIX_ROW = lazy(r"^\s*(\d{1,4})((?:\s+\d{1,4})+)\s*$")


def read_numa(lines: list[Line], out: ListedParse) -> None:
    """rocm_bandwidth_test's Device Numa Distance matrix: the devices it spans and the distances, said as printed."""
    rows: dict[int, list[int]] = {}
    columns: list[int] = []
    under = False
    for ln in lines:
        if _NUMA_TITLE.match(ln.text):
            under = True
            out.claimed.add(ln.no)
        elif under and (head := _MATRIX_HEAD.match(ln.text)) is not None:
            columns = [int(c) for c in head.group(1).split()]
            out.claimed.add(ln.no)
        elif under and (m := _MATRIX_ROW.match(ln.text)) is not None:
            rows[int(m.group(1))] = [int(c) for c in m.group(2).split()]
            out.claimed.add(ln.no)
        elif under and ln.text.strip() and not ln.text.lstrip().startswith("#"):
            under = False
    if not rows:
        return
    far = sorted({d for r in rows.values() for d in r if d})
    ids = sorted(set(rows) | set(columns))
    cut = f", {len(rows)} of their rows printed" if columns and len(rows) < len(columns) else ""
    out.notes.append(f"rocm_bandwidth_test: Device Numa Distance read for {len(ids)} device(s) "
                     f"({ids[0]}..{ids[-1]}{cut}); distances {', '.join(map(str, far[:8]))} "
                     "(which device is a GPU is said only by its device list)")
    out.kinds.append("rocm_bandwidth_test topology")
