"""Issue 46 (IGC): the i915 and xe drivers' firmware failures, judged by what the GPU loses. The words are the
drivers' own: intel_uc_fw.c's '%s firmware %s: fetch failed with error %d' (later 'fetch failed %pe') and
'Failed to load %s firmware %s (%d)', intel_guc_fw.c's 'GUC: load failed: status = 0x…' and 'firmware production
part check failure', intel_uc.c's 'GuC initialization failed %pe' and 'GuC is uninitialized', intel_gt.c's
'Enabling uc failed (%d)' (then i915_gem.c declares the GPU wedged), intel_huc.c's
authentication failures, intel_dmc.c's 'Failed to load DMC firmware %s (%pe). Disabling runtime power
management.', intel_uc.c's 'Incompatible option enable_guc=%d - %s'; xe_uc_fw.c and xe_guc.c print the same.

The GuC runs the GPU's submission where i915 uses GuC submission (every discrete part: DG1, DG2/Arc, Flex, Max;
ADL-P, MTL and later integrated parts) and on every xe module: there its fetch or load failing leaves the GT
wedged, no compute or media (critical). On an older integrated part the driver says 'GuC is uninitialized' and
runs on execlists: a note, unless the firmware loader's user-helper fallback stalled the boot waiting for the
file (error -11 after 'Falling back to sysfs fallback': warn). A HuC or GSC failure loses media authentication
(warn); a DMC miss costs runtime power management only (info). The lines are claimed here and named benign to
kernel_unknown (PATTERN), so none becomes an unnamed lead; the loaded firmware is intel_boot's inventory."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures.kernel_places import intel_module_of
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelEvent, KernelParse

WORDS = ("GuC", "GUC", "HuC", "GSC", "DMC", "enable_guc", "Enabling uc")  # a line read holds one
_HEAD = 400
_DRIVER = re.compile(
    r"\b(?:i915|xe)(?: [0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])?: |\[drm:\w*(?:i915|"
    r"intel|xe|guc|huc|uc)\w*|\[drm\] (?:\*ERROR\* )?GT\d|\bi915\b.{0,40}\bGuC\b"
)
_FW = r"(?P<fw>GuC|HuC|GSC|DMC)"
# message kind -> its pattern, tried in order; each the driver's own words
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "guc_failed",
        re.compile(
            r"\bGU?C: load failed\b|\bGuC load failed\b|\bGUC: firmware production part check failure|"
            r"\bGuC initialization failed\b|\bFailed to initialize GuC\b(?!.{0,30}\(ignored\))|\bGuC fw load failed|"
            r"\bEnabling uc failed\b|\bFailed to load GuC firmware\b",
            re.I,
        ),
    ),
    (
        "fw_fetch",
        re.compile(
            _FW + r" firmware (?P<path>\S{1,100}): (?:fetch failed|unexpected version)|"
            r"\bFailed to (?:load|fetch) " + _FW.replace("fw", "fw2") + r" firmware (?P<path2>\S{1,100})"
            r"|\bFailed to fetch (?P<fw3>GuC|HuC)\b",
            re.I,
        ),
    ),
    (
        "huc_failed",
        re.compile(
            r"\bHuC(?::| load| auth)[^\n]{0,60}\b(?:failed|not authenticated|timed out)\b|"
            r"\bHuC initialization failed\b|\bGSC (?:proxy|firmware|load)[^\n]{0,60}"
            r"\b(?:failed|didn't bind|timed out|timeout)\b",
            re.I,
        ),
    ),
    ("dmc_failed", re.compile(r"\bFailed to load DMC firmware\b|\b(?:Truncated|Invalid|Unknown) DMC firmware\b", re.I)),
    ("guc_option", re.compile(r"\bIncompatible option enable_guc=\d")),
    ("guc_skipped", re.compile(r"\bGuC is uninitialized\b|\bFailed to initialize GuC\b.{0,30}\(ignored\)", re.I)),
)
# every line of the class, for kernel_unknown's BENIGN entry: read here, never an unnamed lead
PATTERN = re.compile("|".join(f"(?:{p.pattern})" for _, p in _KINDS) + r"|\b(?:GuC|HuC|GSC) firmware\(s\) can be", re.I)
# the firmware paths of parts where i915 uses GuC submission (discrete, and integrated from ADL-P on)
_MANDATORY = re.compile(r"\b(?:i915|xe)/(?:dg1|dg2|pvc|bmg|adlp|mtl|lnl|arl|ptl)_", re.I)
_INTEGRATED_BUS = "00:02.0"  # every Intel integrated GPU sits at 00:02.0; a discrete one never does
_WAITED = re.compile(r"(?:error|failed) (?:-11|-EAGAIN|-110|-ETIMEDOUT)\b")
_FALLBACK = re.compile(r"Falling back to (?:sysfs|user helper)", re.I)
_CAME_UP = re.compile(r"\bGU?C:? submission enabled\b|\bGuC submission: enabled\b", re.I)
SHOWN = 3
# the kinds this reader gives (kernel_messages.yaml says what each means)
KINDS = (
    "intel_guc_failed",
    "intel_huc_failed",
    "intel_fw_wait",
    "intel_dmc_failed",
    "intel_guc_optional",
    "intel_guc_skipped",
    "intel_guc_option",
)
PROBE_FAILED, GUC_FAILED = "intel_init_failed", "intel_guc_failed"  # kernel.py's probe failure; this reader's GuC


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with one event per firmware fault and module: the kind judged from every line of that module (a
    fetch failure on a part that needs the GuC is its load failure; an integrated part that went on without it
    a note), the lines claimed."""
    from gpuvet.captures.kernel import INTEL_NO_BUS, KernelModule

    said: dict[str, list[tuple[str, int]]] = {}
    fallback: set[str] = set()
    for i in holding(lines, (*WORDS, "Falling back"), marks):
        head = lines[i].text[:_HEAD]
        if _FALLBACK.search(head) is not None and ("i915" in head or "xe " in head):
            fallback.add(intel_module_of(lines, i))
            continue
        kind = _kind(head)
        if kind is None or _DRIVER.search(head) is None:
            continue
        said.setdefault(intel_module_of(lines, i), []).append((kind, i))
    if not said:
        return out
    have = {k.module for k in out.modules}
    out.modules += [KernelModule(m, "Intel") for m in said if m not in have and m != INTEL_NO_BUS]
    failed = {e.module for e in out.events if e.kind == PROBE_FAILED}
    for module, found in said.items():
        events, read = _judged(lines, module, found, module in fallback)
        if module in failed:  # its probe's failure says the module is gone: the GuC's lines are that event's context
            events, read = (
                [e for e in events if e.kind != GUC_FAILED],
                read - {e.line for e in events if e.kind == GUC_FAILED},
            )
        out.events += events
        out.claimed |= read
    return out


