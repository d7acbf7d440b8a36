"""Issue 46 (WIN): how a GPU fault shows on Windows, read as a class. benchmarks/data/windows_phrasebook.json holds the
records Windows and the vendors' Windows drivers write for a GPU (the display drivers' System-log events, WHEA-Logger's
hardware error records, the bug checks a crash dump's analysis names, Device Manager's problem codes, nvidia-smi's and
programs' own messages), each with its source, the cause an engineer gives it (faults.yaml) and the module a finding
must name (the bus id the record gives, or 'bus id not in the log'), and the records of a healthy machine or of
another part than a GPU (a processor's machine check, a host DIMM, a disabled adapter) that must stay quiet.

Each record is set in the framings pasted captures show it in: Event Viewer's General text, ``wevtutil qe /f:text``,
``Get-WinEvent`` as a list and as its table, the event's XML, WinDbg's ``!analyze -v``, WhoCrashed's and
BlueScreenView's reports, the WER event 1001 and Kernel-Power event 41 (they name the code, not the driver), the blue
screen's own text, ``pnputil /enum-devices /problem``, ``Get-PnpDevice``, Win32_VideoController, a command prompt, and a
poster's sentence. ``gpuvet doctor --from`` (in-process) reads each; a framing is counted

  right    the cause at its severity on the module the record names
  module   the cause, on another module than the record names
  generic  another finding only
  clear    read, no finding
  refused  nothing read (exit 2)

and a record whose cause is none as clean, false (a finding at warn or above) or refused.

    .venv/bin/python -m benchmarks.windows_phrasebook [--show module,generic,clear,refused,false]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import doctor as run_doctor

from gpuvet.knowledge import fault

DATA = Path(__file__).parent / "data" / "windows_phrasebook.json"
NOBUS = "bus id not in the log"
# nvlddmkm's Event 153 is written at the driver's reset: older drivers say 'Error occurred', newer 'Resetting TDR
# occurred'; either reading (a TDR, the driver's error event) is the warn an engineer gives it
EITHER = {
    "module_tdr_recovered": {"module_tdr_recovered", "module_driver_error_event"},
    "module_driver_error_event": {"module_tdr_recovered", "module_driver_error_event"},
}
_MISSING = (
    "The description for Event ID {id} from source {source} cannot be found. Either the component that raises "
    "this event is not installed on your local computer or the installation is corrupted. You can install or "
    "repair the component on the local computer."
)


@dataclass(frozen=True)
class Case:
    family: str
    name: str
    framing: str
    text: str
    expected: str | None
    module: str | None


def _description(e: dict[str, Any]) -> list[str]:
    """What Event Viewer shows as the record's description: its message, or the 'cannot be found' text and its data."""
    if e.get("text"):
        return list(e["text"])
    return [_MISSING.format(**e), "", "The following information was included with the event: ", "", *e["data"]]


def _viewer(source: str, event_id: int, level: str, lines: list[str]) -> str:
    head = [
        "Log Name:      System",
        f"Source:        {source}",
        "Date:          3/14/2026 9:12:41 PM",
        f"Event ID:      {event_id}",
        "Task Category: None",
        f"Level:         {level}",
        "Keywords:      Classic",
        "User:          N/A",
        "Computer:      DESKTOP-7Q2KD",
        "Description:",
    ]
    return "\n".join(head + lines)


def _wevtutil(source: str, event_id: int, level: str, lines: list[str]) -> str:
    head = [
        "Event[0]:",
        "  Log Name: System",
        f"  Source: {source}",
        "  Date: 2026-03-14T21:12:41.1120000Z",
        f"  Event ID: {event_id}",
        "  Task: N/A",
        f"  Level: {level}",
        "  Opcode: Info",
        "  Keyword: Classic",
        "  User: N/A",
        "  User Name: N/A",
        "  Computer: DESKTOP-7Q2KD",
        "  Description: ",
    ]
    return "\n".join(head + lines)


