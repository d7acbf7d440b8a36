"""DCGM's failure messages as findings (issue 46). A message read by its code (captures/dcgm_messages.py: the words
of a dcgmi diag result or a health incident, a -j result's ``error_id``, a relay's ``DCGM_FR_`` name) is the cause
knowledge/dcgm_errors.yaml names for that code, on the GPU (or NVSwitch) the message names: a double-bit ECC error
is ecc_uncorrectable_since_boot, a PCIe link below its width pcie_link_downgraded, persistence mode off stays DCGM's
own warning. One fact, one verdict: the cause's severity is faults.yaml's, chosen at DCGM's weight for the code."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.captures.records import DcgmHealthIncident
from gpuvet.checks.model import Json
from gpuvet.doctor.capture_failures import as_quoted
from gpuvet.doctor.model import Finding, causes, finding
from gpuvet.doctor.outcome import HIGH, MEDIUM
from gpuvet.doctor.xids import xid_finding
from gpuvet.knowledge import off_bus_xids
from gpuvet.knowledge.dcgm_errors import GENERIC, XID
from gpuvet.node.vendor_tools import DCGM_HEALTH_FIX

if TYPE_CHECKING:  # the reader loads with a DCGM capture (issue 43: doctor --node loads no parser)
    from gpuvet.captures.dcgm_messages import DcgmMessage

# a GPU's own NvLink reported down: DCGM 2.x says so of every link of a PCIe board without any, so the caller
# judges it only where the module has NvLink by design (an NVSwitch's links, the expected count, are not in doubt)
GPU_LINK_DOWN = "DCGM_FR_NVLINK_DOWN"


def messages(text: str | None, codes: tuple[int | str, ...] = ()) -> list[DcgmMessage]:
    """The DCGM messages of a result or incident, in the order printed, one per code, cause and place; ``codes``:
    the codes the output gave by number or name, read before the words: a relay's DCGM_FR_ name (its words are
    its own), -j's error_id where the warning it gives is that code's message (an id beside another message's
    words is not trusted over them)."""
    from gpuvet.captures.dcgm_messages import of_code, read_all  # loaded: a DCGM result was read

    said = read_all(text or "")
    given = [m for c in codes if (m := of_code(c, text or "")) is not None
             and (isinstance(c, str) or any(w.code == m.code for w in said))]
    found = given or said
    out: dict[tuple[str, str | None, int | None, int | None], DcgmMessage] = {}
    for m in found:
        out.setdefault((m.code, m.cause, m.gpu, m.xid), m)
    return list(out.values())


def specific(found: list[DcgmMessage]) -> list[DcgmMessage]:
    """The messages whose code names a cause of its own (not DCGM's generic one, not 'no fault')."""
    return [m for m in found if m.cause not in (None, GENERIC) and (m.cause != XID or m.xid is not None)]


def as_finding(msg: DcgmMessage, module: str | None, carried: dict[str, Json]) -> Finding:
    """The finding a message with a cause of its own is, on ``module``."""
    said: dict[str, Json] = {**carried, "dcgm_code": msg.code, "dcgm_severity": msg.severity}
    if msg.cause == XID and msg.xid is not None:
        kind = "module_fell_off_bus" if msg.xid in off_bus_xids() else "xid"
        found = xid_finding(kind, HIGH, module, msg.xid)
        return replace(found, evidence={**said, **found.evidence})
    cause = str(msg.cause)
    return finding(cause, HIGH if causes()[cause].severity == "critical" else MEDIUM, module=module, carried=said)


def incident(inc: DcgmHealthIncident, carried: dict[str, Json]) -> list[Finding]:
    """A health incident whose message (or the DCGM_FR_ code a relay named it by) is a code of DCGM's catalogue:
    the cause the code names on the incident's entity, DCGM's own health finding where the code names none of its
    own; [] where no code is read or the message is a GPU's link down (the caller's rules: it checks the module has
    NvLink by design first)."""
    code = (inc.system,) if inc.system.startswith("DCGM_FR_") else ()
    entity = None if "(id not in" in inc.entity else inc.entity
    read = [m for m in messages(inc.message, code) if m.cause is not None]
    if not read or any(m.code == GPU_LINK_DOWN for m in read):
        return []
    found = [as_finding(m, m.entity if m.switch is not None else entity or m.entity, carried) for m in specific(read)]
    if not found:  # the code is DCGM's own trouble or a setting: its health finding, at the health it printed
        failure = inc.health.lower().startswith("failure")
        found = [finding("dcgm_health_failure" if failure else "dcgm_health_warning", HIGH if failure else MEDIUM,
                         module=entity or read[0].entity, fix=DCGM_HEALTH_FIX, carried={**carried,
                                                                                        "dcgm_code": read[0].code})]
    return [as_quoted(f) for f in found] if inc.quoted else found
