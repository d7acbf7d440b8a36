"""Issue 46: the GPU drivers' own error-level strings, read as gpuvet's kernel reader reads them.

benchmarks/data/kernel_phrasebook.json holds every error-level format string of the drivers' sources (dev_err,
DRM_ERROR, drm_err, pr_err, gt_err of Linux's drivers/gpu/drm amd/amdgpu, amd/pm, amd/amdkfd and i915, taken from
freebsd/drm-kmod's copy; nv_printf(NV_DBG_ERRORS …), NV_DEV_PRINTF and NV_PRINTF(LEVEL_ERROR …) of NVIDIA's open
kernel modules), each with its source path. Each string becomes one dmesg line in its driver's real prefix form,
its printf arguments filled plausibly, after one healthy line of the same driver; kernel.parse reads it. A string
is then read as the right class (a named kind whose cause fits what the string says), read generically (only
driver_error_unnamed: a lead), or not read (clear).

What a string says is judged here from its own words (MEANINGS below: a reset or resume that failed, a module
that did not initialise, a firmware that stopped answering, a page fault, an uncorrectable error …), not from
gpuvet's patterns; a string none of them fits ('other': an allocation, an invalid argument) counts only as read
or not. Usage: .venv/bin/python benchmarks/kernel_phrasebook.py [--show MEANING] [--misses N]
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from gpuvet.captures import kernel
from gpuvet.captures.kernel_messages import kernel_message_catalog
from gpuvet.captures.text import Line

DATA = Path(__file__).parent / "data" / "kernel_phrasebook.json"
STAMP = "[   12.345678]"
AMD_BUS, INTEL_BUS, NV_BUS = "0000:03:00.0", "0000:00:02.0", "0000:01:00.0"
# what a string says, in its own words, and the causes (faults.yaml) a right reading names; first match wins
MEANINGS: tuple[tuple[str, re.Pattern[str], frozenset[str]], ...] = (
    ("reset_failed", re.compile(r"\breset\b.{0,40}\bfail|\bfail\w* to (?:do )?\w*\s?reset|recover\w* fail|"
                                r"failed to recover", re.I), frozenset({"module_needs_reset", "module_hung_reset"})),
    ("resume_failed", re.compile(r"\bresume\b.{0,40}\bfail|\bfail\w* to resume", re.I),
     frozenset({"module_needs_reset"})),
    ("fell_off_bus", re.compile(r"fallen off the bus|not back on the bus|MMIO unreliable|GPU is lost|"
                                r"lost from (?:the )?bus|response:\s?0xFFFFFFFF", re.I), frozenset({"module_fell_off_bus"})),
    ("bar_unplaced", re.compile(r"\bfail\w* to (?:re-?)?(?:allocate|assign|map) BAR|\bBAR\d? .{0,30}\bno space", re.I),
     frozenset({"module_cannot_attach"})),
    ("page_fault", re.compile(r"page fault|\bVM fault|mmu fault|protection fault", re.I),
     frozenset({"module_page_fault"})),
    ("hardware_error", re.compile(r"uncorrectable|\bpoison|\bUE\b|\bECC error|\bEDC", re.I),
     frozenset({"module_hardware_error"})),
    ("thermal", re.compile(r"throttl|over ?temperature|\bCTF\b|temperature (?:reached|exceed)", re.I),
     frozenset({"thermal_throttling"})),
    ("firmware_unresponsive", re.compile(r"\b(?:SMU|SMC|PSP|MES|GSP|RPC|KIQ|powerplay)\b.{0,60}\b(?:time ?out|"
                                         r"timed out|not respond|no response|hang|hung|not ready)|"
                                         r"\bFailed to send message\b|\bSMU is in hanged state|"
                                         r"\bnot done with your previous command", re.I),
     frozenset({"module_needs_reset", "module_hung_reset", "module_init_failed", "module_firmware_boot_failed"})),
    ("init_failed", re.compile(r"\b(?:[hs]w_init|late_init|probe|bootstrap|boot)\b.{0,40}\bfail|"
                               r"\bfail\w* to (?:boot|bootstrap|probe|start the (?:GPU|ASIC))|"
                               r"\bfailed during (?:GPU )?init|\binit(?:iali[sz]ation)? of IP block\b|"
                               r"\bfirmware (?:load(?:ing)?|init\w*)\b.{0,30}\bfail|\bFatal error during|"
                               r"\b(?:device start|pci_enable_device|rm_init_private_state\(\)) failed", re.I),
     frozenset({"module_init_failed", "module_firmware_boot_failed", "module_cannot_attach", "module_needs_reset"})),
    ("hang", re.compile(r"\bhang\b|\bhung\b|\bring \S+ timeout|\bjob timed? ?out|\bwedged\b|\btimed out, cancelling|"
                        r"\btime ?out waiting for (?:VM flush|sem acquire|kiq fence)", re.I),
     frozenset({"module_hung_reset", "module_needs_reset", "module_fence_timeout", "module_ring_reset_recovered"})),
)
OTHER = "other"
_ARG = re.compile(r"%[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|z|j|t|L)?([diouxXpPscfe%])(?:[a-zA-Z]+)?")


@dataclass(frozen=True)
class Row:
    """One string: where it is from, what it says (MEANINGS' name) and how gpuvet read its line."""

    path: str
    text: str
    meaning: str
    read: str  # right, generic, clear, other_named (a named kind of another meaning)
    kinds: tuple[str, ...]


def _filled(fmt: str, path: str) -> str:
    """The format with its arguments filled as the driver would: an error code (-110) after 'ret', 'error' or '(',
    else a count or index; a bus id; a ring's, a hub's, an IP block's or an engine's name where the words say which."""
    text = fmt.replace("\\n", " ").replace("\\t", " ").replace('\\"', '"').strip()
    text = re.sub(r"%04[xX]:%02[xX]:%02[xX]\.%[xX]", NV_BUS, text)  # a bus id printed field by field
    return _ARG.sub(lambda m: _value(text, m, path), text).strip()


_VALUES = {"d": "3", "i": "3", "u": "3", "o": "7", "x": "1a", "X": "1A", "p": "00000000d1e2c3b4",
           "P": "00000000d1e2c3b4", "c": "A", "f": "1.0", "e": "1.0", "%": "%"}
_ERRNO_BEFORE = re.compile(r"(?:ret|err\w*|\br|rc|status|failed|\()\s*[:=]?\s*[\[(]?$", re.I)
_NAMES = ((re.compile(r"\bring\s*$", re.I), "gfx_0.0.0"), (re.compile(r"<$"), "gfx_v9_0"),
          (re.compile(r"\[$"), "gfxhub0"))


def _value(text: str, m: re.Match[str], path: str) -> str:
    before, conv = text[:m.start()], m.group(1)
    if conv in "di":
        return "-110" if _ERRNO_BEFORE.search(before) else "3"
    if conv != "s":
        return _VALUES[conv]
    if text[m.end():].startswith(" page fault"):
        return "no-retry"  # gmc_v9_0.c's '[%s] %s page fault'
    name = next((v for pat, v in _NAMES if pat.search(before)), None)
    return name or ("rcs0" if "/i915/" in path else "gfx")


def _line(path: str, call: str, fmt: str) -> tuple[str, str]:
    """(a healthy line of the driver, the string's line) in the driver's real prefix form."""
    msg = _filled(fmt, path)
    stem = Path(path).stem
    if path.startswith(("kernel-open", "src/nvidia")):
        ok = f"{STAMP} NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  595.45.04  Release Build"
        if call == "NV_DEV_PRINTF":
            return ok, f"{STAMP} NVRM: GPU {NV_BUS}: {msg}"
        if call in ("NV_PRINTF", "NV_PRINTF_EX"):
            return ok, f"{STAMP} NVRM: {stem}: {msg}"
        return ok, f"{STAMP} {msg}" if msg.startswith("NVRM") else f"{STAMP} NVRM: {msg}"
    if "/i915/" in path:
        ok = f"{STAMP} i915 {INTEL_BUS}: [drm] GuC firmware i915/tgl_guc_70.bin version 70.20.0"
        gt = "GT0: " if call in ("gt_err", "guc_err") else ""
        return ok, f"{STAMP} i915 {INTEL_BUS}: [drm] *ERROR* {gt}{msg}"
    ok = f"{STAMP} amdgpu {AMD_BUS}: amdgpu: SE 4, SH per SE 2, CU per SH 10, active_cu_number 60"
    if call.startswith("DRM_ERROR") or call == "DRM_DEV_ERROR":
        return ok, f"{STAMP} [drm:{stem}_fn [amdgpu]] *ERROR* {msg}"
    if call.startswith("drm_err"):
        return ok, f"{STAMP} amdgpu {AMD_BUS}: [drm] *ERROR* {msg}"
    if call.startswith("pr_"):
        return ok, f"{STAMP} amdgpu: {msg}"
    return ok, f"{STAMP} amdgpu {AMD_BUS}: amdgpu: {msg}"


def meaning_of(fmt: str) -> tuple[str, frozenset[str]]:
    return next(((name, causes) for name, pat, causes in MEANINGS if pat.search(fmt)), (OTHER, frozenset()))


def read_row(path: str, call: str, fmt: str) -> Row:
    ok, bad = _line(path, call, fmt)
    lines = [Line(1, ok), Line(2, bad)]
    got = kernel.parse(lines)
    catalog = kernel_message_catalog()
    kinds = tuple(sorted({e.kind for e in got.events} | {f"xid{x.code}" for x in got.xids}))
    causes = {catalog[k].cause if k in catalog else "module_fell_off_bus" if k == "xid79" else k for k in kinds}
    meaning, want = meaning_of(fmt)
    named = causes - {"driver_error_unnamed"}
    read = "clear" if not kinds else "generic" if not named else "right" if (named & want or meaning == OTHER) \
        else "other_named"
    return Row(path, bad, meaning, read, kinds)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--show", help="list the rows of this meaning that are not read right")
    ap.add_argument("--misses", type=int, default=0, help="list this many rows per meaning not read right")
    args = ap.parse_args()
    data = json.loads(DATA.read_text(encoding="utf-8"))
    rows = [read_row(p, c, f) for p, c, f in data["strings"]]
    table: dict[str, Counter[str]] = {}
    for r in rows:
        table.setdefault(r.meaning, Counter())[r.read] += 1
    print(f"{len(rows)} strings ({', '.join(data['sources'].values())})")
    print(f"{'meaning':<24}{'strings':>8}{'right':>7}{'generic':>9}{'clear':>7}{'other':>7}")
    for name in [m for m, _, _ in MEANINGS] + [OTHER]:
        c = table.get(name, Counter())
        print(f"{name:<24}{sum(c.values()):>8}{c['right']:>7}{c['generic']:>9}{c['clear']:>7}{c['other_named']:>7}")
    classed = [r for r in rows if r.meaning != OTHER]
    total = Counter(r.read for r in classed)
    print(f"{'classed (all but other)':<24}{len(classed):>8}{total['right']:>7}{total['generic']:>9}"
          f"{total['clear']:>7}{total['other_named']:>7}")
    for r in rows:
        if r.read != "right" and (args.show in (r.meaning, "all") or args.misses):
            print(f"  [{r.meaning}/{r.read}] {r.path}: {r.text[len(STAMP) + 1:][:150]}  {r.kinds}")


if __name__ == "__main__":
    main()