def _listed(source: str, event_id: int, message: list[str]) -> str:
    body = [f"Message      : {message[0]}", *(f"               {m}" for m in message[1:])]
    return "\n".join(
        [
            "PS C:\\> Get-WinEvent -LogName System -MaxEvents 40 | Format-List",
            "",
            "TimeCreated  : 3/14/2026 9:12:41 PM",
            f"ProviderName : {source}",
            f"Id           : {event_id}",
            *body,
        ]
    )


def _event_framings(e: dict[str, Any]) -> dict[str, str]:
    source, event_id, level = e["source"], e["id"], e["level"]
    described = _description(e)
    if e.get("text"):
        message = list(e["text"])
    else:
        data = ", ".join(f"'{d}'" for d in e["data"])
        message = [
            f"The description for Event ID '{event_id}' in Source '{source}' cannot be found.  The local "
            "computer may not have the necessary registry information or message DLL files to display the "
            f"message, or you may not have permission to access them.  The following information is part of "
            f"the event:{data}"
        ]
    row = f"3/14/2026 9:12:41 PM {event_id:>14} {level:<16} {message[0][:60]}..."
    xml = [
        '<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event">',
        "  <System>",
        f'    <Provider Name="{source}" />',
        f'    <EventID Qualifiers="49322">{event_id}</EventID>',
        "    <Level>2</Level>",
        '    <TimeCreated SystemTime="2026-03-14T21:12:41.1120000Z" />',
        "    <Channel>System</Channel>",
        "  </System>",
        "  <EventData>",
        *(f"    <Data>{d}</Data>" if d else "    <Data />" for d in e["data"]),
        "  </EventData>",
        "</Event>",
    ]
    said = (e["text"] or e["data"])[-1]
    return {
        "viewer": _viewer(source, event_id, level, described),
        "wevtutil": _wevtutil(source, event_id, level, described),
        "list": _listed(source, event_id, message),
        "table": "\n".join(
            [
                f"   ProviderName: {source}",
                "",
                "TimeCreated                      Id LevelDisplayName Message",
                "-----------                      -- ---------------- -------",
                row,
            ]
        ),
        "xml": "\n".join(xml),
        "quoted": f'My Event Viewer shows Event ID {event_id} from {source} each time the screen goes black: "{said}"',
    }


def _whea_framings(w: dict[str, Any]) -> dict[str, str]:
    source, level = "Microsoft-Windows-WHEA-Logger", "Error" if "fatal" in w["text"][0] else "Warning"
    lines = list(w["text"])
    return {
        "viewer": _viewer(source, w["id"], level, lines),
        "wevtutil": _wevtutil(source, w["id"], level, lines),
        "list": _listed(source, w["id"], [ln for ln in lines if ln]),
        "quoted": f"My WHEA-Logger keeps logging Event {w['id']} since I moved the card:\n\n" + "\n".join(lines),
    }


def _stem(image: str | None) -> str:
    return (image or "ntkrnlmp.exe").rsplit(".", 1)[0]


def _analyze(b: dict[str, Any]) -> str:
    code, image, stem = b["code"], b["image"], _stem(b["image"])
    named = [f"MODULE_NAME: {stem}", "", f"IMAGE_NAME:  {image}", ""] if image else []
    version = [f"IMAGE_VERSION:  {b['version']}", ""] if b.get("version") else []
    return "\n".join(
        [
            "0: kd> !analyze -v",
            "*" * 79,
            "*" + " " * 77 + "*",
            "*" + "Bugcheck Analysis".center(77) + "*",
            "*" + " " * 77 + "*",
            "*" * 79,
            "",
            f"{b['name']} ({code})",
            *b["about"],
            "Arguments:",
            f"Arg1: {b['arg1']}",
            "Arg2: fffff80123456789",
            "Arg3: 0000000000000000",
            "Arg4: 0000000000000000",
            "",
            "Debugging Details:",
            "------------------",
            "",
            f"BUGCHECK_CODE:  {code}",
            "",
            f"BUGCHECK_P1: {b['arg1'].split(',')[0].lstrip('0') or '0'}",
            "",
            "PROCESS_NAME:  System",
            "",
            "STACK_TEXT:  ",
            f"ffffd000`2a1b0a48 fffff801`2c4f2f5c     : 00000000`{int(code, 16):08x} ffffe001`23456010 : nt!KeBugCheckEx",
            f"ffffd000`2a1b0a50 fffff801`2c4c2867     : fffff801`23456789 ffffe001`23456010 : {stem}+0x1a2b3c",
            "",
            f"SYMBOL_NAME:  {stem}+1a2b3c",
            "",
            *named,
            *version,
            f"FAILURE_BUCKET_ID:  0x{code}_{stem}!unknown_function",
            "",
        ]
    )


