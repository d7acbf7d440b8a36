"""The CUDA samples operators run first: deviceQuery, p2pBandwidthLatencyTest, bandwidthTest and busGrind.

deviceQuery lists the modules the runtime sees (``Device 0: "NAME"``, its memory and its PCI
domain / bus / location in decimal) or stops with the runtime's error (``cudaGetDeviceCount
returned 35 -> CUDA driver version is insufficient …``): the modules become a module list, the
error an application error line (app_errors kinds). p2pBandwidthLatencyTest prints its devices,
which pairs can reach each other (``Device=0 CAN Access Peer Device=1``, the P2P Connectivity
Matrix) and bandwidth matrices with P2P disabled and enabled, one way and both ways: each matrix
is kept under its own name, as nvbandwidth's are, so doctor prices the P2P=Enabled ones against the
design of the modules named (a pair the connectivity matrix says cannot reach its peer is left
blank: its copies went through host memory by design of the test). bandwidthTest's host<->device
figures of one device are kept as a one-cell table (PINNED memory only: pageable copies are not a
link's figure), each run of a file under its own name ('… run 2'), so doctor compares a module's runs.
busGrind's host/device matrices (D2H, H2D, BiDir by device) become host tables, one per direction.
p2pBandwidthLatencyTest's latency matrices (us; GPU and CPU, P2P disabled and enabled) are read too, each under
its own name: no design gives a latency to judge them by, so they are kept and said, never priced as GB/s."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures import hip_bus
from gpuvet.captures.app_errors import KINDS
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.records import AMBIGUOUS_ECC, AppError, NvbDevice, SmiTextModule
from gpuvet.captures.smi_text import SmiText
from gpuvet.captures.text import MAX_MODULES, Line, number

P2P = "p2pBandwidthLatencyTest"
BANDWIDTH_TEST = "bandwidthTest"
BUS_GRIND = "busGrind"
_EMULATOR = lazy(r"Device Emulation \(CPU\)$")  # what CUDA < 3.0 lists where it found no module
_DQ_DEVICE = lazy(r'^\s*Device (\d{1,4}): "(.+)"\s*$')  # a name over _NAME is cut, said
_NAME = 96
_DQ_DETECTED = lazy(r"^\s*Detected (\d{1,6}) CUDA Capable device")
_DQ_MEMORY = lazy(r"^\s*Total amount of global memory:\s+(\d+) MBytes")
# the samples print 'Device PCI Domain ID / …' (CUDA 8 to 12); a paste may lose its first word
_DQ_PCI = lazy(r"^\s*(?:Device )?PCI Domain ID / Bus ID / location ID:\s+(\d{1,5}) / (\d{1,3}) / (\d{1,3})\s*$")
# '> Peer access from NAME (GPU0) -> NAME (GPU1) : No' (simpleP2P: '> Peer-to-Peer (P2P) access from …')
_DQ_PEER = lazy(r"^\s*(?:>\s?)?Peer(?: access|-to-Peer \(P2P\) access) from .{0,120}?\(GPU(\d{1,4})\) -> "
                r".{0,120}?\(GPU(\d{1,4})\) : (Yes|No)\s*$")
_DQ_ECC = lazy(r"^\s*Device has ECC support:\s+(Enabled|Disabled)\s*$")
_DQ_CAPABILITY = lazy(r"^\s*CUDA Capability Major/Minor version number:\s+(\d{1,2}\.\d{1,2})\s*$")
_DQ_VERSIONS = lazy(r"^\s*CUDA Driver Version / Runtime Version\s+([\d.]+) / ([\d.]+)")
_DQ_MARKS = lazy(r"^\s*(?:\S*deviceQuery Starting|CUDA Device Query \(Runtime API\)|Detected \d+ CUDA Capable"
                 r"|There (?:are|is) no available device|cudaGetDeviceCount returned \d+|-> |deviceQuery, CUDA Driver"
                 r"|Result = (?:PASS|FAIL)|Peer access from |Compute Mode:\s*$|< (?:Default|Exclusive|Prohibited) )")
_DQ_FIELD = lazy(r"^\s{2,}[A-Z(][\w ()/,.-]{3,70}?:?\s{2,}\S")  # '  CUDA Capability Major/Minor …   8.6'
_RESULT = lazy(r"^\s*Result = (PASS|FAIL)\s*$")

# 'Device: 0, NAME, pciBusID: …': a run of such lines may lose its 'Device: ' to the launcher-prefix peeler
_P2P_DEVICE = lazy(r"^\s*(?:Device: )?(\d{1,4}), (.{1,96}?), pciBusID: ([0-9a-fA-F]+), pciDeviceID: ([0-9a-fA-F]+), "
                   r"pciDomainID:\s*([0-9a-fA-F]+)\s*$")
_P2P_ACCESS = lazy(r"^\s*Device=(\d+) (CAN|CANNOT) Access Peer Device=(\d+)\s*$")
_P2P_TITLE = lazy(r"^\s*(Unidirectional|Bidirectional) P2P=(Enabled|Disabled) Bandwidth (?:\(P2P (Writes|Reads)\) )?"
                  r"Matrix \(GB/s\)\s*$")
_P2P_OTHER = lazy(r"^\s*(?:\[P2P \(Peer-to-Peer\) GPU Bandwidth Latency Test\]|P2P Connectivity Matrix|"
                  r"\*\*\*NOTE:|So you can see lesser Bandwidth|P2P=(?:Enabled|Disabled) Latency|"
                  r"(?:D\\D|GPU|CPU)(?:\s+\d+)+\s*$|\d+(?:\s+-?[\d.]+)+\s*$)")
_MATRIX_HEAD = lazy(r"^\s*D\\D((?:\s+\d+)+)\s*$")
# 'P2P=Disabled Latency Matrix (us)', 'P2P=Enabled Latency (P2P Writes) Matrix (us)'; each over a 'GPU 0 1 …' table
# and a 'CPU 0 1 …' one
_LATENCY_TITLE = lazy(r"^\s*P2P=(Enabled|Disabled) Latency (?:\(P2P (Writes|Reads)\) )?Matrix \(us\)\s*$")
_LATENCY_HEAD = lazy(r"^\s*(GPU|CPU)(?:\s+\d+)+\s*$")
_MATRIX_ROW = lazy(r"^\s*(\d+)((?:\s+(?:-?[\d.]+|N/A|inf|nan))+)\s*$", re.I)

_BT_DEVICE = lazy(r"^\s*Device (\d{1,4}): (.{1,96}?)\s*$")
_BT_SECTION = lazy(r"^\s*(Host to Device|Device to Host|Device to Device) Bandwidth, (\d+) Device\(s\)\s*$")
_BT_MEMORY = lazy(r"^\s*(PINNED|PAGEABLE) Memory Transfers\s*$")
_BT_UNIT = lazy(r"^\s*Transfer Size \(Bytes\)\s+Bandwidth\((GB|MB)/s\)\s*$")
_BT_ROW = lazy(r"^\s*(\d+)\s+(\d+(?:\.\d+)?)\s*$")  # a size and its figure; "12899.9..." is no figure
_BT_OTHER = lazy(r"^\s*(?:\[CUDA Bandwidth Test\] - Starting|Running on\.\.\.|Quick Mode|Range Mode|Shmoo Mode|"
                 r"NOTE: The CUDA Samples are not meant)")


@dataclass
class CudaSamplesParse:
    modules: SmiText = field(default_factory=SmiText)  # deviceQuery's devices
    errors: list[AppError] = field(default_factory=list)  # deviceQuery stopped with the runtime's error
    matrices: dict[str, list[list[float | None]]] = field(default_factory=dict)  # as nvbandwidth's: name -> GB/s
    latencies: dict[str, list[list[float | None]]] = field(default_factory=dict)  # p2pBandwidthLatencyTest's, us
    devices: list[NvbDevice] = field(default_factory=list)  # the benchmarks' own device lines
    no_peer: set[tuple[int, int]] = field(default_factory=set)  # pairs the test says cannot access each other
    peer_said: dict[tuple[int, int], str] = field(default_factory=dict)  # deviceQuery's own line for such a pair
    passed: bool | None = None  # the sample's own 'Result = PASS/FAIL'
    kinds: list[str] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def parse(lines: list[Line]) -> CudaSamplesParse:
    out = CudaSamplesParse()
    text = "\n".join(ln.text for ln in lines[:4000])
    if "deviceQuery" in text or "CUDA Device Query" in text or "cudaGetDeviceCount returned" in text:  # or its tail
        _device_query(lines, out)
    if ("Bandwidth Matrix (GB/s)" in text or "Access Peer Device=" in text  # an excerpt of (P2P Writes) tables too
            or "Matrix (us)" in text  # its latency tables alone
            or any(_P2P_TITLE.match(ln.text) for ln in lines[:4000] if "Matrix (GB/s)" in ln.text)):
        _p2p(lines, out)
    if "[CUDA Bandwidth Test]" in text or _BT_SECTION.search(text):
        _bandwidth_test(lines, out)
    if "Bandwidth Matrix (GB/s), memory=" in text:
        _bus_grind(lines, out)
    if any(mark in text for mark in hip_bus.MARKS):  # HIP's bus bandwidth sample (captures/hip_bus.py)
        hip = hip_bus.read(lines, bound_bytes())
        out.matrices.update(hip.tables)
        out.claimed |= hip.claimed
        out.kinds += [hip_bus.HIP_BUS] if hip.tables else []
        out.devices += [NvbDevice(0, hip.device)] if hip.device and not out.devices else []  # the run's one device
    if not out.modules.modules:
        _tested_modules(out)
    return out


def _tested_modules(out: CudaSamplesParse) -> None:
    """The modules p2pBandwidthLatencyTest or bandwidthTest ran on, as a module list where no deviceQuery
    gave one: each device line (index, name, bus id), else one unnamed module per row of a P2P matrix
    (the test timed that many devices)."""
    named = {d.index: d for d in out.devices}
    square = max((len(rows) if k.startswith(P2P) else len(rows[0]) for k, rows in [*out.matrices.items(),
                  *out.latencies.items()] if k.startswith((P2P, BUS_GRIND)) and rows), default=0)  # busGrind: a
    # column per device
    for i in sorted(set(named) | set(range(square)))[:MAX_MODULES]:
        d = named.get(i)
        out.modules.modules.append(SmiTextModule(d.bus_id if d and d.bus_id else f"GPU {i}",
                                                 d.name if d else "", {"Index": str(i)}))
    if out.modules.modules and not named:
        tool = P2P if any(k.startswith(P2P) for k in [*out.matrices, *out.latencies]) else BUS_GRIND
        out.notes.append(f"{tool}: {square} device(s) timed, none named by a device line: listed with nothing read")


# --- deviceQuery ---------------------------------------------------------------------------------
def _device_query(lines: list[Line], out: CudaSamplesParse) -> None:
    current: SmiTextModule | None = None
    claimed: set[int] = set()
    for i, ln in enumerate(lines):
        if (d := _DQ_DEVICE.match(ln.text)) is not None and len(out.modules.modules) < MAX_MODULES:
            current = SmiTextModule(f"GPU {int(d.group(1))}", _name(out, d.group(2), ln.no),
                                    {"Index": str(int(d.group(1)))})
            claimed.add(ln.no)
            if _EMULATOR.match(d.group(2)):  # CUDA < 3.0's emulation device: the CPU, no module (issue 46, T)
                out.notes.append(f"deviceQuery: device {d.group(1)} (line {ln.no}) is {d.group(2)!r}, the CUDA "
                                 "runtime's CPU emulator (no CUDA module found): not listed as a module")
                continue
            if _again(out, current, ln.no):
                continue
            out.modules.modules.append(current)
        elif current is not None and (p := _DQ_PCI.match(ln.text)) is not None:
            current.bus_id = f"{int(p.group(1)):04X}:{int(p.group(2)):02X}:{int(p.group(3)):02X}.0"
            claimed.add(ln.no)
        elif (q := _DQ_PEER.match(ln.text)) is not None:
            _peer(out, int(q.group(1)), int(q.group(2)), q.group(3) == "Yes", ln.text.strip())
            claimed.add(ln.no)
        elif current is not None and (c := _DQ_CAPABILITY.match(ln.text)) is not None:
            current.fields["Compute Capability"] = c.group(1)  # the key --query-gpu's compute_cap is read under
            claimed.add(ln.no)
        elif current is not None and (e := _DQ_ECC.match(ln.text)) is not None:
            current.fields["ECC Mode/Current"] = e.group(1)  # the mode -q prints, so inventory and rules read it
            current.fields[AMBIGUOUS_ECC] = e.group(1)  # issue 46: its 'Disabled' is also 'no ECC' (doctor: ecc_health)
            claimed.add(ln.no)
        elif current is not None and (m := _DQ_MEMORY.match(ln.text)) is not None:
            current.fields["FB Memory Usage/Total"] = f"{m.group(1)} MiB"  # deviceQuery's MBytes are 2**20 bytes
            claimed.add(ln.no)
        elif (v := _DQ_VERSIONS.match(ln.text)) is not None:
            if out.modules.cuda is None:  # the first run's: a later run is another listing (_again)
                out.modules.cuda, out.modules.cuda_runtime = v.group(1), v.group(2)
            claimed.add(ln.no)
        elif _DQ_MARKS.match(ln.text) or (current is not None and _DQ_FIELD.match(ln.text)):
            claimed.add(ln.no)
            _device_query_line(lines, i, out)
    if claimed:
        _detected(lines, out)
        out.claimed |= claimed
        out.kinds.append("deviceQuery")
        out.modules.claimed |= claimed
        said = f"{len(out.modules.modules)} device(s)" if out.modules.modules else "no device"
        out.notes.append(f"deviceQuery: {said} read{'; it failed: ' + out.errors[0].text if out.errors else ''}")


def _again(out: CudaSamplesParse, device: SmiTextModule, no: int) -> bool:
    """A device index an earlier deviceQuery run in the text already listed: a later run pasted after it (another
    machine's, as a post comparing cards shows, or a rerun) is read as its own listing, said, never merged into
    the first one's module list (two GPU 0s in one list would be refused)."""
    if all(m.fields.get("Index") != device.fields["Index"] for m in out.modules.modules):
        return False
    out.notes.append(f"deviceQuery: line {no} lists device {device.fields['Index']} ({device.product or 'unnamed'}) "
                     "again: a later run (another machine's listing, or a rerun), read as its own, not merged into "
                     "the first run's module list")
    return True


def _name(out: CudaSamplesParse, name: str, no: int) -> str:
    """A device's name as listed; one longer than any module's (a pasted blob) is cut, and said."""
    if len(name) <= _NAME:
        return name
    out.notes.append(f"deviceQuery: line {no}: a device name of {len(name):,} characters (no module's is that "
                     f"long): its first {_NAME} kept")
    return name[:_NAME]


def _detected(lines: list[Line], out: CudaSamplesParse) -> None:
    """deviceQuery's count of the devices it found against those the paste lists: the others were cut."""
    said = next((int(m.group(1)) for ln in lines[:4000] if (m := _DQ_DETECTED.match(ln.text)) is not None), None)
    listed = len(out.modules.modules)
    if said is not None and said > listed:
        out.notes.append(f"deviceQuery: it detected {said} device(s), {listed} listed in the paste: "
                         f"{said - listed} not in it (not read)")


def _peer(out: CudaSamplesParse, i: int, j: int, yes: bool, said: str) -> None:
    """deviceQuery's peer access line: a pair without it is judged against the modules' design (doctor)."""
    if yes or i == j or (min(i, j), max(i, j)) in out.no_peer:
        return
    out.no_peer.add((min(i, j), max(i, j)))
    out.peer_said[(min(i, j), max(i, j))] = said[:300]
    out.notes.append(f"deviceQuery: no peer access between GPU {i} and GPU {j} (judged against the modules' design)")


def _device_query_line(lines: list[Line], i: int, out: CudaSamplesParse) -> None:
    """deviceQuery's error (the line after 'cudaGetDeviceCount returned N') and its Result line."""
    ln = lines[i]
    if (r := _RESULT.match(ln.text)) is not None:
        out.passed = r.group(1) == "PASS"
    arrow = ln.text.strip().startswith("->")
    if not arrow and "no available device" not in ln.text:  # older samples: 'There are no available device(s) …'
        return
    kind = next((k for k, pattern in KINDS.items() if pattern.search(ln.text)), None)
    before = lines[i - 1].text.strip() if i and arrow else ""
    if before.startswith("cudaGetDeviceCount returned") and kind in (None, "cuda_runtime_error"):
        kind = "no_device"  # the runtime could not count the modules (999, 3): none is there to use, whatever the cause
    out.errors.append(AppError(kind or "cuda_runtime_error", ln.no, f"{before} {ln.text.strip()}".strip()[:300],
                               tool="deviceQuery"))


# --- p2pBandwidthLatencyTest --------------------------------------------------------------------
# the sample prints its bandwidth matrices in this order: rows whose title a paste cut are the matrix before the
# first title read (its last rows: the cut took the top)
_P2P_BEFORE = {("Bidirectional", "Enabled"): "bidirectional P2P=Disabled",
               ("Bidirectional", "Disabled"): "unidirectional P2P=Enabled",
               ("Unidirectional", "Enabled"): "unidirectional P2P=Disabled"}


def _p2p(lines: list[Line], out: CudaSamplesParse) -> None:
    name: str | None = None
    rows: list[list[float | None]] = []
    untitled: list[tuple[int, list[float | None]]] = []  # matrix rows above the first title (issue 46)
    latency: list[int] = []  # the indices of the latency tables' titles
    for i, ln in enumerate(lines):
        if name is None and not out.matrices and (r := _MATRIX_ROW.match(ln.text)) is not None:
            untitled.append((int(r.group(1)), [number(x) for x in r.group(2).split()]))
        if (d := _P2P_DEVICE.match(ln.text)) is not None:
            bus = f"{int(d.group(5), 16):04X}:{int(d.group(3), 16):02X}:{int(d.group(4), 16):02X}.0"
            out.devices.append(NvbDevice(int(d.group(1)), d.group(2).strip(), bus))
        elif (a := _P2P_ACCESS.match(ln.text)) is not None:
            if a.group(2) == "CANNOT":
                out.no_peer.add((int(a.group(1)), int(a.group(3))))
        elif (t := _P2P_TITLE.match(ln.text)) is not None:
            _keep(out, name, rows)
            if untitled and not out.matrices and (before := _P2P_BEFORE.get((t.group(1), t.group(2)))):
                _keep_tail(out, f"{P2P} {before}" + (f" ({t.group(3).lower()})" if t.group(3) else ""), untitled)
            untitled = []
            name = f"{P2P} {t.group(1).lower()} P2P={t.group(2)}" + (f" ({t.group(3).lower()})" if t.group(3) else "")
            rows = []
        elif "Latency" in ln.text and "Matrix" in ln.text:
            _keep(out, name, rows)
            name, rows = None, []
            latency += [i] if _LATENCY_TITLE.match(ln.text) else []
        elif name is not None and (r := _MATRIX_ROW.match(ln.text)) is not None and int(r.group(1)) == len(rows):
            rows.append([number(x) for x in r.group(2).split()])
        elif name is not None and _MATRIX_HEAD.match(ln.text):
            pass
        elif not _P2P_OTHER.match(ln.text):
            if name is not None:
                _keep(out, name, rows)
                name = None
            untitled = []
            continue
        out.claimed.add(ln.no)
    _keep(out, name, rows)
    _latencies(lines, latency, out)
    if out.matrices or out.devices or out.latencies:
        out.kinds.append(P2P)
        if out.no_peer:
            pairs = ", ".join(f"{a}->{b}" for a, b in sorted(out.no_peer)[:8])
            out.notes.append(f"{P2P}: device pairs without P2P access ({pairs}): their P2P=Enabled cells are copies "
                             "through host memory, left out of the P2P tables")


def _latencies(lines: list[Line], titles: list[int], out: CudaSamplesParse) -> None:
    """The latency tables under each of their titles (indices in ``lines``), said read and not judged."""
    for i in titles:
        _latency(lines, i, out)
    if out.latencies:
        out.notes.append(f"{P2P}: latency matrices read (us): {', '.join(out.latencies)}; no design figure gives "
                         "a latency to judge them by: not judged")


def _latency(lines: list[Line], at: int, out: CudaSamplesParse) -> None:
    """The latency tables under the title at ``at``: the sample prints a GPU table and a CPU one (each under its
    'GPU 0 1 …' or 'CPU 0 1 …' head, the CPU's the time the host thread waits), each kept whole (square)."""
    if (t := _LATENCY_TITLE.match(lines[at].text)) is None:
        return
    base = f"{P2P} latency P2P={t.group(1)}" + (f" ({t.group(2).lower()})" if t.group(2) else "")
    side: str | None = None
    rows: list[list[float | None]] = []
    for ln in lines[at + 1:at + 2 * (MAX_MODULES + 2)]:
        if (h := _LATENCY_HEAD.match(ln.text)) is not None:
            _keep_latency(out, base, side, rows)
            side, rows = h.group(1), []
        elif side is not None and (r := _MATRIX_ROW.match(ln.text)) is not None and int(r.group(1)) == len(rows):
            rows.append([number(x) for x in r.group(2).split()])
        elif ln.text.strip():
            break
    _keep_latency(out, base, side, rows)


def _keep_latency(out: CudaSamplesParse, base: str, side: str | None, rows: list[list[float | None]]) -> None:
    """One latency table, kept where whole (as many rows as columns), else said cut."""
    if side is None or not rows:
        return
    if any(len(r) != len(rows) for r in rows):
        out.notes.append(f"{P2P}: '{base} {side}' is cut or ragged ({len(rows)} row(s)): not read")
        return
    out.latencies[f"{base} {side} (us)"] = rows


def _keep(out: CudaSamplesParse, name: str | None, rows: list[list[float | None]]) -> None:
    """A matrix read whole (as many rows as columns); a P2P=Enabled matrix's pairs without peer access blanked."""
    if name is None or not rows or any(len(r) != len(rows) for r in rows):
        if name is not None and rows:
            out.notes.append(f"{P2P}: '{name}' is cut or ragged ({len(rows)} row(s)): not read")
        return
    if "P2P=Enabled" in name:
        rows = [[None if (i, j) in out.no_peer else x for j, x in enumerate(r)] for i, r in enumerate(rows)]
    out.matrices[name] = rows


def _keep_tail(out: CudaSamplesParse, name: str, tail: list[tuple[int, list[float | None]]]) -> None:
    """A matrix's last rows, its top cut with its title (named by the print order): kept, the cut rows blank,
    when they run k..n-1 with n cells each."""
    n = len(tail[-1][1])
    if n < 2 or [i for i, _ in tail] != list(range(n - len(tail), n)) or any(len(r) != n for _, r in tail):
        return
    blank: list[list[float | None]] = [[None] * n for _ in range(n - len(tail))]
    out.matrices[name] = blank + [r for _, r in tail]
    out.notes.append(f"{P2P}: rows {n - len(tail)}-{n - 1} above the first title read as the end of '{name}' "
                     "(the sample prints it there; its title and first rows are cut)")


# --- bandwidthTest ----------------------------------------------------------------------------------
def _bandwidth_test(lines: list[Line], out: CudaSamplesParse) -> None:
    """Each section ('Host to Device Bandwidth, 1 Device(s)' and its table) is one run, its figure the last row:
    a range or shmoo table's rows are one run's transfer sizes, not runs of their own."""
    device: int | None = None
    section: tuple[str, int] | None = None
    memory, scale = "PINNED", 1.0
    last: _BtRow | None = None  # the open section's last row, kept when the section ends
    claimed: set[int] = set()
    for ln in lines:
        if (d := _BT_DEVICE.match(ln.text)) is not None and not d.group(2).startswith('"'):
            device = int(d.group(1))  # each run names its device: a second run's may be another module
            out.devices += [] if any(n.index == device for n in out.devices) else [NvbDevice(device, d.group(2))]
        elif (s := _BT_SECTION.match(ln.text)) is not None:
            _bt_cell(out, last)
            section, last = (s.group(1), int(s.group(2))), None
        elif (m := _BT_MEMORY.match(ln.text)) is not None:
            memory = m.group(1)
        elif (u := _BT_UNIT.match(ln.text)) is not None:
            scale = 1.0 if u.group(1) == "GB" else 1e-3
        elif section is not None and (r := _BT_ROW.match(ln.text)) is not None:
            last = _BtRow(section, memory, device, int(r.group(1)), float(r.group(2)) * scale)
        elif not (_BT_OTHER.match(ln.text) or _RESULT.match(ln.text)):
            continue
        claimed.add(ln.no)
    _bt_cell(out, last)
    if any(k.startswith(BANDWIDTH_TEST) for k in out.matrices):
        out.claimed |= claimed
        out.kinds.append(BANDWIDTH_TEST)


def bound_bytes() -> float:
    """A transfer at least this large is bound by the link, not by each copy's latency (quick mode copies 32 MB):
    knowledge/faults.yaml's bandwidth_test_bound_bytes, read when a figure is (not when the readers load)."""
    from gpuvet.knowledge import threshold

    return threshold("bandwidth_test_bound_bytes")


@dataclass(frozen=True)
class _BtRow:
    section: tuple[str, int]
    memory: str
    device: int | None
    size: int  # bytes
    gbps: float


def _bt_cell(out: CudaSamplesParse, row: _BtRow | None) -> None:
    """One run's figure: a table of one cell at the device's column. A run whose largest transfer is below
    bound_bytes() is named with its size ('(pinned, 1000 B)'): its figure is each copy's latency, neither
    priced nor compared with a bandwidth-bound run. Several devices at once (--device=all) print their sum:
    kept, not a one-link figure."""
    if row is None:
        return
    kind = {"Host to Device": "host_to_device", "Device to Host": "device_to_host",
            "Device to Device": "device_local"}[row.section[0]]
    col = row.device if row.device is not None and row.section[1] == 1 else 0
    summed = "" if row.section[1] == 1 else f", {row.section[1]} devices summed"
    small = "" if row.size >= bound_bytes() else f", {row.size} B"
    label = f"{BANDWIDTH_TEST} {kind} ({row.memory.lower()}{summed}{small})"
    if label in out.matrices and _bt_free(out.matrices[label][0], col):  # another module's run: its own column
        cells = out.matrices[label][0]
        out.matrices[label] = [[*cells, *[None] * (col + 1 - len(cells))]]
        out.matrices[label][0][col] = row.gbps
        return
    run = 1
    while (f"{label} run {run}" if run > 1 else label) in out.matrices:  # the same test again: another run
        run += 1
    out.matrices[f"{label} run {run}" if run > 1 else label] = [[None] * col + [row.gbps]]


def _bt_free(cells: list[float | None], col: int) -> bool:
    """The column holds no figure yet: a run of another device than those the table has."""
    return col >= len(cells) or cells[col] is None


# --- busGrind -----------------------------------------------------------------------------------------
_BG_TITLE = lazy(r"^\s*(Concurrent )?(Host/Device|Device/Device) Bandwidth Matrix \(GB/s\), memory=(\w+)\s*$")
_BG_HEAD = lazy(r"^\s*(?:Dir|D)\\D((?:\s+\d+)+)(\s+Total)?\s*$")
_BG_ROW = lazy(r"^\s*(D2H|H2D|BiDir|\d{1,4})((?:\s+(?:-?[\d.]+|N/A))+)\s*$")
_BG_OTHER = lazy(r"^\s*(?:\*{8,}|Test Description: .*)\s*$")
_BG_DIRECTION = {"D2H": "device_to_host", "H2D": "host_to_device", "BiDir": "host_bidirectional"}


def _bus_grind(lines: list[Line], out: CudaSamplesParse) -> None:
    """busGrind's matrices: a host/device one (rows D2H, H2D, BiDir; a column per device) becomes one table per
    direction with the host as its only row, a device/device one a square table; 'Concurrent' ones (every
    device at once, sharing the host's links by design) are kept under their own names; a Total column is
    left out."""
    title: tuple[str, str, str] | None = None
    width = 0
    claimed: set[int] = set()
    for ln in lines:
        if (t := _BG_TITLE.match(ln.text)) is not None:
            title, width = ("concurrent " if t.group(1) else "", t.group(2), t.group(3).lower()), 0
        elif title is not None and (h := _BG_HEAD.match(ln.text)) is not None:
            width = len(h.group(1).split())
        elif title is not None and width and (r := _BG_ROW.match(ln.text)) is not None:
            _bg_row(out, title, r.group(1), [number(x) for x in r.group(2).split()][:width])
        elif not _BG_OTHER.match(ln.text):
            continue
        claimed.add(ln.no)
    if any(k.startswith(BUS_GRIND) for k in out.matrices):
        out.claimed |= claimed
        out.kinds.append(BUS_GRIND)


def _bg_row(out: CudaSamplesParse, title: tuple[str, str, str], label: str, cells: list[float | None]) -> None:
    concurrent, kind, memory = title
    if kind == "Host/Device" and label in _BG_DIRECTION:
        out.matrices[f"{BUS_GRIND} {concurrent}{_BG_DIRECTION[label]} ({memory})"] = [cells]
    elif kind == "Device/Device" and label.isdigit():
        out.matrices.setdefault(f"{BUS_GRIND} {concurrent}device_to_device ({memory})", []).append(cells)
