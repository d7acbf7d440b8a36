"""Issue 46: DCGM's and the fabric manager's own failure messages, read as a class. benchmarks/data/dcgm_phrasebook.json
holds every DCGM_FR_* code of NVIDIA/DCGM (dcgmlib/dcgm_errors.h: its message format and DCGM's next steps;
dcgm_errors.c: its severity; the health watch's result), the fabric manager's messages as public threads print them
and a few of dcgm-exporter's own lines, each with the cause it is (the data's ``expected``: what the message says,
at DCGM's weight). Each message is filled as DCGM fills it (GPU 1, a field name, numbers) and set in the framings
real pastes show it in: dcgmi diag's DCGM 2/3 table ('Fail - GPU: 1' and its 'Warning' row, wrapped at 45
characters) and DCGM 4's ('GPU1: Fail', 'Warning: GPU1'), -j JSON's "warning" with its "error_id", dcgmi health -c's
incident (codes its health watch raises), a DCGM log line with its stamp, and a poster's sentence.
``gpuvet doctor --from`` (in-process) reads each; a message is counted:

  right    its cause on the GPU it names (or 'bus id not in the log' where it names none)
  generic  another finding only (a lead: DCGM's generic failure, an unread failure line, another cause)
  clear    read, no finding
  refused  nothing read (exit 2)

and a message whose cause is none (a skipped test, success) as clean or false (a finding at warn or above).
Kept by design: a GPU's 'NvLink link N is currently down' on a module of no named model (DCGM 2.x says it of PCIe
boards without NvLink: DCGM's failure or can't tell), DCGM's own trouble in its log (a field or API it could not
use: unjudged), and formats of generic words (a %s for most of them) outside DCGM's output (not read).

nv-hostengine's own ERROR lines about its NvSwitch module (data/dcgm_nvswitch_phrasebook.json, AX4): each scenario
the module logs (NSCQ not installed, its version warning, a read failing, DCGM's bookkeeping) in DCGM 2's untagged
line, DCGM 3's '[[NvSwitch]]' one and DCGM 4's DcgmNscqManager one, alone ('plain': nothing shows NVSwitches) and
under an HGX board's line ('shown'), and quoted by a poster; counted as above against dcgm_nvswitch_unread or none.

    .venv/bin/python benchmarks/dcgm_phrasebook.py [--show generic,clear,refused,false] [--only FRAMING]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import read

DATA = Path(__file__).parent / "data" / "dcgm_phrasebook.json"
GPU = 1  # the GPU every message names (DCGM's GPU id)
GENERIC = {"dcgm_diag_failed", "dcgm_diag_warning", "dcgm_health_failure", "dcgm_health_warning"}
_ARG = re.compile(r"%([-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z)?)([diouxXfeEsc%])")
# the health watch's system for a code's category (dcgmi health -c prints the incident under it)
_SYSTEMS = {
    "HARDWARE_MEMORY": "Memory system",
    "HARDWARE_PCIE": "PCIe system",
    "HARDWARE_NVLINK": "NVLINK system",
    "HARDWARE_THERMAL": "Thermal system",
    "HARDWARE_POWER": "Power system",
    "HARDWARE_NVSWITCH": "NvSwitch fatal",
    "HARDWARE_OTHER": "Driver",
    "SOFTWARE_XID": "Driver",
}


@dataclass(frozen=True)
class Case:
    family: str  # dcgm, fabric_manager, dcgm_exporter
    name: str  # the code, or the message's first words
    message: str
    expected: str | None
    entity: str | None  # 'GPU 1', 'NvSwitch 2' or None
    extra: dict[str, Any]


def _fill(fmt: str, field: str | None) -> str:
    """The format with its arguments as DCGM fills them: GPU ids GPU (a second GPU 0), an NVSwitch 2, Xid 79, the
    field the data names for the first %s."""
    out, at, gpus, strings = [], 0, 0, 0
    for m in _ARG.finditer(fmt):
        before = fmt[max(0, m.start() - 16) : m.start()]
        out.append(fmt[at : m.start()])
        kind = m.group(2)
        if kind == "%":
            value = "%"
        elif kind in "sc":
            strings += 1
            value = field if field and strings == 1 else "GPU" if fmt[m.end() : m.end() + 2] in (" %", ":%") else "memory"
        elif kind in "feE":
            value = "1.20e-05" if kind in "eE" else "12.5"
        elif kind in "xX" or "#" in m.group(1):
            value = "0x1"
        elif re.search(r"GPU:?\s?$", before):
            value, gpus = str(GPU if gpus == 0 else 0), gpus + 1
        elif re.search(r"(?:NvSwitch|NVSwitch|physical ID)\s$", before, re.I):
            value = "2"
        elif before.endswith("XID "):
            value = "79"
        else:
            value = "3"
        out.append(value)
        at = m.end()
    return "".join(out) + fmt[at:]


def _wrap(text: str, width: int = 45) -> list[str]:
    """dcgmi's cell: the message cut every 45 characters, mid-word (Diag::DisplayVerboseInfo)."""
    return [text[i : i + width] for i in range(0, len(text), width)] or [""]


