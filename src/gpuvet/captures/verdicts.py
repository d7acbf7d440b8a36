"""A vendor tool's own verdict on a module, read from what it printed: ``npu-smi info``'s Health
column (OK, Warning, Alarm, Critical), xpu-smi's diag and health rows, and amd-smi's RAS and ECC
fields (an ECC block state of MULT_UC or POISON, a non-zero uncorrectable count, a bad-page threshold exceeded). The tool has
already judged the module; gpuvet only says what the words mean, so a listed module marked
Critical is never "no cause found".

amd-smi's ECC states (amdsmi's AmdSmiRasErrState / rocm_smi's rsmi_ras_err_state_t): ENABLED,
DISABLED, NONE (no error), PARITY (errors present, type unknown), SING_C (a single correctable
error), MULT_UC (multiple uncorrectable errors), POISON (the firmware found an error and isolated
the page: treated as uncorrectable).
"""

from __future__ import annotations

import re

from gpuvet.captures import neuron_status, rocm_sensors, tt_faults, tt_resets, xrt_tools
from gpuvet.captures.records import ListedModule, ToolVerdict

_NPU_HEALTH = {"ok": "ok", "warning": "warn", "alarm": "warn", "critical": "critical"}
_ECC_STATE = {"enabled": "ok", "disabled": "ok", "none": "ok", "n/a": "ok", "sing_c": "warn", "parity": "warn",
              "mult_uc": "critical", "poison": "critical"}
_YES = ("true", "yes")


def verdicts(m: ListedModule) -> list[ToolVerdict]:
    """Every verdict the tool printed for the module, judged ones and ok ones (a clear cites those)."""
    tool = m.tool or "the vendor's tool"
    out: list[ToolVerdict] = []
    if m.health is not None:
        out.append(ToolVerdict(tool, m.label, m.bus_id, "Health", m.health,
                               _NPU_HEALTH.get(m.health.strip().lower(), "unknown")))
    xpu = tool.startswith("xpu-smi")
    failed = xpu and any(_xpu_severity(p, v) not in ("ok", "info") for p, v in m.ras if not p.endswith(": Result"))
    for path, value in m.ras:
        if xpu and path.endswith(": Result") and failed:
            continue  # the diag's overall Fail: the failing test's own row says it
        out.append(ToolVerdict(tool, m.label, m.bus_id, path, value,
                               _xpu_severity(path, value) if xpu else _ras_severity(path, value)))
    if m.ecc_uncorrectable is not None and not any(p.endswith("TOTAL_UNCORRECTABLE_COUNT") for p, _ in m.ras):
        out.append(ToolVerdict(tool, m.label, m.bus_id, "ECC/TOTAL_UNCORRECTABLE_COUNT", str(m.ecc_uncorrectable),
                               "critical" if m.ecc_uncorrectable > 0 else "ok"))
    return out


# xpu-smi's words: diag's Pass/Fail, health's OK/Warning/Critical/Unknown. A diag test that failed is a warning (the
# test to rerun and read: a failed check, not a verdict on the hardware), unless its message says it had no
# threshold to judge by ('Unconfigured or invalid threshold'): then nothing was judged
_XPU_WORDS = {"pass": "ok", "ok": "ok", "healthy": "ok", "warning": "warn", "critical": "critical", "fail": "warn"}
_NO_THRESHOLD = re.compile(r"\b(?:unconfigured|invalid) threshold|threshold (?:is )?not (?:set|configured)", re.I)


# xpu-smi stats' and dump's counters (since the driver loaded): an uncorrectable error is critical; a reset or a
# driver error a warning (the device recovered, something made it); correctable errors and programming errors
# (the application's) are said, not judged: no bound from a source says how many are too many. A throttle
# reason naming heat warns; any other reason (power, a set frequency range) is the device's limit, not judged.
_XPU_COUNTS = {"Uncorrectable": "critical", "Reset": "warn", "Driver Errors": "warn", "Correctable": "info",
               "Programming Errors": "info"}


def _xpu_counter(path: str, value: str) -> str | None:
    """A stats/dump counter's severity; None for a path that is not one of them."""
    name = path.rpartition(": ")[2]
    if name == "Throttle Reason":
        said = value.lower()
        return "warn" if "thermal" in said or "temperature" in said else "ok" if "not" in said else "info"
    judged = next((s for k, s in _XPU_COUNTS.items() if name.endswith(k)), None)
    if judged is None or not path.startswith(("xpu-smi stats", "xpu-smi dump")):
        return None
    return "unknown" if not value.isdigit() else judged if int(value) > 0 else "ok"


