"""Several files given to one `doctor --from` (issue 46: never merge without a word). A file's findings are
placed by its modules alone, so two machines' logs naming one bus id would be one finding. Where the files name
two hosts or more (one syslog host column, one pdsh host each), each such file's findings carry its host; where
two files name one module and do not both name the same host, each keeps its host, else its file name, as its
place, and a note says so. Files of one machine (both naming the same host) still merge: they are one place."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.node.bus import bus_key

if TYPE_CHECKING:
    from gpuvet.captures.formats import FileCapture


def apart(files: list[tuple[str, FileCapture]]) -> tuple[list[tuple[str, FileCapture]], list[str]]:
    """The files, each whose findings would otherwise merge with another's made again with its records placed
    (read.py keeps a file's read for its next reading: never changed in place); the notes that say it."""
    if len(files) < 2:
        return files, []
    stated = {fc.host for _, fc in files if fc.host}
    places = [(label, fc, _modules(fc)) for label, fc in files]
    notes: list[str] = []
    out = list(files)
    for i, (label, fc, mine) in enumerate(places):
        shared = sorted(set().union(*(mine & theirs for j, (_, other, theirs) in enumerate(places)
                                      if j != i and not (fc.host and fc.host == other.host))))
        if fc.host and len(stated) > 1:
            out[i] = (label, _place(fc, fc.host))
            notes.append(f"{label}: its findings are host {fc.host}'s (the host the file names; the files given "
                         f"name {len(stated)} hosts)")
        elif shared:
            where = fc.host or (label if [lb for lb, _ in files].count(label) == 1 else fc.path)  # node1/dmesg.txt
            out[i] = (label, _place(fc, where))
            why = "the host the file names" if fc.host else "the file names no host"
            notes.append(f"{label}: {_list(shared)} also named by another file given: kept apart, this file's "
                         f"findings placed as '{where}' ({why}); give logs that name their host to join one "
                         "machine's files")
    return out, notes


def _modules(fc: FileCapture) -> set[str]:
    """The modules the file's host-less records name (a kernel log's, AER's, a program's errors')."""
    out = {bus_key(x.bus_id) for x in fc.kernel.xids if x.host is None}
    out |= {e.module for e in fc.kernel.events if e.host is None}
    out |= set(fc.aer.devices) if fc.aer.host is None else set()
    out |= {e.module for e in (*fc.app_errors.errors, *fc.samples.errors) if e.host is None and e.module}
    return out


def _place(fc: FileCapture, where: str) -> FileCapture:
    """A copy of ``fc`` with ``where`` as the host of each of its records that has none."""
    kernel = replace(fc.kernel, xids=[x if x.host else replace(x, host=where) for x in fc.kernel.xids],
                     events=[e if e.host else replace(e, host=where) for e in fc.kernel.events])
    errors = [e if e.host else replace(e, host=where) for e in fc.app_errors.errors]
    samples = [e if e.host else replace(e, host=where) for e in fc.samples.errors]
    fm = [e if e.host else replace(e, host=where) for e in fc.fabric_manager.events]  # its SXids beside the kernel's
    return replace(fc, kernel=kernel, aer=replace(fc.aer, host=fc.aer.host or where),
                   app_errors=replace(fc.app_errors, errors=errors), samples=replace(fc.samples, errors=samples),
                   fabric_manager=replace(fc.fabric_manager, events=fm))


def _list(items: list[str], most: int = 4) -> str:
    return ", ".join(items[:most]) + (f" and {len(items) - most} more" if len(items) > most else "")