def _row(key: str, value: str) -> str:
    return f"| {key:<25} | {value:<46} |"


def _diag3(c: Case) -> str:
    rows = [
        _row("Warning" if i == 0 else "", f"GPU {GPU} {part}" if i == 0 else part) for i, part in enumerate(_wrap(c.message))
    ]
    return "\n".join(
        [
            "+---------------------------+------------------------------------------------+",
            _row("Diagnostic", "Result"),
            "+===========================+================================================+",
            "|-----  Metadata  ----------+------------------------------------------------|",
            _row("DCGM Version", "3.3.5"),
            _row("Number of GPUs Detected", "2"),
            "|-----  Hardware  ----------+------------------------------------------------|",
            _row("GPU Memory", f"Fail - GPU: {GPU}"),
            *rows,
            "+---------------------------+------------------------------------------------+",
        ]
    )


def _diag4(c: Case) -> str:
    rows = [_row(f"Warning: GPU{GPU}" if i == 0 else "", part) for i, part in enumerate(_wrap(c.message))]
    return "\n".join(
        [
            "+---------------------------+------------------------------------------------+",
            _row("Diagnostic", "Result"),
            "+===========================+================================================+",
            "|-----  Metadata  ----------+------------------------------------------------|",
            _row("DCGM Version", "4.2.3"),
            "|-----  Hardware  ----------+------------------------------------------------|",
            _row("memory", "Fail"),
            _row("", "GPU0: Pass"),
            _row("", f"GPU{GPU}: Fail"),
            *rows,
            "+---------------------------+------------------------------------------------+",
        ]
    )


def _json(c: Case) -> str:
    warning = {"warning": c.message, "error_id": c.extra.get("id", 1), "error_category": 10, "error_severity": 2}
    doc = {
        "DCGM GPU Diagnostic": {
            "test_categories": [
                {
                    "category": "Hardware",
                    "tests": [
                        {
                            "name": "memory",
                            "results": [
                                {"gpu_id": "0", "status": "Pass"},
                                {"gpu_id": str(GPU), "status": "Fail", "warnings": [warning]},
                            ],
                        }
                    ],
                }
            ],
            "version": "3.3.5",
        }
    }
    return json.dumps(doc, indent=4)


