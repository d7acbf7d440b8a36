"""What an experienced engineer would remark on in a healthy capture, said as info (issue 46, NOTE): not faults, but
settings and readings that explain a symptom or cost performance, each only where the capture shows it.

- a module in Exclusive_Process or Prohibited compute mode (the table's 'E. Process', -q's Exclusive_Process): one
  process at a time, a second gets CUDA error 46; with the memory it holds where it holds some (another context);
- a RoCE run whose path MTU is below 4096 (perftest's header 'Mtu : 1024[B]' with 'Link type : Ethernet'): RoCE's
  MTU follows the interface's Ethernet MTU (1500 gives 1024; 4200 or more gives 4096), so bulk transfers carry a
  quarter of the payload per packet; an InfiniBand run below 2048 likewise (the subnet manager's partition MTU);
- a data-center module with persistence mode off (Linux): the driver state is torn down when the last client
  exits, so each job pays the initialisation and loses settings (application clocks, ...).

A setting already judged elsewhere (module_compute_exclusive for error 46 beside the mode) is not said twice; ECC
off has its own warn (ecc_disabled). Nothing here is warn: the module or the port works."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from gpuvet.doctor.model import Finding, finding
from gpuvet.doctor.outcome import MEDIUM
from gpuvet.node.bus import bus_key

if TYPE_CHECKING:
    from gpuvet.captures.records import SmiTextModule
    from gpuvet.doctor.captures import Captures

CAUSE = "setting_worth_noting"
EXCLUSIVE = "module_compute_exclusive"
ROCE_MTU = 4096  # RoCE's largest path MTU (an Ethernet MTU of 4200 or more)
IB_MTU = 2048  # an InfiniBand partition's usual MTU: below it is notable
HELD_MIB = 100  # memory in use at or above it is held by a context (an idle module with none uses a few MiB)
_MODES = {"E.": "Exclusive_Process", "Exclusive": "Exclusive_Process", "Prohibited": "Prohibited"}
# data-center modules (their tables run on servers, where persistence mode is expected on)
_DATA_CENTER = re.compile(
    r"\b(?:Tesla|A100|A800|A30|A40|A10|A16|H100|H800|H200|H20|B100|B200|GB200|L40S?|L4|L20"
    r"|V100|P100|P40|T4)\b"
)
_MIB = re.compile(r"(\d+(?:\.\d+)?)\s*MiB")


def findings(caps: Captures, found: Iterable[Finding]) -> list[Finding]:
    """The notable settings the captures show, less those a finding already says."""
    said = {(f.cause, bus_key(f.module)) for f in found if f.module}
    out = [f for f in _smi(caps) if (f.cause, bus_key(f.module or "")) not in said]
    return out + _mtu(caps)


def _smi(caps: Captures) -> list[Finding]:
    out: list[Finding] = []
    for m in caps.smi_text:
        mode = m.fields.get("Compute Mode", "")
        named = next((v for k, v in _MODES.items() if mode.startswith(k)), None)
        if named is not None:
            out.append(finding(EXCLUSIVE, MEDIUM, module=m.bus_id, said=_exclusive_said(m, named)))
        if m.fields.get("Persistence Mode") == "Disabled" and _DATA_CENTER.search(m.product):
            out.append(
                finding(
                    CAUSE,
                    MEDIUM,
                    module=m.bus_id,
                    said=f"GPU {m.fields.get('Index', '?')} "
                    f"({m.product}): persistence mode off on a data-center module: the driver tears its "
                    "state down when the last client exits (nvidia-persistenced keeps it up)",
                )
            )
    return out


def _exclusive_said(m: SmiTextModule, named: str) -> str:
    gpu = f"GPU {m.fields.get('Index', '?')}"
    said = f"{gpu} is in {named} compute mode: " + (
        "one process at a time" if named != "Prohibited" else "no process may create a context"
    )
    used, total = _mib(m.fields.get("FB Memory Usage/Used")), _mib(m.fields.get("FB Memory Usage/Total"))
    if used is not None and used >= HELD_MIB:
        said += f"; {used:g} MiB{f' of {total:g} MiB' if total else ''} in use on it (a process holds it)"
    return said


def _mib(value: str | None) -> float | None:
    m = _MIB.search(value or "")
    return float(m.group(1)) if m is not None else None


def _mtu(caps: Captures) -> list[Finding]:
    out: list[Finding] = []
    seen: set[tuple[str | None, int]] = set()
    for label, run in caps.perftest:
        if run.mtu is None or (run.device, run.mtu) in seen:
            continue
        roce = (run.link_type or "").lower() == "ethernet"
        if run.mtu >= (ROCE_MTU if roce else IB_MTU):
            continue
        seen.add((run.device, run.mtu))
        why = (
            "RoCE's MTU follows the interface's Ethernet MTU (4096 needs 4200 or more, jumbo frames)"
            if roce
            else "the subnet manager's partition MTU"
        )
        out.append(
            finding(
                CAUSE,
                MEDIUM,
                module=run.device,
                file=label,
                said=f"{run.device or 'the port'}: "
                f"{'RoCE' if roce else 'InfiniBand'} run at MTU {run.mtu} (perftest's header), below "
                f"{ROCE_MTU if roce else IB_MTU}: {why}; bulk transfers carry less per packet",
            )
        )
    return out
