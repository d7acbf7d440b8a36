"""A temperature a capture prints with no limit beside it (nvidia-smi's default table, a -q excerpt without
its thresholds, a monitor's screen) and no throttle reason: judged against the design's slowdown temperature
where the catalog holds one for the module's model; a reading beyond every design's limit (faults.yaml's
temperature_beyond_design_c) is a finding whatever the model (temperature_beyond_design: a sensor fault or a
cooling failure, no throttling seen); else "can't tell", said once in the answer's
closing line (answer.untold_temperatures), never a row per module. A reading is never its own limit, and 67 °C
is hot for one module and cool for another (issue 46)."""

from __future__ import annotations

from gpuvet.captures.records import ModuleHealth
from gpuvet.doctor.evidence import Evidence
from gpuvet.doctor.model import Cited, Finding, finding
from gpuvet.doctor.outcome import MEDIUM, Outcome, confirmed
from gpuvet.knowledge import threshold
from gpuvet.node.catalog import find_model
from gpuvet.node.vendor_tools import GIVE

_NAMED = 3  # modules named in the summary, the rest counted


def bare(ev: Evidence) -> list[ModuleHealth]:
    """The modules whose capture read a temperature and neither a limit nor the clock reasons."""
    return [h for h in ev.captures.health if h.temperature_c is not None and h.temperature_slowdown_c is None
            and h.temperature_max_operating_c is None and h.margin_c is None
            and h.module not in ev.captures.clock_reasons_read]


def judge_bare(ev: Evidence) -> Outcome | None:
    """Each bare temperature against its model's design slowdown; None: no bare temperature read."""
    hot: list[Finding] = []
    cited: list[Cited] = []
    untold: list[str] = []
    for h in bare(ev):
        t = h.temperature_c or 0.0
        model = find_model(h.product) if h.product else None
        limit = model.slowdown_c if model is not None else None
        if (model is None or limit is None) and t >= (beyond := threshold("temperature_beyond_design_c")):
            hot.append(finding("temperature_beyond_design", MEDIUM, module=h.module, temperature_c=t, beyond_c=beyond,
                               basis=f"no published slowdown for its model ({_why(h, model is None)}); at or above "
                               f"{beyond:g} °C, beyond every design's slowdown and shutdown temperature",
                               note="a module that hot would have lowered its clocks long before (the capture "
                               "prints no throttle reason): a sensor fault or a cooling failure"))
        elif model is None or limit is None:
            cited.append(Cited(ev.smi_source(), "temperature (no limit printed)", f"{t:g} °C", where=h.module))
            untold.append(f"{h.module} at {t:g} °C ({_why(h, model is None)})")
        elif t >= limit:
            hot.append(finding("thermal_throttling", MEDIUM, module=h.module, temperature_c=t, slowdown_c=limit,
                               basis=f"the catalog's slowdown temperature for {model.name}",
                               note="at or above its design's slowdown temperature: its hardware lowers the clocks "
                               "there (the capture prints no throttle reason)"))
        else:
            cited.append(Cited(ev.smi_source(), "temperature against the design's slowdown", f"{t:g} °C of "
                               f"{limit:g} °C ({model.name}, catalog)", where=h.module))
    if hot:
        beyond_all = all(f.cause == "temperature_beyond_design" for f in hot)
        return confirmed("a module reads hotter than any design allows" if beyond_all else
                         "a module is at its design's slowdown temperature", *hot)
    if untold:
        more = f" and {len(untold) - _NAMED} more" if len(untold) > _NAMED else ""
        return Outcome("inconclusive", f"{'; '.join(untold[:_NAMED])}{more}: the capture prints no throttle reason and no "
                       "slowdown or maximum operating temperature, and no design limit is known for it: can't tell "
                       f"whether it is too hot (give {GIVE['temperature_limits']})", (), tuple(cited))
    if cited:
        return Outcome("clear", "below their design's slowdown temperature", (), tuple(cited))
    return None


def _why(h: ModuleHealth, unknown: bool) -> str:
    """Why the module's design limit is not known: its name cut by the table, a model the catalog lacks, or
    one it holds without a thermal limit."""
    name = (h.product or "").strip()
    if not name:
        return "its model not named"
    if name.endswith(("...", "…")):
        return f"its name cut by the table: {name!r}"
    return f"{name}: {'not in the catalog' if unknown else 'no design limit in the catalog'}"