def _xpu_severity(path: str, value: str) -> str:
    if (counted := _xpu_counter(path, value)) is not None:
        return counted
    word = value.split()[0].lower() if value.split() else ""
    if word == "fail" and _NO_THRESHOLD.search(value):
        return "unknown"
    return _XPU_WORDS.get(word, "unknown")


# accel_tools' verdicts (issue 46): the habanalabs driver's 'Device is NOT usable', a Tenstorrent chip that did not
# come back from tt-smi's reset, hl-smi's volatile uncorrectable count (as amd-smi's: any is an uncorrectable error)
_ACCEL_SAID = {"habanalabs: device not usable": "critical", "habanalabs: heartbeat failed": "critical",
               "habanalabs: reset after a fault": "warn", "tt-smi: chip not back after reset": "critical",
               "tt-smi: reset not completed": "warn", "tt-smi: reset": "ok", "tt-smi: chip not answering": "critical",
               **tt_faults.SEVERITY, **tt_resets.SEVERITY,  # R8A: tt-umd's DRAM training timeout, tt-kmd's hwmon
               **xrt_tools.SEVERITY, **neuron_status.SEVERITY}  # R13C: XRT validate/readiness, amdxdna, NRT codes
# (R8A) init failure and oops; R10A: tt-kmd's chip whose firmware is down and that it cannot reset


def _ras_severity(path: str, value: str) -> str:
    word = value.strip().lower()
    if path in _ACCEL_SAID:
        return _ACCEL_SAID[path]
    if path.startswith("npu-smi: fault code "):  # ASC: an NPU fault code, at the level Ascend handles it (npu_smi)
        from gpuvet.knowledge.ascend import npu_fault

        fault = npu_fault(path.rsplit(" ", 1)[1])
        return fault.severity if fault is not None else "unknown"
    if path == "tt-smi: dram_status":  # tt-smi -s: the chip's DRAM trained (true) or not (false: the chip unusable)
        return "ok" if word == "true" else "critical" if word == "false" else "unknown"
    if path == "hl-smi: Module status":  # hl-smi -q's word for a module it can use; any other is named, not judged
        return "ok" if word == "operational" else "unknown"
    if path == "hl-smi: Replaced Rows pending":  # a row replacement that takes effect at the next reset
        return "warn" if word in _YES else "ok" if word == "no" else "unknown"
    if path == "hl-smi: volatile uncorrectable":
        return "critical" if word.isdigit() and int(word) > 0 else "ok" if word.isdigit() else "unknown"
    if path in rocm_sensors.PATHS:  # garbage readings, a monitor that returned nothing
        return rocm_sensors.PATHS[path]
    if path in ("rocm-smi: readings unreadable", "rocm-smi: every reading N/A"):  # rocm_table.UNANSWERED (the tool's
        return "warn"  # ERROR, no reading taken) and ALL_UNREAD (no cell of the row read)
    if path.startswith("rvs ") and path.endswith(": pass"):  # the ROCm Validation Suite's own verdict on an action
        return "ok" if word == "true" else "warn" if word == "false" else "unknown"  # (rocm_tools.read_rvs)
    if path.endswith("UNCORRECTABLE_COUNT"):
        return "critical" if word.isdigit() and int(word) > 0 else "ok" if word.isdigit() else "unknown"
    if path.endswith(("CORRECTABLE_COUNT", "DEFERRED_COUNT")):  # corrected: said, not judged (no bound from a
        # source); deferred: an uncorrectable error the hardware isolated (poisoned) before it was consumed
        worse = "warn" if path.endswith("DEFERRED_COUNT") else "info"
        return worse if word.isdigit() and int(word) > 0 else "ok" if word.isdigit() else "unknown"
    if path.endswith("BAD_PAGE_THRESHOLD_EXCEEDED"):
        return "critical" if word in _YES else "ok" if word in ("false", "no", "n/a") else "unknown"
    return _ECC_STATE.get(word, "unknown")


def ras_fields(fields: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The RAS/ECC fields of an amd-smi module (text or --json, flattened to KEY paths) that say
    something about its state: ECC block states, error counts, the bad-page threshold."""
    picked = [(k, v.strip()) for k, v in fields.items()
              if ("ECC_BLOCK_STATE/" in k or k.endswith(("CORRECTABLE_COUNT", "DEFERRED_COUNT"))
                  or k.endswith("BAD_PAGE_THRESHOLD_EXCEEDED"))
              and v.strip() and v.strip().upper() != "N/A"]
    return tuple(picked[:256])
