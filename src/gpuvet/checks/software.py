"""Software and settings checks: driver, CUDA driver API vs the framework's CUDA runtime,
NCCL, and per module persistence mode, ECC, power limit vs maximum, locked clocks, and other
processes holding the module."""

from __future__ import annotations

from gpuvet.backends.host_load import HostLoad
from gpuvet.backends.readings import Inventory, Unavailable
from gpuvet.checks.model import Check, Json, Layer, Verdict
from gpuvet.node.ecc_design import ecc_off_is_fault

S = Layer.SOFTWARE


def _version_tuple(text: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(p) for p in text.split(".")[:2])
    except ValueError:
        return None


def cuda_compatibility(driver_cuda: str | None, runtime_cuda: str | None) -> Check:
    """A CUDA runtime of major X runs on a driver whose CUDA API is >= X.0 (minor-version
    compatibility); an older driver major cannot run it at all."""
    if not driver_cuda or not runtime_cuda:
        missing = "the driver's CUDA version" if not driver_cuda else "the framework's CUDA runtime"
        return Check(S, "cuda_compatibility", Verdict.SKIP, reason=f"{missing} is not known here")
    drv, rt = _version_tuple(driver_cuda), _version_tuple(runtime_cuda)
    value = f"driver {driver_cuda} / runtime {runtime_cuda}"
    if drv is None or rt is None:
        return Check(S, "cuda_compatibility", Verdict.SKIP, value=value, reason="unreadable version")
    if drv[0] < rt[0]:
        return Check(S, "cuda_compatibility", Verdict.FAIL, value=value, expected=f">= {rt[0]}.0",
                     reason=f"the driver supports CUDA {driver_cuda}, older than the runtime's major {rt[0]}",
                     fix=f"install a driver for CUDA {rt[0]}.x, or a framework build for CUDA {drv[0]}.x")
    if drv < rt:
        return Check(S, "cuda_compatibility", Verdict.WARN, value=value, expected=f">= {runtime_cuda}",
                     reason="runs by minor-version compatibility; features needing a newer driver (PTX JIT) will fail",
                     fix=f"update the driver to one for CUDA {runtime_cuda} or newer")
    return Check(S, "cuda_compatibility", Verdict.PASS, value=value, expected=f">= {runtime_cuda}",
                 evidence={"driver_cuda": driver_cuda, "runtime_cuda": runtime_cuda})


def software_checks(inv: Inventory, versions: dict[str, str | None], no_modules_reason: str | None) -> list[Check]:
    out: list[Check] = []
    sw = inv.software
    if inv.simulated:
        return [Check(S, "driver", Verdict.PASS, value="simulated", expected="simulated",
                      evidence=_read(inv, "driver_version", "simulated"))] + _module_settings(inv)
    if no_modules_reason:
        out.append(Check(S, "driver", Verdict.SKIP, reason=f"no GPU module: {no_modules_reason}"))
    else:
        driver = sw.driver_version
        out.append(Check(S, "driver", Verdict.PASS if not isinstance(driver, Unavailable) else Verdict.WARN,
                         value=None if isinstance(driver, Unavailable) else driver,
                         reason=driver.reason if isinstance(driver, Unavailable) else None,
                         evidence={} if isinstance(driver, Unavailable) else _read(inv, "driver_version", driver)))
        cuda = sw.cuda_driver_version
        out.append(cuda_compatibility(None if isinstance(cuda, Unavailable) else cuda, versions.get("cuda_version")))
        nccl = versions.get("nccl_version")
        out.append(Check(S, "nccl", Verdict.PASS if nccl else Verdict.SKIP, value=nccl,
                         reason=None if nccl else "the framework reports no NCCL",
                         evidence={"source": "the benchmark engine's versions", "field": "nccl_version",
                                   "read": nccl} if nccl else {}))
    torch_version = versions.get("torch_version")
    out.append(Check(S, "framework", Verdict.PASS if torch_version else Verdict.SKIP,
                     value=f"torch {torch_version}" if torch_version else None,
                     reason=None if torch_version else "PyTorch is not installed: pip install 'gpuvet[torch]'",
                     evidence={"source": "the benchmark engine's versions", "field": "torch_version",
                               "read": torch_version} if torch_version else {}))
    return out + _module_settings(inv)


