"""Issue 46 (R9A): one module's sensor that nvidia-smi prints as ERR! (or [Unknown Error]) while its peers read it.

nvidia-smi prints ERR! where NVML returned an error for that reading (a fan's tachometer, a temperature, a power
sensor). One ERR! alone on a lone module may be a transient of that sensor, which capture_checks leaves unjudged;
the same sensor read as a number on every peer of the same model in the same table, and as ERR! on one, is that
module's sensor or the part behind it failing (a fan that stopped answering on a busy card): warn, on that module,
as a sensor of the module that no longer reads while its others do (module_sensors_unreadable). A peer that printed N/A
or Not Supported for it did not read it (REVFIX65); the finding says what the tool printed.

R14E: a module with no peer of its model in the capture (a workstation's one card, whose table reads 'ERR!' in its Fan
column while its temperature and power read) is judged the same where the field is its fan: NVML cannot read the fan's
tachometer or controller on that card, and a fan that does not answer cannot be trusted to cool it. A lone card's
power draw alone stays unjudged (a mobile module without a power sensor, a transient read: fresh_ae, fresh_c)."""

from __future__ import annotations

import re

from gpuvet.captures.records import UNNAMED, ModuleHealth
from gpuvet.doctor.model import Finding, finding
from gpuvet.doctor.outcome import MEDIUM
from gpuvet.node.vendor_tools import TOOLS

_FAN = re.compile(r"\bfan\b", re.I)  # R14E: a fan's reading (the table's Fan column, -q's Fan Speed)
_NV = TOOLS["nvidia"]  # ModuleHealth's unread fields are nvidia-smi's (its table, -q, -q -x)
FIX = (
    f"read the module's sensors again with {_NV.driver_check} (its -q names the fan, temperature and power readings, "
    "and whether the driver asks for a reset: GPU Recovery Action); a fan that reads ERR! under load: check the fan "
    f"and its connector and the card's cooling; reset the module ({_NV.reset_module}) or reboot; RMA the card if "
    "the reading stays ERR! while its peers read"
)


def lone_sensor_errors(health: list[ModuleHealth], judged: set[str | None]) -> list[Finding]:
    """The modules with a sensor field unread (ERR!) that every peer of the same model read (R14E: or a fan's, on a
    module with no peer in the capture), not judged yet."""
    out = []
    for h in health:
        if not h.unreadable or h.module in judged or h.module == UNNAMED or not h.product:
            continue
        peers = [p for p in health if p.module != h.module and p.product == h.product and p.module != UNNAMED]
        # REVFIX65: a peer read the field only where it printed a value: N/A or Not Supported is no reading
        if (peers or any(_FAN.search(k) for k in h.unreadable)) and \
                all(not set(h.unreadable) & {*p.unreadable, *p.not_read} for p in peers):  # R14E: a lone card's fan
            out.append(
                finding(
                    "module_sensors_unreadable",
                    MEDIUM,
                    module=h.module,
                    fix=FIX,
                    fields=list(h.unreadable[:8]),
                    product=h.product,
                    peers_read=[p.module for p in peers[:8]] or None,
                    said=f"the tool printed {' / '.join(h.unread_as) or 'an error'} for these readings; "
                    + ("its peers of the same model read them" if peers else "its other readings read"),
                )
            )
    return out
