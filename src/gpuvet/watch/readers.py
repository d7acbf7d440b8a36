"""Which recorded-telemetry format a file is, decided by its content (never its name)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gpuvet.errors import GpuvetError
from gpuvet.watch import read_prom, read_smi
from gpuvet.watch.recording import Recording

MAX_FILE_BYTES = 8 * 2**30
EXPECTED = ("an nvidia-smi --query-gpu CSV log (header line such as 'timestamp, index, temperature.gpu, "
            "power.draw [W], …'), an nvidia-smi dmon or pmon log ('# gpu pwr gtemp …' / '# gpu pid …'), a "
            "Prometheus text dump with timestamps (DCGM_FI_DEV_… or gpuvet_module_… series), or the JSON of "
            "Prometheus' /api/v1/query_range")


def detect(head: str) -> str | None:
    """'query-csv', 'dmon', 'pmon', 'exposition', 'range-json' or None, from the first lines."""
    if read_prom.is_range_json(head):
        return "range-json"
    lines = [line for line in head.splitlines() if line.strip()][:40]
    for line in lines:
        if read_smi.is_pmon_header(line):
            return "pmon"
        if read_smi.is_dmon_header(line):
            return "dmon"
        if read_smi.is_query_header(line):
            return "query-csv"
    if read_prom.is_exposition(head):
        return "exposition"
    return None


def read_file(path: Path, interval_s: float) -> Recording:
    """Raises GpuvetError for a missing, unreadable, oversized or unrecognised file."""
    where = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise GpuvetError(f"{size / 2**30:.1f} GiB is more than one replay reads ({MAX_FILE_BYTES // 2**30} GiB)",
                              where=where, fix="split the log by day and replay the days you need.")
        with path.open(encoding="utf-8", errors="replace") as f:
            head = f.read(16384)
            kind = detect(head)
            if kind is None:
                raise GpuvetError(f"not a telemetry format gpuvet reads; expected {EXPECTED}", where=where,
                                  fix="check the file (its first lines are what decide the format).")
            f.seek(0)
            node = path.name.split(".")[0] or "node"
            if kind == "range-json":
                return read_prom.read_range_json(f.read(), where)
            if kind == "exposition":
                return read_prom.read_exposition(f, where)
            if kind == "dmon":
                return read_smi.read_dmon(f, node, where, interval_s)
            if kind == "pmon":
                return read_smi.read_pmon(f, node, where, interval_s)
            return read_smi.read_query_csv(f, node, where, interval_s)
    except OSError as exc:
        raise GpuvetError(f"cannot read it ({exc.strerror or exc})", where=where,
                          fix="check the path and its permissions.") from None


def read_files(paths: Sequence[Path], interval_s: float) -> Recording:
    if not paths:
        raise GpuvetError("no file to replay", where="--replay", fix="give one or more telemetry files after it.")
    recs = [read_file(p, interval_s) for p in paths]
    out = Recording(" + ".join(sorted({r.source for r in recs})))
    for r in recs:
        out.merge(r)
    return out
