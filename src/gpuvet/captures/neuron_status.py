"""AWS Neuron runtime (NRT) status codes as its log lines print them (issue 46), beside accel_tools' neuron-ls.
Codes and meanings from the Neuron docs (aws-neuron/aws-neuron-sdk docs/neuron-runtime/nrt-return-codes and
nrt_status.h's NRT_* enum): an application's or a model's error (bad input, NEFF version, not enough NeuronCores,
an unsupported collectives topology, an inference that completed with errors) is said as info, never a fault of
the device; a request timeout is a warn. The device-state statuses (NRT_EXEC_HW_ERR_* 1200-1205, NRT_EXEC_NC_BUSY)
and nrt_init's failures stay accel_runtime's (R8B: one fact, one verdict); a line naming them is left to it.
Framings: 'nrt_execute status=1004', 'Inference completed with err: 1004', 'NRT:nrt_load_collectives  Unsupported
topology', and the NRT_* names themselves."""

from __future__ import annotations

import re

from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import Line

NRT = "Neuron runtime"
STATUS = "nrt: status"
TOPOLOGY = "nrt: unsupported topology"
# NRT_* by number: (name, meaning, severity)
CODES: dict[int, tuple[str, str, str]] = {
    2: ("NRT_INVALID", "invalid NEFF, instruction or input tensor (the model or its inputs)", "info"),
    3: ("NRT_INVALID_HANDLE", "invalid model handle", "info"),
    4: ("NRT_RESOURCE", "could not allocate a resource (device or host memory) for the request", "info"),
    5: ("NRT_TIMEOUT", "the request timed out", "warn"),
    7: ("NRT_QUEUE_FULL", "the inference queue is full (transient)", "info"),
    9: ("NRT_LOAD_NOT_ENOUGH_NC", "not enough free NeuronCores to load the model", "info"),
    10: ("NRT_UNSUPPORTED_NEFF_VERSION", "the NEFF's version is not supported by this runtime", "info"),
    11: ("NRT_FAIL_HOST_MEM_ALLOC", "host memory allocation failed", "info"),
    14: ("NRT_CLOSED", "the runtime was closed", "info"),
    1002: ("NRT_EXEC_BAD_INPUT", "invalid input to the execution (missing or mis-sized tensors)", "info"),
    1003: ("NRT_EXEC_COMPLETED_WITH_NUM_ERR", "execution completed with numerical errors (NaN)", "info"),
    1004: (
        "NRT_EXEC_COMPLETED_WITH_ERR",
        "execution completed with non-numerical errors: usually the compiled "
        "model (compiler or NeuronCore-group/thread use), rarely the hardware",
        "info",
    ),
    1006: ("NRT_EXEC_OOB", "an out-of-bounds access during execution (the model)", "info"),
    1100: ("NRT_COLL_PENDING", "a collective operation is still pending", "info"),
    1204: ("NRT_EXEC_SW_NQ_OVERFLOW", "a notification queue overflowed (software)", "info"),
}
_BY_NAME = {name: code for code, (name, _, _) in CODES.items()}
SEVERITY = {f"{STATUS} {code}": sev for code, (_, _, sev) in CODES.items()} | {TOPOLOGY: "info"}
MARKERS = ("nrt_", "NRT", "NMGR", "Inference completed with err")
_CODE = re.compile(
    r"(?:nrt_\w{1,40}|NRT:\w{1,40}|NMGR:\w{1,40}).{0,120}?(?:status|err(?:or)?|code|ret)\s*[=:]\s*(\d{1,4})\b"
    r"|Inference completed with err(?:or)?:?\s*(\d{1,4})\b|(?-i:\b(NRT_[A-Z_]{4,40})\b)",
    re.I,
)
_TOPO = re.compile(r"Unsupported topology\.?\s*(Supported number of Neuron Cores is [\d, or]{1,40}(?:a multiple of \d+)?)?")
_NC = re.compile(r"\bnd(\d{1,2})\b|Neuron ?Device (\d{1,2})|NeuronCore ?(\d{1,3})|\bnc(\d{1,3})\b", re.I)


def _code(text: str) -> int:
    """The NRT status a line names, by number or NRT_* name; -1 for none."""
    if (m := _CODE.search(text)) is None:
        return -1
    number = m.group(1) or m.group(2)
    return int(number) if number else _BY_NAME.get(m.group(3).upper(), -1)


def _device(lines: list[Line]) -> str | None:
    """The first device index the log names (ndN, 'Neuron Device N'): a NeuronCore (ncN) before it is no device's."""
    for ln in lines:
        t = ln.text[:200]
        if "nd" not in (low := t.lower()) and "device" not in low:
            continue
        for m in _NC.finditer(t):
            if m.group(1) or m.group(2):
                return m.group(1) or m.group(2)
    return None


def read(lines: list[Line], out: ListedParse) -> None:
    """Each NRT status the runtime logged, by number or NRT_* name, once per code with its meaning; the
    collectives' unsupported topology as the configuration error it is."""
    seen: dict[str, tuple[int, str]] = {}
    for ln in lines:
        t = ln.text[:400]
        low = t.lower()  # the cheap gate: every line read here names NRT/NMGR, an inference error or a topology
        if "nrt" not in low and "nmgr" not in low and "inference completed" not in low and "topology" not in low:
            continue
        if "nrt_init" in t or "EXEC_HW_ERR" in t or "NC_BUSY" in t:  # accel_runtime's (R8B)
            continue
        if (code := _code(t)) in CODES:
            seen.setdefault(f"{STATUS} {code}", (ln.no, t.strip()))
            out.claimed.add(ln.no)
        elif (p := _TOPO.search(t)) is not None:
            seen.setdefault(TOPOLOGY, (ln.no, p.group(0).strip()))
            out.claimed.add(ln.no)
    said: list[tuple[str, str]] = []
    for path, (_, text) in seen.items():
        if path == TOPOLOGY:
            said.append((path, f"{text[:160]} (a configuration error: the NeuronCore count asked for; no device fault)"))
        else:
            name, meaning, _ = CODES[int(path.rsplit(" ", 1)[1])]
            said.append((path, f"{name} ({path.rsplit(' ', 1)[1]}): {meaning}; line: {text[:120]}"))
    if said:
        device = _device(lines)
        label = f"Neuron device {device}" if device is not None else "Neuron device (index not in the log)"
        out.modules.append(ListedModule(label, "AWS Neuron device", tool=NRT, ras=tuple(said[:16])))
        out.kinds.append(NRT)