def _bugcheck_framings(b: dict[str, Any]) -> dict[str, tuple[str, bool]]:
    """Each framing's text and whether it names the faulting image."""
    code, image, name = b["code"], b["image"], b["name"]
    arg1 = b["arg1"].split(",")[0]
    hexcode = f"0x{int(code, 16):08X}"
    stem = _stem(image)
    shown = image or "ntoskrnl.exe"
    who = "\n".join(
        [
            "On Sat 14/03/2026 21:12:41 your computer crashed or a problem was reported",
            "crash dump file: C:\\WINDOWS\\Minidump\\031426-9843-01.dmp",
            f"This was probably caused by the following module: {shown} ({stem}+0x1A2B3C)",
            f"Bugcheck code: 0x{code.upper()} (0x{arg1.lstrip('0') or '0'}, 0xFFFFF80123456789, 0x0, 0x0)",
            f"Error: {name}",
            f"file path: C:\\WINDOWS\\system32\\drivers\\{shown}",
        ]
    )
    blue = "\n".join(
        [
            "=" * 50,
            "Dump File         : 031426-9843-01.dmp",
            "Crash Time        : 3/14/2026 9:12:41 PM",
            f"Bug Check String  : {name}",
            f"Bug Check Code    : {hexcode}",
            f"Parameter 1       : {arg1}",
            f"Caused By Driver  : {shown}",
            f"Caused By Address : {shown}+1a2b3c",
            f"File Version      : {b.get('version') or ''}",
            "Processor         : x64",
            "Crash Address     : ntoskrnl.exe+3f8a20",
            "=" * 50,
        ]
    )
    wer = _viewer(
        "Microsoft-Windows-WER-SystemErrorReporting",
        1001,
        "Error",
        [
            f"The computer has rebooted from a bugcheck.  The bugcheck was: {hexcode} (0x{arg1}, 0xfffff80123456789, "
            "0x0000000000000000, 0x0000000000000000). A dump was saved in: C:\\WINDOWS\\MEMORY.DMP. Report Id: "
            "4f8e3b1a-6c2d-4e9f-8a7b-1c2d3e4f5a6b."
        ],
    )
    power = _viewer(
        "Microsoft-Windows-Kernel-Power",
        41,
        "Critical",
        [
            "The system has rebooted without cleanly shutting down first. This error could be caused if the system stopped "
            "responding, crashed, or lost power unexpectedly.",
            "",
            "Event Xml:",
            "  <EventData>",
            f'    <Data Name="BugcheckCode">{int(code, 16)}</Data>',
            f'    <Data Name="BugcheckParameter1">0x{arg1.lstrip("0") or "0"}</Data>',
            '    <Data Name="SleepInProgress">0</Data>',
            "  </EventData>",
        ],
    )
    driver = image if image and not image.startswith("ntkrnl") else None
    stop = "\n".join(
        [
            "Your device ran into a problem and needs to restart. We're just collecting some error info, and "
            "then we'll restart for you.",
            "",
            f"Stop code: {name}",
        ]
        + ([f"What failed: {driver}"] if driver else [])
    )
    quoted = f"My PC keeps getting a BSOD {name}" + (f" ({driver})" if driver else "") + " a few minutes into a game."
    return {
        "analyze": (_analyze(b), bool(image)),
        "whocrashed": (who, bool(image)),
        "bluescreenview": (blue, bool(image)),
        "wer1001": (wer, False),
        "kernelpower41": (power, False),
        "stopcode": (stop, bool(driver)),
        "quoted": (quoted, bool(driver)),
    }


