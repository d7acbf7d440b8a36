"""The CLI's terminal: one console factory (no emoji codes, no highlighting, so a bus id such as
``0000:AB:00.0`` is never read as ``:ab:``), figures at 3 significant figures with their unit,
evidence in words, and progress on stderr (a bar on a terminal, a plain line per step otherwise)."""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

import rich.text
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from gpuvet.cli.beat import heartbeat as heartbeat  # re-exported: the commands call term.heartbeat, term.step
from gpuvet.cli.beat import step as step
from gpuvet.cli.literal import literal

Progress = Callable[[int, int, str], None]


def _shown(text: str, _translate_table: Mapping[int, None] | None = None) -> str:
    """What rich's Text keeps of ``text``: rich deletes BEL, backspace, VT, FF and CR when a Text is
    made (``rich.control.strip_control_codes``), so ``evil\\a`` printed as ``evil``; here every
    control character is kept as its escape (``\\x07``), as ``_render_buffer`` shows the rest, and
    its width is the width printed."""
    return literal(text)


# every Text of the CLI (tables, banners, notes) is made through this
rich.text.strip_control_codes = _shown  # type: ignore[attr-defined]


class _Console(Console):
    """rich's console, but a reader that goes away (``gpuvet topo | head``) ends the command
    with exit 0, as ``main`` treats a broken pipe, not rich's exit 1, which here means a finding."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, (sys.stderr if self.stderr else sys.stdout).fileno())  # no second error at exit
        raise BrokenPipeError

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        """Every text segment printed literally: a node name or product string holding an escape
        sequence shows it escaped. rich's own cursor moves (control segments) pass as they are."""
        return super()._render_buffer(
            seg if seg.control or not seg.text else Segment(literal(seg.text), seg.style, seg.control) for seg in buffer)


def console(stderr: bool = False) -> Console:
    """Every console of the CLI: emoji codes and highlighting off (data is never decorated)."""
    return _Console(emoji=False, highlight=False, stderr=stderr)


def sig(value: float | int | None, unit: str = "", digits: int = 3) -> str:
    """``value`` to ``digits`` significant figures with thousands separators and its unit:
    1303.2 → "1,300", 72.83 → "72.8", 0.01234 → "0.0123", 1e-15 → "1.00e-15"; None or NaN → "-"."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if isinstance(value, int) and abs(value) < 10**digits:  # a count: as it is
        return f"{value:,} {unit}" if unit else f"{value:,}"
    v = float(value)
    if v == 0:
        text = "0"
    else:
        magnitude = math.floor(math.log10(abs(v)))
        if magnitude < -4:  # 1e-15 as 0.000000000000001 took two lines of a table
            text = f"{v:.{digits - 1}e}"
        else:
            decimals = max(digits - 1 - magnitude, 0)
            rounded = round(v, digits - 1 - magnitude)
            text = f"{rounded:,.{decimals}f}"
    return f"{text} {unit}" if unit else text


NARROW = 100  # columns below which a table's times give up their year to the words beside them


def minute(iso: str, width: int) -> str:
    """An ISO time to the minute ('2026-01-09 00:40'); below ``NARROW`` columns without its year
    ('01-09 00:40'), so the names and words beside it keep their room (--json has it whole)."""
    text = iso[:16].replace("T", " ")
    return text[5:] if width < NARROW and len(text) == 16 else text


def size(num_bytes: float | int | None) -> str:
    """A byte count in binary units, as nccl-tests and nvidia-smi name sizes: 8 B, 64 KiB, 256 MiB."""
    if num_bytes is None:
        return "-"
    value = float(num_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:g} {unit}" if value == int(value) else f"{sig(value)} {unit}"
        value /= 1024
    return f"{value:g} TiB"  # pragma: no cover - the loop returns


_REASONS = {
    "sw_thermal_slowdown": "software thermal slowdown", "hw_thermal_slowdown": "hardware thermal slowdown",
    "sw_power_cap": "software power cap", "hw_power_brake_slowdown": "hardware power brake",
    "hw_slowdown": "hardware slowdown", "sync_boost": "sync boost", "gpu_idle": "idle",
    "applications_clocks_setting": "application clocks setting", "display_clock_setting": "display clock setting",
}


def reason_words(name: str) -> str:
    """A throttle reason as nvidia-smi -q words it ("SW Thermal Slowdown" → software thermal slowdown)."""
    key = name.strip().lower().replace(" ", "_")
    return _REASONS.get(key, key.replace("sw_", "software ").replace("hw_", "hardware ").replace("_", " "))


def throttled(reasons: Sequence[str]) -> str:
    return "throttled: " + ", ".join(reason_words(r) for r in reasons) if reasons else "not throttled"


# evidence keys by their unit suffix: (suffix, unit)
_UNITS = (("_c", "°C"), ("_w", "W"), ("_mhz", "MHz"), ("_gbps", "GB/s"), ("_pct", "%"), ("_ms", "ms"),
          ("_us", "µs"), ("_s", "s"), ("_tflops", "TFLOPS"))
_LABELS = {"temp_c": "", "power_w": "", "sm_clock_mhz": "SM clock", "mem_clock_mhz": "memory clock",
           "limit_w": "limit", "max_w": "maximum"}


# evidence keys that name a thing (an Xid 99999 is not "100,000"): printed as they are, no separators
_IDENTIFIERS = frozenset(("xid", "sxid", "code", "pid", "id", "bus", "index", "ordinal", "domain", "serial", "errno",
                          "rank", "port", "lane", "minor", "slot", "function", "device", "uuid"))


def _identifier(key: str) -> bool:
    return key in _IDENTIFIERS or key.rsplit("_", 1)[-1] in _IDENTIFIERS


def _figure(key: str, value: float) -> str:
    """One evidence figure: an identifier exactly, a count exactly (thousands separated), a reading
    with its unit at 3 significant figures."""
    if isinstance(value, int) and _identifier(key):
        return f"{key.replace('_', ' ')} {value}"
    for suffix, unit in _UNITS:
        if key.endswith(suffix):
            label = _LABELS.get(key, key.removesuffix(suffix).replace("_", " "))
            return f"{label} {sig(value, unit)}".strip()
    if key.endswith("_bytes"):
        return f"{key.removesuffix('_bytes').replace('_', ' ')} {size(value)}"
    return f"{key.replace('_', ' ')} {value:,}" if isinstance(value, int) else f"{key.replace('_', ' ')} {sig(value)}"


def evidence_words(evidence: Mapping[str, object], limit: int = 8) -> str:
    """Evidence as a person reads it: "87.1 °C, 594 W, SM clock 1,680 MHz, throttled: software
    thermal slowdown" rather than ``temp_c=87.12070840425868``."""
    parts: list[str] = []
    for key, value in list(evidence.items())[:limit]:
        if key in ("reasons", "throttle_reasons") and isinstance(value, (list, tuple)):
            parts.append(throttled([str(v) for v in value]))
        elif isinstance(value, bool):
            parts.append(f"{key.replace('_', ' ')}: {'yes' if value else 'no'}")
        elif isinstance(value, (int, float)):
            parts.append(_figure(key, value))
        elif isinstance(value, (list, tuple)):
            parts.append(f"{key.replace('_', ' ')}: {', '.join(str(v) for v in value)}")
        elif value is not None:
            parts.append(f"{key.replace('_', ' ')}: {value}")
    return ", ".join(parts)


