"""Issue 46 (R12D): the kernel's own word that machine checks were logged, where their records are not in the log.
arch/x86/kernel/cpu/mce/core.c (mce_notify_irq) prints 'mce: [Hardware Error]: Machine check events logged' (older
kernels 'Machine check events logged' under 'mce:' or 'mce_notify_irq:') after it queued records for mcelog or
rasdaemon; a journal or a poster's summary that keeps that line and not the records (print_mce's 'CPU 9: Machine
Check: 0 Bank 5: …', read by host_ras) still says the host logged a hardware error: a warn on the host (what it
was only the records tell), never on a GPU. Where a record is in the log (host_ras', EDAC's, APEI's), it is judged
by what reads it and this says nothing."""

from __future__ import annotations

import re

from gpuvet.captures.host_errors import DimmErrors, setup_only
from gpuvet.captures.text import Line

KIND = "host_machine_check_logged"  # kernel_messages.yaml
_LOGGED = re.compile(r"\bMachine check events logged\b")
# a record of the errors the line announces, as EDAC (edac_mc.c), APEI (ghes.c, cper.c) or print_mce prints it
_RECORD = re.compile(r"\bEDAC\b.*\b(?:CE|UE|[Ee]rror)\b|\[Hardware Error\]")
_PLACE = "host CPUs (machine check records not in the log)"


def read(lines: list[Line], found: list[DimmErrors]) -> list[DimmErrors]:
    """One finding for the log's 'Machine check events logged' lines, where no machine check record is found."""
    if any(f.kind.startswith("host_machine_check") for f in found):
        return []
    said = [ln for ln in lines if "check events" in ln.text and _LOGGED.search(ln.text) is not None]
    if not said or any(_record(ln.text) for ln in lines if "rror" in ln.text):
        return []  # the records are in the log (EDAC's decode, APEI's, print_mce's): judged by what reads them
    return [DimmErrors(KIND, _PLACE, said[0].text.strip()[:240], said[0].no, len(said), 0)]


def _record(text: str) -> bool:
    """Whether ``text`` is a machine check or memory error record, read as host_errors reads it: an EDAC driver's
    set-up failure ('EDAC amd64: Error: F0 not found … (broken BIOS?)') is none."""
    return _RECORD.search(text) is not None and not _LOGGED.search(text) and not setup_only(text)
