"""Tables the NIC and other vendors' tools print beside the GPU tools (issue 46, R7C), read so a paste of them is
never refused: MLNX_OFED's ``show_gids`` (DEV PORT INDEX GID IPv4 VER DEV, then ``n_gids_found=N``), ethtool's
own failures (``Cannot get device pause settings: No such device``: ethtool.c's perror() of an ioctl), Moore
Threads' ``mthreads-gmi`` table and ``dcgmi dmon -l``'s field catalogue (and, FX68A, dcgmi modules -l and
dcgmproftester: captures/dcgm_tools.py). Only two things are judged: no GID at all
(no RDMA address, RoCE unusable where it was read) and a netdev ethtool finds gone (ENODEV); the rest is said."""

from __future__ import annotations

import re

from gpuvet.captures import dcgm_tools
from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.records import AppError
from gpuvet.captures.runtime_marks import SIDE_MARKS
from gpuvet.captures.text import Line

MARKS = SIDE_MARKS  # formats'
_GID_HEAD = re.compile(r"^\s*DEV\s+PORT\s+INDEX\s+GID\s+IPv4\s+VER\s+DEV\s*$")
_GID_RULE = re.compile(r"^\s*---\s+----\s+-----\s+---\s+-+\s+---\s+---\s*$")
_GID_ROW = re.compile(
    r"^\s*([\w.-]{1,64})\s+(\d{1,3})\s+(\d{1,4})\s+([0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){7})\s+"
    r"(?:(\d{1,3}(?:\.\d{1,3}){3})\s+)?(v1|v2)?(?:\s*([\w.@-]{1,64}))?\s*$"
)  # IB: no netdev
_GID_CUT = re.compile(r"^\s*[\w.-]{1,64}\s+\d{1,3}\s+\d{1,4}(?:\s+[0-9a-fA-F:]{0,38})?\s*$")  # a row the paste cut
_GID_COUNT = re.compile(r"^\s*n_gids_found=(\d{1,6})\s*$")
_RDMA_DEV = re.compile(r"\b((?:mlx[45]|irdma|bnxt_re|rocep\w+|erdma|hns|qedr|efa)_?\d{0,3})\b")
# ethtool.c: perror("Cannot get <what>") after a failed ioctl; the errno's text after the colon
_ETHTOOL_FAIL = re.compile(
    r"Cannot (?:get|set) ([\w /-]{3,60}?):\s+(No such device|Operation not supported|"
    r"Operation not permitted|No data available|Invalid argument|Resource temporarily "
    r"unavailable|Device or resource busy|Input/output error|Bad address)"
)
_ETHTOOL_CMD = re.compile(r"\bethtool\s+(?:-[a-zA-Z]\s+|--[a-z-]+\s+)?([\w.@-]{1,32})\b")
_GMI_HEAD = re.compile(r"mthreads-gmi:\s*([\d.]+)\s+Driver Version:\s*(\S+)")
_GMI_ROW = re.compile(
    r"^\s*(\d{1,2})\s+(\S.{0,30}?)\s*\|\s*([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s*"
    r"\|\s*(\d{1,3})%\s+(\d+)MiB\((\d+)MiB\)"
)
_GMI_TABLE = re.compile(r"^\s*(?:[-+=]{5,}\s*|.*\|.*|ID\s+Name\b.*|\w{3} \w{3} +\d{1,2} [\d:]{8} \d{4}\s*)$")
# dcgmi dmon -l: 'Long Name  Short Name  Field ID' then '<field_name>  <SHORT>  <id>' rows (dcgmi/DeviceMonitor.cpp)
# a short name holds a letter (DRVER, NVVER, PCIE2): lsmod's "bpfilter   24576  0" (name, size, users) is no field
_FIELD_ROW = re.compile(r"^\s*([a-z][a-z0-9_]{2,60})\s{2,}((?=[A-Z0-9]{0,5}[A-Z])[A-Z0-9]{3,6})(?:\s{2,}(\d{1,4}))?\s*$")
_FIELD_HEAD = re.compile(r"^\s*(?:Long Name\s+Short Name\s+Field ID|_{10,})\s*$")
# R11C: dcgmi stats --pid (dcgmi/ProcessStats.cpp): 'Successfully retrieved process info for PID: N. Process ran on
# 1 GPUs.', then per GPU a box: '| GPU ID: 2 |', '|-----  Execution Stats  ---…|', '| <name>  [*] | <value> |' rows
_STATS_HEAD = re.compile(r"process info for PID: (\d{1,10})\. Process ran on (\d{1,3}) GPUs?")
_STATS_JOB = re.compile(r"Successfully retrieved statistics for job: ([\w.-]{1,64}?)\.?\s*$")
_STATS_RULE = re.compile(r"^\s*\+[-=+]{1,200}(?:\s{1,4}[A-Z][\w ]{2,30}\s{1,4}[-=]{1,200}\+[-=+]{0,200})?\s*$")
_STATS_COMMAND = re.compile(r"^\s*(?:\S{0,60}[$#]\s)?(?:sudo\s)?dcgmi\s+stats\b")
_STATS_GPU = re.compile(r"^\s*\|\s*GPU ID: (\d{1,3})\s*\|\s*$")
_STATS_ROW = re.compile(
    r"^\s*\|\s*(?:[-+=|\s]*[A-Z][\w .()/%-]{2,40}?\s*\*?\s*\|.*|[-+=|\s]*(?:[A-Z][\w ]{2,30}Stats)?[-+=|\s]*)$"
)
# R11C: the gddr6 tool (olealgoritme/gddr6): 'Device: L40S GDDR6 (AD102 / 0x26b9) pci=21:0:0' per GPU, then
# 'VRAM Temps: |  46°c |  48°c |' (GDDR6's own sensor, read from BAR0)
_GDDR6_DEV = re.compile(r"^\s*Device: (.{1,40}?) GDDR6X? \((\w{2,10}) / 0x([0-9a-fA-F]{4})\) pci=([0-9a-fA-F:.]{5,12})\s*$")
_GDDR6_TEMPS = re.compile(r"^\s*VRAM Temps:\s*((?:\|\s*\d{1,3}\s*°?[cC]\s*)+)\|?\s*$")