def _read(inv: Inventory, field: str, value: bool | float | int | str) -> dict[str, Json]:
    """A reading as evidence: where it came from (simulated ones say so), the field, the value."""
    source = "simulated node (a model, not hardware)" if inv.simulated else f"{inv.backend} inventory"
    return {"source": source, "field": field, "read": value}


def _module_settings(inv: Inventory) -> list[Check]:
    out: list[Check] = []
    for m in inv.modules:
        def check(name: str, reading: bool | float | Unavailable, bad: bool, reason: str, fix: str,
                  expected: bool | None = None, module: str = m.id) -> None:
            if isinstance(reading, Unavailable):
                out.append(Check(S, name, Verdict.SKIP, module=module, reason=reading.reason))
            else:
                out.append(Check(S, name, Verdict.WARN if bad else Verdict.PASS, value=reading,
                                 module=module, reason=reason if bad else None, fix=fix if bad else None,
                                 expected=expected, evidence=_read(inv, name, reading)))

        check("persistence_mode", m.persistence_mode, m.persistence_mode is False,
              "persistence mode off: the driver reinitialises the module on every first use (seconds of latency)",
              "nvidia-smi -pm 1 (or run nvidia-persistenced)", expected=True)
        check("ecc", m.ecc_enabled, m.ecc_enabled is False and ecc_off_is_fault(m.model, said_present=True),
              "ECC is off: memory errors go unnoticed", "nvidia-smi -e 1, then reboot", expected=True)  # FX68C:
        # NVML says 'not supported' where there is none; off on a card that ships off (GeForce, RTX A) is its design
        limit, top = m.power_limit_w, m.power_limit_max_w
        if isinstance(limit, Unavailable) or isinstance(top, Unavailable):
            check("power_limit", limit if isinstance(limit, Unavailable) else top, False, "", "")
        else:
            low = limit < 0.99 * top
            out.append(Check(S, "power_limit", Verdict.WARN if low else Verdict.PASS, value=limit, unit="W",
                             expected=top, module=m.id, pct_of_expected=100 * limit / top,
                             reason=f"power limit {limit:g} W is under the module's maximum {top:g} W" if low else None,
                             fix=f"nvidia-smi -i <index> -pl {top:g} (gpuvet itself never changes it)" if low else None,
                             evidence=_read(inv, "power_limit_w / power_limit_max_w", f"{limit:g} / {top:g}")))
        check("clocks_locked", m.clocks_locked, m.clocks_locked is True,
              "application clocks are set away from their default", "nvidia-smi -rac (reset application clocks)",
              expected=False)
        procs = m.processes
        if isinstance(procs, Unavailable):
            out.append(Check(S, "other_processes", Verdict.SKIP, module=m.id, reason=procs.reason))
        else:
            busy = len(procs) > 0
            out.append(Check(S, "other_processes", Verdict.WARN if busy else Verdict.PASS, value=len(procs),
                             expected=0, module=m.id,
                             reason=f"held by process(es) {', '.join(map(str, procs))}: figures will be shared" if busy
                             else None, fix="stop them, or validate when the module is idle" if busy else None,
                             evidence=_read(inv, "processes", len(procs))))
    return out


def host_load_check(load: HostLoad | None, threads: int | None) -> Check | None:
    """On a CPU run: how busy the host was. Busy is a WARN that explains slow CPU figures —
    never a fault of the host, and never advice about its frequency governor."""
    if load is None:
        return None
    evidence = {"cpus": load.cpus, "other_cpus": load.other_cpus, "load_1m": load.load_1m, "threads": threads,
                "busiest": [f"{p.name} (pid {p.pid}): {p.cpus:.1f} CPU" for p in load.top]}
    if load.busy:
        return Check(S, "host_load", Verdict.WARN, value=load.other_cpus, unit="CPUs", expected=0.0, device="cpu",
                     reason=f"host busy: {load.describe()}; CPU figures are lower than this host reaches when quiet "
                            f"(ran {threads} thread(s))",
                     fix="re-run when the processes named have finished", evidence=evidence)
    return Check(S, "host_load", Verdict.PASS, value=load.other_cpus, unit="CPUs", expected=0.0, device="cpu",
                 evidence=evidence)
