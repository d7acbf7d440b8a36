"""How a figure is written for people (terminal tables and HTML alike): one place, so a value
reads the same in both."""

from __future__ import annotations


def value(v: object) -> str:
    """None → empty, booleans → yes/no, floats to four significant digits (thousands grouped)."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e5 else f"{v:,.0f}"
    return str(v)
