"""Issue 46 (R9A): one module's sensor that nvidia-smi prints as ERR! (or [Unknown Error]) while its peers read it.

nvidia-smi prints ERR! where NVML returned an error for that reading (a fan's tachometer, a temperature, a power
sensor). One ERR! alone on a lone module may be a transient of that sensor, which capture_checks leaves unjudged;
the same sensor read as a number on every peer of the same model in the same table, and as ERR! on one, is that
module's sensor or the part behind it failing (a fan that stopped answering on a busy card): warn, on that module,
as a sensor of the module that no longer reads while its others do (module_sensors_unreadable). A peer that printed N/A
or Not Supported for it did not read it (REVFIX65); the finding says what the tool printed."""

from __future__ import annotations

from gpuvet.captures.records import UNNAMED, ModuleHealth
from gpuvet.doctor.model import Finding, finding
from gpuvet.doctor.outcome import MEDIUM
from gpuvet.node.vendor_tools import TOOLS

_NV = TOOLS["nvidia"]  # ModuleHealth's unread fields are nvidia-smi's (its table, -q, -q -x)
FIX = (
    f"read the module's sensors again with {_NV.driver_check} (its -q names the fan, temperature and power readings, "
    "and whether the driver asks for a reset: GPU Recovery Action); a fan that reads ERR! under load: check the fan "
    f"and its connector and the card's cooling; reset the module ({_NV.reset_module}) or reboot; RMA the card if "
    "the reading stays ERR! while its peers read"
)


def lone_sensor_errors(health: list[ModuleHealth], judged: set[str | None]) -> list[Finding]:
    """The modules with a sensor field unread (ERR!) that every peer of the same model read, not judged yet."""
    out = []
    for h in health:
        if not h.unreadable or h.module in judged or h.module == UNNAMED or not h.product:
            continue
        peers = [p for p in health if p.module != h.module and p.product == h.product and p.module != UNNAMED]
        # REVFIX65: a peer read the field only where it printed a value: N/A or Not Supported is no reading
        if peers and all(not set(h.unreadable) & {*p.unreadable, *p.not_read} for p in peers):
            out.append(
                finding(
                    "module_sensors_unreadable",
                    MEDIUM,
                    module=h.module,
                    fix=FIX,
                    fields=list(h.unreadable[:8]),
                    product=h.product,
                    peers_read=[p.module for p in peers[:8]],
                    said=f"the tool printed {' / '.join(h.unread_as) or 'an error'} for these readings; its peers "
                    "of the same model read them",
                )
            )
    return out