def _device_framings(d: dict[str, Any]) -> dict[str, str]:
    code, problem, sentence = d["code"], d["problem"], d["sentence"]
    status = "Error" if code else "OK"
    pnputil = [
        "Microsoft PnP Utility",
        "",
        "Instance ID:                PCI\\VEN_10DE&DEV_2504&SUBSYS_397D1462&REV_A1\\4&2a3b5c9d&0&0008",
        "Device Description:         NVIDIA GeForce RTX 3060",
        "Class Name:                 Display",
        "Class GUID:                 {4d36e968-e325-11ce-bfc1-08002be10318}",
        "Manufacturer Name:          NVIDIA",
        f"Status:                     {'Problem' if code else 'Started'}",
    ]
    pnputil += [f"Problem Code:               {code} (0x{code:X}) [{problem}]"] if code else []
    pnputil += ["Driver Name:                oem42.inf"]
    return {
        "devmgr": "\n".join(
            [
                "NVIDIA GeForce RTX 3060 Properties",
                "General",
                "Device type:\tDisplay adapters",
                "Manufacturer:\tNVIDIA",
                "Location:\tPCI bus 1, device 0, function 0",
                "Device status",
                sentence,
            ]
        ),
        "pnputil": "\n".join(pnputil),
        "pnpdevice": "\n".join(
            [
                "PS C:\\> Get-PnpDevice -Class Display | Format-List",
                "",
                "Caption                     : NVIDIA GeForce RTX 3060",
                "Name                        : NVIDIA GeForce RTX 3060",
                f"Status                      : {status}",
                f"ConfigManagerErrorCode      : {problem}",
                "DeviceID                    : PCI\\VEN_10DE&DEV_2504&SUBSYS_397D1462&REV_A1\\4&2A3B5C9D&0&0008",
                "Present                     : True",
                f"Problem                     : {problem}",
                "Class                       : Display",
                "FriendlyName                : NVIDIA GeForce RTX 3060",
            ]
        ),
        "wmi": "\n".join(
            [
                "PS C:\\> Get-CimInstance Win32_VideoController | Format-List Name,Status,"
                "ConfigManagerErrorCode,DriverVersion",
                "",
                "Name                   : NVIDIA GeForce RTX 3060",
                f"Status                 : {status}",
                f"ConfigManagerErrorCode : {code}",
                "DriverVersion          : 32.0.15.6094",
            ]
        ),
        "quoted": f'My RTX 3060 has a yellow triangle in Device Manager and says "{sentence}"',
    }


def _line_framings(entry: dict[str, Any]) -> dict[str, str]:
    text = entry["text"]
    said = max(text.split("\n"), key=len)  # the line a poster quotes: the message, not its title
    if entry["family"] == "smi":
        return {
            "cmd": f"C:\\Users\\me>nvidia-smi\n{text}",
            "powershell": f"PS C:\\Users\\me> nvidia-smi\n{text}",
            "quoted": f"Running nvidia-smi on my PC gives: {said}",
        }
    return {
        "bare": text,
        "logged": "\n".join(f"[2026-03-14 21:12:41.112] [error] {ln}" for ln in text.split("\n")),
        "quoted": f'After an hour my game dies with "{said}"',
    }