@contextlib.contextmanager
def progress(what: str, bar: bool | None = None, every_s: float = 2.0, ticking: bool = True) -> Iterator[Progress]:
    """A progress callback (done, total, label): a bar on a terminal; otherwise a plain line on
    stderr at the first step, then at most every ``every_s`` seconds and at the end, so a piped
    run is never silent for long and never floods a log. ``ticking=False``: the bar is drawn at
    each step only, with no refresh thread (a caller that forks workers: with a second thread
    running, ``fleet.fold`` must spawn them, ~0.3 s more on this VM)."""
    if bar is None:
        bar = sys.stderr.isatty()
    if bar:
        from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as Bar

        shown = Bar(TextColumn("{task.description}", markup=False), BarColumn(),
                    TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(), console=console(stderr=True),
                    transient=True, auto_refresh=ticking)
        task = shown.add_task(what, total=1, visible=False)  # shown from the first step: no "0/1" frame before it
        with shown:
            yield lambda done, total, label: shown.update(task, completed=done, total=max(total, 1), description=label,
                                                          visible=True, refresh=not ticking)
        return
    import time

    last: list[float] = [-math.inf]

    def line(done: int, total: int, label: str) -> None:
        now = time.monotonic()
        if now - last[0] >= every_s or done >= total:
            last[0] = now
            step(f"{what}: {label} ({done}/{total})")

    yield line


class _Titled(Table):
    """A table whose title is a line of its own, wrapped at the terminal's width (rich wraps a
    title at the table's width, which for a narrow table makes four lines of one)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        title, self.title = self.title, None
        try:
            if title:
                yield Text(str(title), style="bold")
            yield from super().__rich_console__(console, options)
        finally:
            self.title = title


def table(title: str | None = None) -> Table:
    """A table drawn for 80 columns first: a rule under the header, no outer box."""
    from rich import box

    return _Titled(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False,
                   collapse_padding=True)


def column(t: Table, header: str, *, right: bool = False, key: bool = False, min_width: int | None = None) -> None:
    """``key``: a verdict or a place (module, link) — never wrapped, never cut; the other columns
    wrap (and fold a word longer than the column) rather than cut with an ellipsis; ``min_width``
    keeps the longest word of a wrapping column whole."""
    t.add_column(header, justify="right" if right else "left", no_wrap=key, overflow="fold", min_width=min_width)