def parse(lines: list[Line]) -> AppErrorsParse:
    """Every table of the four read; the lines claimed, the notes that say them, the two faults judged."""
    out = AppErrorsParse()
    for reader in (_gids, _ethtool, _gmi, _fields, _dcgmi_stats, _gddr6, dcgm_tools.modules, dcgm_tools.proftester):
        reader(lines, out)
    return out


def _gids(lines: list[Line], out: AppErrorsParse) -> None:
    """show_gids: each row's device, port, index, IPv4 and RoCE version; the RoCE v2 IPv4 index per device (what
    NCCL_IB_GID_INDEX wants); ``n_gids_found=0`` beside the RDMA devices the text names: no address to use."""
    if not any("n_gids_found" in ln.text or "INDEX" in ln.text for ln in lines):
        return
    rows = [(ln, m) for ln in lines if (m := _GID_ROW.match(ln.text))]
    heads = [ln for ln in lines if _GID_HEAD.match(ln.text) or _GID_RULE.match(ln.text)]
    counts = [(ln, int(m.group(1))) for ln in lines if (m := _GID_COUNT.match(ln.text))]
    if not rows and not counts and not heads:
        return
    out.claimed |= {ln.no for ln, _ in rows} | {ln.no for ln in heads} | {ln.no for ln, _ in counts}
    if heads:  # a row cut by the paste's end is read as cut, never judged
        out.claimed |= {ln.no for ln in lines if ln.no > heads[0].no and _GID_CUT.match(ln.text)}
    v2: dict[str, list[str]] = {}
    for _, m in rows:
        if m.group(6) == "v2" and m.group(5):
            v2.setdefault(f"{m.group(1)} port {m.group(2)} ({m.group(7)})", []).append(f"{m.group(3)} = {m.group(5)}")
    if rows:
        said = (
            "; ".join(f"{dev}: RoCE v2 IPv4 index {', '.join(v)}" for dev, v in v2.items())
            or "no RoCE v2 GID with an IPv4 address (RoCE v2 over IPv4 needs one: the netdev's address)"
        )
        devices = len({m.group(1) for _, m in rows})
        out.notes.append(f"show_gids: {len(rows)} GID(s) on {devices} RDMA device(s); {said}")
    if any(n == 0 for _, n in counts) and not rows:
        seen = sorted({m.group(1) for ln in lines if (m := _RDMA_DEV.search(ln.text)) and ln.no not in out.claimed})
        ln = next(ln for ln, n in counts if n == 0)
        where = f" though the text lists {', '.join(seen[:4])}" if seen else ""
        out.errors.append(
            AppError(
                "rdma_no_gids",
                ln.no,
                ln.text.strip(),
                tool="show_gids",
                meaning=(
                    f"show_gids found no GID on any RDMA port{where}: no RDMA address is usable here, so RoCE cannot "
                    "connect (in a container: its netdev is not the RDMA device's, e.g. a CNI veth)"
                ),
            )
        )