def _kind(head: str) -> str | None:
    return next((kind for kind, pattern in _KINDS if pattern.search(head) is not None), None)


def _judged(
    lines: list[Line], module: str, found: list[tuple[str, int]], waited: bool
) -> tuple[list[KernelEvent], set[int]]:
    """The events of one module's firmware lines, at most one per kind the knowledge base names (the GuC failing
    says it all where it did: its 'uninitialized' note, a fetch's own event, is that failure's), and the line numbers
    read."""
    from gpuvet.captures.kernel import KernelEvent

    kinds: dict[str, list[int]] = {}
    for kind, i in found:
        if kind == "guc_failed" and _came_up(lines, i):
            continue  # a retried load that came up (gen9 tries three times)
        name = _fetch_kind(lines[i].text[:_HEAD], module, waited) if kind == "fw_fetch" else "intel_" + kind
        kinds.setdefault(name, []).append(i)
    if "intel_guc_failed" in kinds or "intel_fw_wait" in kinds or "intel_guc_optional" in kinds:
        kinds.pop("intel_guc_skipped", None)
    events = []
    for name, at in kinds.items():
        texts = [lines[i].text.strip()[:240] for i in at]
        events.append(
            KernelEvent(
                name,
                module,
                texts[0],
                lines[at[0]].no,
                count=len(at),
                driver="xe" if "xe " in texts[0] or "[drm:xe_" in texts[0] else "i915",
                shown=tuple(texts[:SHOWN]),
            )
        )
    return events, {lines[i].no for at in kinds.values() for i in at}


def _fetch_kind(text: str, module: str, waited: bool) -> str:
    """A fetch failure's kind by the firmware it is and the part it is for."""
    fw = next((m.group(0).split()[0] for m in re.finditer(r"\b(?:GuC|HuC|GSC|DMC)\b", text, re.I)), "GuC")
    if fw.upper() in ("HUC", "GSC"):
        return "intel_huc_failed"
    if fw.upper() == "DMC":
        return "intel_dmc_failed"
    if (
        "xe " in text
        or "[drm:xe_" in text
        or _MANDATORY.search(text) is not None
        or not module.endswith(_INTEGRATED_BUS)
        and ":" in module
    ):
        return "intel_guc_failed"  # the GuC runs this part's submission: without it the GT is wedged
    return "intel_fw_wait" if waited and _WAITED.search(text) is not None else "intel_guc_optional"


def _came_up(lines: list[Line], i: int) -> bool:
    return any(_CAME_UP.search(ln.text[:_HEAD]) is not None for ln in lines[i + 1 : i + 60])
