"""nvidia-smi -q's Fabric section beyond State and Status (issue 46, FX68E): its Health fields (NVML's
nvmlGpuFabricInfo_v3 healthMask, printed by nvidia-smi 550+: Bandwidth Full or Degraded, Route Recovery in
progress, Route Unhealthy, Access Timeout Recovery True or False; 570+: Incorrect Configuration, Summary) and the
NVLink domain it joined (CliqueId, ClusterUUID). A field away from its healthy value is said with the Summary."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuvet.captures.records import SmiTextModule

# each Health field and the value a healthy fabric prints (nvidia-smi's docs, NVML's NVML_GPU_FABRIC_HEALTH_MASK_*)
HEALTHY = (("Bandwidth", "full"), ("Route Recovery in progress", "false"), ("Route Unhealthy", "false"),
           ("Access Timeout Recovery", "false"), ("Incorrect Configuration", "none"))
_UNKNOWN = ("n/a", "", "not supported")


def _field(fields: dict[str, str], suffix: str) -> str | None:
    """The value of the field whose path ends in ``suffix`` (Fabric/…), None where not printed or N/A."""
    for path, value in fields.items():
        if path.endswith(suffix) and "Fabric/" in path:
            v = value.strip()
            return None if v.lower() in _UNKNOWN else v
    return None


def health_detail(fields: dict[str, str]) -> str | None:
    """The Health fields away from their healthy value, then the ones at it ('Bandwidth Full'), as printed;
    None where the section prints none of them."""
    read = [(name, v) for name, good in HEALTHY if (v := _field(fields, f"Fabric/Health/{name}")) is not None]
    if not read:
        return None
    bad = [f"{name} {v}" for name, v in read if v.lower() != dict(HEALTHY)[name]]
    good = [f"{name} {v}" for name, v in read if v.lower() == dict(HEALTHY)[name]]
    return "; ".join(x for x in (", ".join(bad), ", ".join(good) and f"at their healthy value: {', '.join(good)}")
                     if x)


def clique(fields: dict[str, str]) -> str | None:
    """The NVLink domain the module joined: 'CliqueId 2, ClusterUUID dc6e…', None where neither is printed."""
    said = [f"{k} {v}" for k in ("CliqueId", "ClusterUUID") if (v := _field(fields, f"Fabric/{k}")) is not None]
    return ", ".join(said) or None


def domains(modules: list[SmiTextModule]) -> list[str]:
    """One note per module that names its NVLink domain (CliqueId, ClusterUUID) and its fabric's state and health:
    inventory and doctor say where the module sits, whatever is judged of it."""
    out = []
    for m in modules:
        if (said := clique(m.fields)) is not None:
            state = [f"{k} {v}" for k in ("State", "Status", "Health/Summary")
                     if (v := _field(m.fields, f"Fabric/{k}")) is not None]
            where = m.bus_id if not m.bus_id.startswith("(") else "a GPU"
            out.append(f"nvidia-smi -q: {where}: NVLink fabric {said}"
                       + (f" ({', '.join(state).replace('Health/Summary', 'health')})" if state else ""))
    return out