def _ethtool(lines: list[Line], out: AppErrorsParse) -> None:
    """ethtool's 'Cannot get …: <errno>': ENODEV says the netdev is gone (a NIC or driver that dropped it); not
    supported or not permitted (a driver without the op, a container without CAP_NET_ADMIN) is no fault."""
    netdev = None
    for ln in lines:
        if "ethtool" in ln.text and (c := _ETHTOOL_CMD.search(ln.text)):
            netdev = c.group(1)
        if "Cannot " not in ln.text or not (m := _ETHTOOL_FAIL.search(ln.text)):
            continue
        out.claimed.add(ln.no)
        if m.group(2) != "No such device":
            continue
        said = re.sub(r"<[^<>]{1,60}>", "", ln.text).strip()[:240]  # an HTML paste's tags (a test log's font)
        out.errors.append(
            AppError(
                "nic_netdev_gone",
                ln.no,
                said,
                module=netdev,
                tool="ethtool",
                meaning=f"ethtool cannot get {m.group(1)}: the netdev "
                f"{netdev or 'it names'} is gone (ENODEV): its NIC or driver dropped it",
            )
        )


def _gmi(lines: list[Line], out: AppErrorsParse) -> None:
    """mthreads-gmi's table: its version, driver, and per GPU the model, bus id, memory and link (said only)."""
    at = next(((i, m) for i, ln in enumerate(lines) if "mthreads-gmi" in ln.text and (m := _GMI_HEAD.search(ln.text))), None)
    if at is None:
        return
    start, head = at
    gpus = []
    for ln in lines[max(start - 2, 0) :]:
        if not (_GMI_TABLE.match(ln.text) or "mthreads-gmi" in ln.text or not ln.text.strip()):
            if ln.no > lines[start].no:
                break
            continue
        out.claimed.add(ln.no)
        if m := _GMI_ROW.match(ln.text):
            gpus.append(f"{m.group(2)} at {m.group(3)} ({m.group(5)}/{m.group(6)} MiB)")
    out.notes.append(
        f"mthreads-gmi {head.group(1)}, driver {head.group(2)}: {len(gpus)} GPU(s)"
        + (f": {'; '.join(gpus)}" if gpus else "")
    )


def _fields(lines: list[Line], out: AppErrorsParse) -> None:
    """dcgmi dmon -l's catalogue of fields (name, short name, id): no device and no value in it, said only."""
    rows = [ln for ln in lines if "_" in ln.text and _FIELD_ROW.match(ln.text)]
    if len(rows) < 3:
        return
    out.claimed |= {ln.no for ln in rows} | {ln.no for ln in lines if _FIELD_HEAD.match(ln.text)}
    out.notes.append(f"dcgmi dmon -l: {len(rows)} DCGM field(s) listed (a catalogue of fields: no device, no value)")


def _dcgmi_stats(lines: list[Line], out: AppErrorsParse) -> None:
    """dcgmi stats' process box: its PID, GPU ids and rows read and said; DCGM's accounting of one process judges
    no module (its fields, 0 where the driver keeps no count, are the tool's reporting, not a fault)."""
    if not any("Execution Stats" in ln.text or "process info for PID" in ln.text or "statistics for job" in ln.text
               for ln in lines):
        return
    head = next((m for ln in lines if "process info" in ln.text and (m := _STATS_HEAD.search(ln.text))), None)
    gpus = [m.group(1) for ln in lines if "GPU ID" in ln.text and (m := _STATS_GPU.match(ln.text))]
    boxed = [ln for ln in lines if ln.text.lstrip().startswith(("|", "+")) and _STATS_ROW.match(ln.text)]
    job = next((m for ln in lines if "statistics for job" in ln.text and (m := _STATS_JOB.search(ln.text))), None)
    if job is not None:  # FX68A: `dcgmi stats -j`'s job summary
        return _stats_job(lines, boxed, job.group(1), out)
    if not gpus and head is None:
        return
    out.claimed |= {ln.no for ln in boxed} | {ln.no for ln in lines if "process info for PID" in ln.text}
    who = f"PID {head.group(1)} on {head.group(2)} GPU(s)" if head else "a process"
    out.notes.append(
        f"dcgmi stats: {who}, GPU ID(s) {', '.join(gpus) or 'not shown'}: DCGM's accounting of the process, read "
        "(its counters are the tool's report of the job, no judgement of a module)"
    )


