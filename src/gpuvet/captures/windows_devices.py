"""Issue 46 (WIN): Device Manager's problem code of a display adapter, as each Windows tool shows it: the device's
Properties ('Device status' and its sentence, '… (Code 43)'), dxdiag ('Device Problem Code: Code 43'),
Win32_VideoController / Win32_PnPEntity ('ConfigManagerErrorCode : 43'), Get-PnpDevice ('ConfigManagerErrorCode :
CM_PROB_FAILED_POST_START', 'Problem : …') and ``pnputil /enum-devices /problem`` ('Problem Code: 43 (0x2B)
[CM_PROB_FAILED_POST_START]'). The codes and names are Cfg.h's (Microsoft's Device Manager error messages).

A code says why Windows does not use the adapter: 43 (CM_PROB_FAILED_POST_START), 10 (FAILED_START) and 37
(FAILED_DRIVER_ENTRY): its driver could not start it; 12 (NORMAL_CONFLICT): no free resources for its BARs; 28, 31,
39, 48 (no driver installed, or one that would not load or is blocked): no driver drives it; 52 (UNSIGNED_DRIVER):
Windows refused its driver's signature. 22 (disabled) and 45 (not connected: a device seen before) are the
user's or the past's, said in a note; 0 (CM_PROB_NONE, 'No Problem') is a working adapter. The adapter is the one
the block names: its bus id where Device Manager's Location gives it ('PCI bus 1, device 0, function 0'), else its
name, else a GPU whose bus id the text does not give."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures.kernel import NO_BUS
from gpuvet.captures.text import Line

# code -> (Cfg.h's name, the kind it is read as; None: said in a note, no fault)
PROBLEMS: dict[int, tuple[str, str | None]] = {
    43: ("CM_PROB_FAILED_POST_START", "win_code_43"),
    10: ("CM_PROB_FAILED_START", "win_code_10"),
    37: ("CM_PROB_FAILED_DRIVER_ENTRY", "win_code_37"),
    12: ("CM_PROB_NORMAL_CONFLICT", "win_code_12"),
    28: ("CM_PROB_FAILED_INSTALL", "win_code_28"),
    31: ("CM_PROB_FAILED_ADD", "win_code_31"),
    39: ("CM_PROB_DRIVER_FAILED_LOAD", "win_code_39"),
    48: ("CM_PROB_DRIVER_BLOCKED", "win_code_48"),
    52: ("CM_PROB_UNSIGNED_DRIVER", "win_code_52"),
    22: ("CM_PROB_DISABLED", None),
    45: ("CM_PROB_PHANTOM", None),
}
KINDS = tuple(kind for _, kind in PROBLEMS.values() if kind is not None)
_BY_NAME = {name: code for code, (name, _) in PROBLEMS.items()}
_NUMS = "|".join(str(c) for c in PROBLEMS)
_CODE = re.compile(
    r"\([Cc]ode (" + _NUMS + r")\)|Device Problem Code:\s*Code (" + _NUMS + r")\b|"
    r"ConfigManagerErrorCode\s*:\s*(" + _NUMS + r")\b|Problem Code:\s*(" + _NUMS + r")\b|"
    r"(?:ConfigManagerErrorCode|Problem)\s*:\s*(" + "|".join(_BY_NAME) + r")\b"
)
WORDS = (
    "ode 43",
    "ode 12",
    "ode 28",
    "ode 10",
    "ode 31",
    "ode 37",
    "ode 39",
    "ode 48",
    "ode 52",
    "ode 22",
    "ode 45",
    "ErrorCode",
    "CM_PROB_",
    "working properly",
)
_SPAN = 30  # lines: an adapter's fields stand this close to its problem code
_LOCATION = re.compile(r"\bLocation:?\s*PCI bus (\d{1,3}), device (\d{1,2}), function (\d)\b")
_NAMED = re.compile(
    r"^\s*-?\s*(?:Card name|Name|VideoProcessor|Device Description|FriendlyName|Caption)\s*:\s*(.+?)\s*$|"
    r"^\s*(.+?) Properties\s*$"
)
GPU_NAME = re.compile(r"\b(?:NVIDIA|GeForce|Quadro|Tesla|TITAN|RTX|GTX|AMD|Radeon|Arc)\b")
_SAID_NAME = re.compile(
    r"\b((?:NVIDIA |AMD |Intel )?(?:GeForce |Quadro |Radeon |Arc )?(?:RTX|GTX|RX|Pro|A)\s?\w?\d{3,4}"
    r"(?: Ti| SUPER| XT| XTX)?)\b"
)


@dataclass
class Problems:
    """What the problem codes say: (kind, adapter, line, text) for each fault, the lines read, the notes."""

    found: list[tuple[str, str, Line, str]] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def read(lines: list[Line], at: list[int]) -> Problems:
    """The display adapters' problem codes among ``lines`` (``at``: the indices of the lines holding WORDS); one
    adapter's code said twice in its block (Get-PnpDevice's ConfigManagerErrorCode and Problem) is one."""
    out = Problems()
    said: dict[tuple[int, str], int] = {}
    for i in at:
        m = _CODE.search(lines[i].text)
        if m is None and "This device is working properly" in lines[i].text:
            out.claimed.add(lines[i].no)
            _note(out, f"Device Manager: {adapter_near(lines, i)}: 'This device is working properly'")
        if m is None:
            continue
        value = next(g for g in m.groups() if g)
        code = _BY_NAME[value] if value in _BY_NAME else int(value)
        adapter = adapter_near(lines, i)
        out.claimed.add(lines[i].no)
        if (code, adapter) in said and i - said[(code, adapter)] <= _SPAN:
            continue
        said[(code, adapter)] = i
        name, kind = PROBLEMS[code]
        text = f"Device Manager Code {code} ({name}): {lines[i].text.strip()}"
        if kind is None:
            what = "disabled (by a user or a policy)" if code == 22 else "not connected now (a device Windows saw before)"
            _note(out, f"Device Manager: {adapter} is {what}, Code {code} ({name}): no fault of the adapter")
            continue
        out.found.append((kind, adapter, lines[i], text))
    return out


def adapter_near(lines: list[Line], i: int) -> str:
    """The adapter a problem code belongs to: the bus id Device Manager's Location gives in its block, else the name
    its listing gives nearest above (or the same line names), else a GPU whose bus id the text does not give."""
    block = lines[max(0, i - _SPAN) : i + 1]
    for ln in reversed(block):
        if (loc := _LOCATION.search(ln.text)) is not None:
            bus, device, function = (int(g) for g in loc.groups())
            return f"0000:{bus:02X}:{device:02X}.{function}"
    for ln in reversed(block):
        if (m := _NAMED.match(ln.text)) is not None and GPU_NAME.search(name := m.group(1) or m.group(2)):
            return f"{name}, {NO_BUS}"
    if (m := _SAID_NAME.search(lines[i].text)) is not None and GPU_NAME.search(m.group(1)):
        return f"{m.group(1)}, {NO_BUS}"
    return f"a GPU, {NO_BUS}"


def _note(out: Problems, text: str) -> None:
    if text not in out.notes:
        out.notes.append(text)
