"""Issue 46 (R14C): what rocminfo prints beyond an agent's name, and around its agents. Its first line names the
kernel driver it found (rocminfo.cc's check of /sys/module: 'ROCk module version 6.2.4 is loaded' since ROCm 6,
'ROCk module is loaded' before; Hygon DTK's build prints 'hygon module is loaded', often in ANSI colour); a GPU
agent's gfx target (its Name), compute units ('Compute Unit:'), Chip ID and BDFID (bus << 8 | device << 3 |
function, no domain) stand below its Name. A paste of the head alone ('rocminfo --support | head': the driver line
and 'HSA System Attributes'), with `rocm-smi -V`'s versions beside it, is rocminfo's healthy answer: read, the
driver and runtime said, no module listed (the head names none), never refused. The 'NOT loaded' / 'NOT live'
lines are faults, captures/hip_errors.py's: not read here."""

from __future__ import annotations

from dataclasses import dataclass

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.marks import holding
from gpuvet.captures.records import ListedParse
from gpuvet.captures.text import Line

TOOL = "rocminfo"
_DRIVER = lazy(r"^\s*(?:\x1b\[[0-9;]*m)?(ROCk|hygon|HYGON) module (?:version (\S{1,40}) )?is loaded\b")
_ROCM_SMI_V = lazy(r"\bROCM-SMI version:\s*(\S{1,40})|\bROCM-SMI-LIB version:\s*(\S{1,40})")
# the 'HSA System Attributes' block's own keys (rocminfo.cc's system attributes, every version's spelling)
_SYSTEM = lazy(r"^\s*(Runtime Version|Runtime Ext Version|System Timestamp Freq\.|Sig\. Max Wait Duration|"
               r"Machine Model|System Endianness|Mwaitx|DMAbuf Support|XNACK enabled|VMM Support):\s+(\S.*?)\s*$")
_SYSTEM_WORDS = ("Runtime ", "System Timestamp", "Sig. Max", "Machine Model", "System Endianness", "Mwaitx", "DMAbuf",
                 "XNACK enabled", "VMM Support")
_RULE = lazy(r"^\s*=+\s*$|^\s*HSA System Attributes\s*$")
MARKERS = ("HSA System Attributes", "module version", "module is loaded")
_AGENT_END = lazy(r"^\s*\*{3,}\s*$|^\s*Agent \d{1,3}\s*$")
_FIELD = lazy(r"^\s*(Compute Unit|BDFID|Chip ID):\s+(\d{1,9})(?:\((0x[0-9a-fA-F]{1,8})\))?\s*$")
_SPAN = 40  # lines below a Name its agent's identity fields stand within (rocminfo prints them before its caches)


@dataclass(frozen=True)
class AgentDetail:
    """A GPU agent's fields as rocminfo printed them; None where the paste holds none."""

    compute_units: str | None
    bus_id: str | None
    chip_id: str | None
    lines: frozenset[int]


def agent_end(text: str) -> bool:
    """The line is an agent's head (its rule of '*' or 'Agent N'): the agent above it ends there."""
    return _AGENT_END.match(text) is not None


def driver(lines: list[Line]) -> tuple[str, int] | None:
    """The kernel driver rocminfo's first line names ('amdgpu (ROCk module 6.2.4)') and its line; None without."""
    for i in holding(lines, ("module ",)):
        if (m := _DRIVER.match(lines[i].text)) is not None:
            stack = "amdgpu (ROCk module" if m.group(1) == "ROCk" else "hygon DCU driver (module"
            return (f"{stack} {m.group(2)})" if m.group(2) else f"{stack} loaded, version not printed)"), lines[i].no
    return None


def detail(lines: list[Line], at: int) -> AgentDetail:
    """The fields of the agent whose Name stands at index ``at``, up to the next agent's head."""
    found: dict[str, str] = {}
    read: set[int] = set()
    for ln in lines[at + 1:at + 1 + _SPAN]:
        if _AGENT_END.match(ln.text):
            break
        if (m := _FIELD.match(ln.text)) is not None and m.group(1) not in found:
            found[m.group(1)] = m.group(3) if m.group(1) == "Chip ID" and m.group(3) else m.group(2)
            read.add(ln.no)
    return AgentDetail(found.get("Compute Unit"), bus(found.get("BDFID")), found.get("Chip ID"), frozenset(read))


def bus(bdfid: str | None) -> str | None:
    """rocminfo's BDFID (bus << 8 | device << 3 | function, in decimal) as a bus id, domain 0 (it prints none)."""
    if bdfid is None or not bdfid.isdigit() or int(bdfid) > 0xFFFF:
        return None
    v = int(bdfid)
    return f"0000:{v >> 8:02X}:{(v >> 3) & 0x1F:02X}.{v & 7}"


def said(lines: list[Line], out: ListedParse) -> None:
    """The driver line and the system attributes of a listing read: the driver kept (the inventory's), both said
    in a note, their lines claimed."""
    if (d := driver(lines)) is not None:
        out.driver = out.driver or d[0]
        out.claimed.add(d[1])
    system = {m.group(1): (lines[i].no, m.group(2)) for i in holding(lines, ("Runtime ",))  # only the lines
              if (m := _SYSTEM.match(lines[i].text)) is not None}  # holding the words (issue 43: no walk)
    out.claimed |= {no for no, _ in system.values()}
    runtime = [f"{key} {system[key][1]}" for key in ("Runtime Version", "Runtime Ext Version") if key in system]
    if d is not None or runtime:
        out.notes.append(f"rocminfo: driver {d[0] if d else 'line not in the paste'}; HSA "
                         + (", ".join(runtime) if runtime else "runtime version not in the paste"))


def read_head(lines: list[Line], out: ListedParse) -> None:
    """rocminfo's head alone (its driver line and 'HSA System Attributes', no agent): read as rocminfo, the driver
    and runtime version said, `rocm-smi -V`'s versions beside it read too; only where nothing else was listed."""
    if out.modules or TOOL in out.kinds:
        return
    system = [(lines[i].no, m.group(1), m.group(2)) for i in holding(lines, _SYSTEM_WORDS)
              if (m := _SYSTEM.match(lines[i].text)) is not None]  # only the lines holding its words (issue 43)
    found = driver(lines)
    if found is None or not system:
        return
    smi = [(lines[i].no, f"ROCM-SMI{'-LIB' if m.group(2) else ''} {m.group(1) or m.group(2)}")
           for i in holding(lines, ("ROCM-SMI",)) for m in _ROCM_SMI_V.finditer(lines[i].text)]
    versions = [v for _, v in smi]
    out.driver = out.driver or found[0]
    out.claimed |= {found[1]} | {no for no, _, _ in system} | {no for no, _ in smi}
    out.claimed |= {lines[i].no for i in holding(lines, ("==", "HSA System Attributes")) if _RULE.match(lines[i].text)}
    out.kinds.append(TOOL)
    runtime = next((v for _, k, v in system if k == "Runtime Version"), "not shown")
    ext = next((f", Runtime Ext Version {v}" for _, k, v in system if k == "Runtime Ext Version"), "")
    out.notes.append(f"rocminfo: its head only (driver {found[0]}, HSA runtime {runtime}{ext}"
                     + (f"; rocm-smi -V: {', '.join(versions)}" if versions else "")
                     + "): no agent in the paste, so no module listed")