def cases() -> list[Case]:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    out: list[Case] = []
    for e in data["events"]:
        name = f"{e['source']} {e['id']}: {(e['text'] or e['data'])[-1][:50]}"
        out += [Case("event", name, f, t, e["expected"], _named(e, t)) for f, t in _event_framings(e).items()]
    for w in data["whea"]:
        out += [
            Case("whea", f"WHEA {w['id']}: {w['name']}", f, t, w["expected"], w["module"])
            for f, t in _whea_framings(w).items()
        ]
    for b in data["bugchecks"]:
        for f, (t, named) in _bugcheck_framings(b).items():
            told = f not in ("stopcode", "quoted") or not b.get("needs_arg1")  # the first argument said
            expected = b["expected"] if (named or not b["needs_image"]) and told else None
            module = NOBUS if expected else None
            out.append(Case("bugcheck", f"{b['name']} ({b['image']})", f, t, expected, module))
    for d in data["device_codes"]:
        out += [Case("device", f"Code {d['code']}", f, t, d["expected"], None) for f, t in _device_framings(d).items()]
    for entry in data["lines"]:
        out += [
            Case(entry["family"], entry["text"][:50], f, t, entry["expected"], entry["module"])
            for f, t in _line_framings(entry).items()
        ]
    return out


def _named(entry: dict[str, Any], text: str) -> str | None:
    """The module a framing can name: the entry's where the text holds what names it (its GPUID, its device
    object), else none but 'bus id not in the log' (a table's cut message, a poster's words)."""
    module, evidence = entry["module"], entry.get("named_by") or entry["module"]
    return module if module is None or evidence in text else NOBUS


def doctor(text: str, where: Path) -> tuple[int, list[dict[str, Any]]]:
    """doctor --from's exit code and findings for ``text``."""
    code, found = run_doctor(text, where)
    return (2, []) if code == 2 else (code, found)


def verdict(case: Case, code: int, findings: list[dict[str, Any]]) -> str:
    loud = [f for f in findings if f["severity"] in ("warn", "critical")]
    if code == 2:
        return "refused"
    if case.expected is None:
        return "false" if loud else "clean"
    want = EITHER.get(case.expected, {case.expected})
    # a poster's words are a lead at most warn (doctor's as_quoted): the cause at warn is their right reading
    hits = [
        f
        for f in loud
        if f["cause"] in want
        and (f["severity"] == fault(f["cause"]).severity or (case.framing == "quoted" and f["severity"] == "warn"))
    ]
    if not hits:
        return "generic" if loud else "clear"
    if case.module is None or any(case.module in str(f.get("module") or "") for f in hits):
        return "right"
    return "module"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--show", default="module,generic,clear,refused,false", help="verdicts to list, comma-separated")
    args = parser.parse_args(argv)
    show = set(args.show.split(","))
    by_family: dict[str, Counter[str]] = {}
    refused: Counter[bool] = Counter()  # refusals of a fault's framing (True) and of a healthy one's
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for case in cases():
            code, findings = doctor(case.text, where)
            v = verdict(case, code, findings)
            by_family.setdefault(case.family, Counter())[v] += 1
            refused[case.expected is not None] += v == "refused"
            if v in show:
                got = sorted({(f["cause"], f["severity"], str(f.get("module"))[:40]) for f in findings})
                print(f"{v:8} {case.family:8} {case.framing:14} {case.name[:60]!r} -> {got} (want {case.expected})")
    columns = ("right", "module", "generic", "clear", "refused", "clean", "false")
    print(f"{'family':<10}{'framed':>7}" + "".join(f"{c:>9}" for c in columns))
    total: Counter[str] = Counter()
    for family, tally in by_family.items():
        total += tally
        print(f"{family:<10}{sum(tally.values()):>7}" + "".join(f"{tally[c]:>9}" for c in columns))
    print(f"{'all':<10}{sum(total.values()):>7}" + "".join(f"{total[c]:>9}" for c in columns))
    faults = sum(total[c] for c in columns[:4]) + refused[True]
    healthy = total["clean"] + total["false"] + refused[False]
    print(
        f"fault framings {faults}: right {total['right']}, module {total['module']}, generic {total['generic']}, "
        f"clear {total['clear']}, refused {refused[True]}; healthy framings {healthy}: clean {total['clean']}, "
        f"false {total['false']}, refused {refused[False]}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
