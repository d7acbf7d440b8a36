"""Numbers, counts, sizes, durations and addresses as people write them on a command line or in a
file: ``7.5B``, ``175e9``, ``1GiB``, ``64MiB``, ``30s``, ``[::1]:9400``. One place for the checks
every flag gets: finite, in range, integer where it must be. A bad value is a GpuvetError that
names the flag, the value, the allowed range and the fix — never a ZeroDivisionError later."""

from __future__ import annotations

import ipaddress
import math
import re

from gpuvet.errors import GpuvetError

_SCALE = {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
_BYTES = {"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "kib": 2**10, "mib": 2**20, "gib": 2**30,
          "tib": 2**40}
MAX_COUNT = 1e16  # parameters: four orders above the largest models trained
MAX_BYTES = 2**50  # one PiB: above any single buffer a module or a host holds


def _num(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


def _range_text(lo: float | None, hi: float | None, lo_open: bool = False, hi_open: bool = False) -> str:
    low = f"{'above' if lo_open else 'from'} {_num(lo)}" if lo is not None else ""
    high = f"{'under' if hi_open else 'at most'} {_num(hi)}" if hi is not None else ""
    if low and high:
        if not lo_open:
            return f"{low} to {'under ' if hi_open else ''}{_num(hi)}"  # type: ignore[arg-type]
        return f"{low} and {high}"
    if low:
        return f"{'above' if lo_open else 'at least'} {_num(lo)}"  # type: ignore[arg-type]
    return high or "any finite number"


def check_float(value: float, param: str, lo: float | None = None, hi: float | None = None, *,
                lo_open: bool = False, hi_open: bool = False, unit: str = "") -> float:
    """``value`` if it is finite and inside the range; else a GpuvetError naming the range."""
    allowed = _range_text(lo, hi, lo_open, hi_open) + (f" {unit}" if unit else "")
    bad = not math.isfinite(value)
    bad = bad or (lo is not None and (value <= lo if lo_open else value < lo))
    bad = bad or (hi is not None and (value >= hi if hi_open else value > hi))
    if bad:
        raise GpuvetError(f"{value!r} is out of range: allowed is {allowed}", where=param,
                          fix=f"give a finite number {allowed}.")
    return float(value)


def check_int(value: int, param: str, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` if it is a whole number inside the range; else a GpuvetError naming the range."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise GpuvetError(f"{value!r} is not a whole number", where=param, fix="give an integer.")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        allowed = _range_text(lo, hi)
        raise GpuvetError(f"{value} is out of range: allowed is an integer {allowed}", where=param,
                          fix=f"give an integer {allowed}.")
    return value


def parse_float(text: str, param: str, lo: float | None = None, hi: float | None = None, *,
                lo_open: bool = False, hi_open: bool = False, unit: str = "") -> float:
    """A number written as text (``60``, ``0.5``, ``1e3``), finite and in range."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise GpuvetError(f"{text!r} is not a number", where=param,
                          fix=f"give a number {_range_text(lo, hi, lo_open, hi_open)}.") from None
    return check_float(value, param, lo, hi, lo_open=lo_open, hi_open=hi_open, unit=unit)


def parse_float_list(text: str, param: str, lo: float | None = None, hi: float | None = None, *,
                     lo_open: bool = False, most: int = 4096, example: str = "1,0.5,0") -> tuple[float, ...]:
    """``a,b,c``: at least one finite number, each in range, at most ``most`` of them."""
    parts = [p.strip() for p in text.split(",")]
    if not text.strip() or any(not p for p in parts):
        raise GpuvetError(f"{text!r} is not a comma-separated list of numbers", where=param,
                          fix=f"write e.g. {example} (no empty items).")
    if len(parts) > most:
        raise GpuvetError(f"{len(parts)} values; at most {most} are allowed", where=param, fix="give fewer.")
    return tuple(parse_float(p, param, lo, hi, lo_open=lo_open) for p in parts)


def parse_float_range(text: str, param: str, lo: float, hi: float, *, most: int = 1000, unit: str = "",
                      example: str = "300:700:50 or 300,500,700") -> tuple[float, ...]:
    """``from:to:step`` (both ends included) or ``a,b,c``; every value in [lo, hi], at most ``most``."""
    if ":" not in text:
        return parse_float_list(text, param, lo, hi, most=most, example=example)
    parts = text.split(":")
    if len(parts) != 3:
        raise GpuvetError(f"{text!r} is not from:to:step", where=param, fix=f"write e.g. {example}.")
    start, stop = (parse_float(p, param, lo, hi, unit=unit) for p in parts[:2])
    step = parse_float(parts[2], param, 0, hi - lo if hi > lo else None, lo_open=True, unit=unit)
    if stop < start:
        raise GpuvetError(f"{text!r} ends below where it starts", where=param, fix=f"write e.g. {example}.")
    n = int((stop - start) // step) + 1
    if n > most:
        raise GpuvetError(f"{text!r} makes {n} values; at most {most} are allowed", where=param,
                          fix="use a larger step.")
    return tuple(start + i * step for i in range(n))


def parse_count(text: str, param: str) -> float:
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:e[+]?[0-9]+)?)\s*([kmbgt]?)\s*", text.lower())
    if not m:
        raise GpuvetError(f"{text!r} is not a count", where=param, fix="write e.g. 7.5B, 175e9 or 350M.")
    value = float(m.group(1)) * _SCALE[m.group(2)]
    if not math.isfinite(value) or value > MAX_COUNT:
        raise GpuvetError(f"{text!r} is out of range: allowed is at most {MAX_COUNT:g}", where=param,
                          fix="write e.g. 7.5B, 175e9 or 350M.")
    return value


def parse_bytes(text: str, param: str) -> int:
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kmgt]?i?b?)\s*", text.lower())
    if not m or m.group(2) not in _BYTES:
        raise GpuvetError(f"{text!r} is not a size", where=param, fix="write e.g. 1GiB, 64MiB or 1048576.")
    value = float(m.group(1)) * _BYTES[m.group(2)]
    if not math.isfinite(value) or value > MAX_BYTES:
        raise GpuvetError(f"{text!r} is out of range: allowed is at most 1 PiB", where=param,
                          fix="write e.g. 1GiB, 64MiB or 1048576.")
    return int(value)


def parse_seconds(text: str, param: str, lo: float, hi: float) -> float:
    """A duration (``500ms``, ``30s``, ``12h``, ``3d``) in seconds, from ``lo`` to ``hi``."""
    from gpuvet.node.timeunits import DurationError, format_duration, parse_duration

    allowed = f"from {format_duration(lo) if lo >= 0.1 else f'{lo * 1e3:g}ms'} to {format_duration(hi)}"
    try:
        seconds = parse_duration(text, param)
    except DurationError as exc:
        raise GpuvetError(exc.problem, where=param, fix=f"write e.g. 1s, 500ms, 10m, 12h, 3d ({allowed}).") from None
    if not lo <= seconds <= hi:
        raise GpuvetError(f"{text!r} is out of range: allowed is {allowed}", where=param,
                          fix=f"give a duration {allowed}.")
    return seconds


def parse_host_port(text: str, param: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``PORT`` (loopback), ``[v6]:PORT``; port 1-65535. Host without brackets."""
    fix = "write HOST:PORT with a port from 1 to 65535, e.g. 127.0.0.1:9400 or [::1]:9400."
    text = text.strip()
    if text.isdigit():
        text = ":" + text
    m = re.fullmatch(r"\[([0-9A-Fa-f:.%a-zA-Z]*)\]:([0-9]{1,6})|([^\[\]:]*):([0-9]{1,6})", text)
    if not m:
        raise GpuvetError(f"{text!r} is not HOST:PORT", where=param, fix=fix)
    host = m.group(1) if m.group(1) is not None else m.group(3)
    port = int(m.group(2) or m.group(4))
    if not 1 <= port <= 65535:
        raise GpuvetError(f"port {port} is out of range: allowed is from 1 to 65535", where=param, fix=fix)
    if m.group(1) is not None:
        try:
            ipaddress.IPv6Address(host.split("%")[0])
        except ValueError:
            raise GpuvetError(f"{host!r} inside [] is not an IPv6 address", where=param, fix=fix) from None
    return (host or "127.0.0.1"), port


def is_loopback(host: str) -> bool:
    """Only this machine can reach it (127.0.0.0/8, ::1, localhost); anything else is wider."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to any interface


def binary_size(n: int) -> str:
    """A size as benchmarks announce it: 64 KiB, 64 MiB (in the largest unit that divides it whole)."""
    step = 1024  # bytes in a KiB, a KiB in a MiB, …
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < step or n % step:
            return f"{n} {unit}"
        n //= step
    return f"{n} TiB"