def _health(c: Case) -> str:
    system = _SYSTEMS.get(c.extra.get("category", ""), "Driver")
    health = "Failure" if str(c.extra.get("health", "")).startswith("FAIL") else "Warning"
    who = (
        ["| NvSwitch                  |                                                |", _row("-> 2", health)]
        if (c.entity or "").startswith("NvSwitch")
        else ["| GPU                       |                                                |", _row(f"-> {GPU}", health)]
    )
    return "\n".join(
        [
            "+---------------------------+------------------------------------------------+",
            "| Health Monitor Report                                                      |",
            "+===========================+================================================+",
            _row("Overall Health", health),
            *who,
            _row("   -> Errors", ""),
            _row(f"      -> {system}", health),
            *(_row("", part) for part in _wrap(c.message)),
            "+---------------------------+------------------------------------------------+",
        ]
    )


def framings(c: Case) -> dict[str, str]:
    """The message as each kind of paste shows it."""
    if c.family == "fabric_manager":
        return {
            "bare": c.message,
            "journal": f"Nov 05 13:55:26 node1 nv-fabricmanager[104230]: {c.message}",
            "fm_log": f"[Sep 08 2025 23:21:50] [ERROR] [tid 841] {c.message}",
            "quoted": f"Our HGX node will not come up, the fabric manager log says '{c.message}'",
        }
    if c.family == "dcgm_exporter":
        return {
            "exporter": f'time="2025-03-02T10:14:03Z" level=error msg="{c.message}"',
            "slog": f'time=2025-03-02T10:14:03.112Z level=ERROR msg="{c.message}"',
        }
    out = {
        "log": f"2025-03-02 10:14:03.112 ERROR [2231:2240] {c.message} [/workspaces/dcgm/nvvs/src/"
        f"DcgmRecorder.cpp:498] [DcgmRecorder::CheckErrors]",
        "quoted": f'dcgmi diag -r 3 fails on node7 with "{c.message}" - is the GPU bad?',
    }
    if c.expected is not None:
        out = {"diag3": _diag3(c), "diag4": _diag4(c), "json": _json(c), **out}
        if c.extra.get("health"):
            out["health"] = _health(c)
    return out


def cases(data: dict[str, Any]) -> list[Case]:
    out: list[Case] = []
    for e in data["dcgm"]:
        for fmt in e["formats"]:
            said = _fill(fmt, e.get("field")) + (f" {e['next']}" if e.get("next") and e["next"] != "N/A" else "")
            entity = (
                f"GPU {GPU}"
                if re.search(r"GPU:? ?%", fmt)
                else "NvSwitch 2"
                if re.search(r"(?:NvSwitch|NVSwitch|physical ID) %", fmt, re.I)
                else None
            )
            out.append(Case("dcgm", e["code"], said, e["expected"], entity, e))
    out += [Case("fabric_manager", m[:40], m, exp, None, {"source": src}) for m, src, exp in data["fabric_manager"]]
    out += [Case("dcgm_exporter", m[:40], m, exp, None, {"source": src}) for m, src, exp in data["dcgm_exporter"]]
    return out


def doctor(text: str, where: Path) -> list[dict[str, Any]] | None:
    """doctor --from's findings on ``text``; None where it refused the file (nothing read)."""
    return read(text, where)[1]


def _placed(f: dict[str, Any], entity: str | None) -> bool:
    """The finding is on the entity the message names ('GPU 1' as 'GPU1' or 'GPU 1'), or on none where it names
    none."""
    module = str(f.get("module") or "")
    if entity is None:
        return True
    kind, index = entity.split()
    return re.search(rf"{kind}\s?{index}\b", module, re.I) is not None


def verdict(c: Case, found: list[dict[str, Any]] | None) -> str:
    if found is None:
        return "refused" if c.expected is not None else "refused_clean"
    raised = [f for f in found if f.get("severity") in ("warn", "critical")]
    if c.expected is None:
        return "false" if raised else "clean"
    want = GENERIC if c.expected == "dcgm" else {c.expected}
    if any(f["cause"] in want and _placed(f, c.entity) for f in found):
        return "right"
    return "generic" if found else "clear"