def _stats_job(lines: list[Line], boxed: list[Line], job: str, out: AppErrorsParse) -> None:
    """dcgmi stats -j's Summary box: read and said (its Xid and ECC counts, its health); 'Not Specified' where the
    driver kept no count. A counted double-bit ECC error or critical Xid during the job is a finding (the knowledge
    base's ecc_uncorrectable_since_boot and xid) on the GPU the box names, else the node; its 'Overall Health' is
    DCGM's watches' verdict over the job, said, never a diag test's result (dcgm.py leaves the box alone)."""
    out.claimed |= {ln.no for ln in boxed} | {ln.no for ln in lines if "statistics for job" in ln.text or
                                               _STATS_RULE.match(ln.text) or _STATS_COMMAND.match(ln.text)}
    rows = {c[0]: c[1] for ln in boxed if (c := _row_cells(ln.text)) is not None}
    gpus = [m.group(1) for ln in lines if "GPU ID" in ln.text and (m := _STATS_GPU.match(ln.text))]
    module = f"GPU {gpus[0]}" if len(gpus) == 1 else None  # the job's summary over several GPUs names none
    for ln in boxed:
        cells = _row_cells(ln.text)
        if cells is None or not cells[1].isdigit() or int(cells[1]) == 0:
            continue
        kind = {"Double Bit ECC Errors": "ecc_uncorrectable", "Critical XID Errors": "dcgm_job_xid"}.get(cells[0])
        if kind is not None:
            out.errors.append(AppError(kind, ln.no, f"dcgmi stats -j job {job}: {cells[0]} {cells[1]}", module,
                                       "dcgmi stats"))
    said = [f"{k} {rows[k]}" for k in ("Critical XID Errors", "Single Bit ECC Errors", "Double Bit ECC Errors",
                                        "PCIe Replay Warnings", "Overall Health") if k in rows]
    out.notes.append(f"dcgmi stats -j: job {job}: {', '.join(said) or 'no event row'} (DCGM's job accounting; "
                     "'Not Specified' is no count kept, not a failure)")


def _row_cells(text: str) -> tuple[str, str] | None:
    """A '| key | value |' row's two cells."""
    s = text.strip()
    if len(s) < 3 or s[0] != "|" or s[-1] != "|" or s.count("|") != 3:
        return None
    key, _, value = s[1:-1].partition("|")
    return key.strip(), value.strip()


def _gddr6(lines: list[Line], out: AppErrorsParse) -> None:
    """The gddr6 tool's devices and VRAM temperatures: said (its sensor's reading, not a limit the tool judges)."""
    devs = [(ln, m) for ln in lines if "GDDR6" in ln.text and (m := _GDDR6_DEV.match(ln.text))]
    temps = [(ln, m) for ln in lines if "VRAM Temps" in ln.text and (m := _GDDR6_TEMPS.match(ln.text))]
    if not devs and not temps:
        return
    out.claimed |= {ln.no for ln, _ in devs} | {ln.no for ln, _ in temps}
    said = [f"{m.group(1)} ({m.group(2)}, 0x{m.group(3)}) at pci={m.group(4)}" for _, m in devs]
    read = [int(t) for _, m in temps for t in re.findall(r"\d{1,3}", m.group(1))]
    out.notes.append(
        f"gddr6: {len(devs)} GPU(s){': ' + '; '.join(said[:8]) if said else ''}"
        + (f"; VRAM temperatures {', '.join(f'{t} C' for t in read[:16])}" if read else "")
        + " (the GDDR6 memory's own sensor, said only)"
    )