NVSWITCH = Path(__file__).parent / "data" / "dcgm_nvswitch_phrasebook.json"
_PATHS = {
    "v2": ("", "/workspaces/dcgm-rel_dcgm_2_4-postmerge/modules/nvswitch/DcgmNvSwitchManager.cpp", "DcgmNvSwitchManager"),
    "v3": (
        "[[NvSwitch]] ",
        "/workspaces/dcgm-rel_dcgm_3_1-postmerge/modules/nvswitch/DcgmNvSwitchManager.cpp",
        "DcgmNvSwitchManager",
    ),
    "v4": ("[[NvSwitch]] ", "/builds/dcgm/modules/nvswitch/DcgmNscqManager.cpp", "DcgmNscqManager"),
}
_BOARD = "dgx-h100-07: HGX H100 8-GPU board, nv-hostengine running"


def nvswitch_framings(lines: list[str]) -> dict[tuple[str, bool], str]:
    """A scenario of the NvSwitch module's ERROR lines as each DCGM version logs it, plain and under an HGX board's
    line; and its first line quoted by a poster (plain)."""
    out: dict[tuple[str, bool], str] = {}
    for form, (tag, path, cls) in _PATHS.items():
        log = "\n".join(
            f"2025-03-02 10:14:{i:02d}.112 ERROR [2231:2240] {tag}{line} [{path}:{400 + i}] [DcgmNs::{cls}::AttachToNscq]"
            for i, line in enumerate(lines)
        )
        out[(f"nvs_{form}", False)], out[(f"nvs_{form}", True)] = log, f"{_BOARD}\n{log}"
    out[("nvs_quoted", False)] = f'our nv-hostengine.log fills up with "{lines[0]}" every few seconds'
    return out


def nvswitch_module(where: Path, tally: Counter[tuple[str, str]], show: set[str]) -> None:
    """The NvSwitch module's scenarios, each framing's verdict counted in ``tally``."""
    for sc in json.loads(NVSWITCH.read_text(encoding="utf-8"))["scenarios"]:
        for (frame, shown), text in nvswitch_framings(sc["lines"]).items():
            found = doctor(text, where)
            expected = sc["expected_shown"] if shown else sc["expected"]
            c = Case("nvswitch_module", sc["name"], sc["lines"][0], expected, None, sc)
            tally[(frame + ("+hgx" if shown else ""), v := verdict(c, found))] += 1
            if v in show:
                print(
                    f"{v:8} {frame:10} {'hgx' if shown else '':3} {sc['name']:34} -> "
                    f"{sorted({f['cause'] for f in found or []})} (want {expected})"
                )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--show", default="", help="the verdicts to list, comma-separated (generic,clear,refused,false)")
    parser.add_argument("--only", default="", help="one framing (diag3, diag4, json, health, log, quoted, …)")
    args = parser.parse_args(argv)
    show = set(filter(None, args.show.split(",")))
    data = json.loads(DATA.read_text(encoding="utf-8"))
    tally: Counter[tuple[str, str]] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for c in cases(data):
            for frame, text in framings(c).items():
                if args.only and frame != args.only:
                    continue
                found = doctor(text, where)
                tally[(frame, v := verdict(c, found))] += 1
                if v in show:
                    got = sorted({(f["cause"], f.get("module")) for f in found or []}, key=str)
                    print(f"{v:8} {frame:8} {c.name:38} {c.message[:60]!r} -> {got} (want {c.expected})")
        if not args.only or args.only.startswith("nvs"):
            nvswitch_module(where, tally, show)
    order = ("right", "generic", "clear", "refused", "clean", "false", "refused_clean")
    frames = list(dict.fromkeys(f for f, _ in tally))
    for frame in frames:
        print(f"{frame:8} " + ", ".join(f"{k} {tally[(frame, k)]}" for k in order if tally[(frame, k)]))
    total = Counter(v for (_, v), n in tally.items() for _ in range(n))
    print(f"all      {sum(total.values())} framed messages: " + ", ".join(f"{k} {total[k]}" for k in order if total[k]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
