"""Small SVG charts, written out directly so a report is one self-contained file that opens
offline: bars, a heatmap matrix, a line on a log axis."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape

PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"]


def _tick(v: float) -> str:
    return f"{v:.0f}" if v >= 100 else f"{v:.3g}"


def _svg(width: int, height: int, body: list[str], title: str) -> str:
    return (f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">'
            f'<title>{escape(title)}</title>{"".join(body)}</svg>')


def grouped_bars(title: str, groups: Sequence[str], series: Mapping[str, Sequence[float | None]], unit: str,
                 reference: float | None = None) -> str:
    """Bars per group (e.g. module) for each series (e.g. dtype); an optional reference line."""
    width, height, left, bottom, top = max(360, 40 + len(groups) * (12 * len(series) + 16)), 260, 48, 40, 28
    values: list[float] = [v for vs in series.values() for v in vs if v is not None]
    refs: list[float] = [reference] if reference is not None else []
    top_value = max(values + refs + [1e-9]) * 1.1
    plot_h = height - bottom - top
    slot = (width - left - 10) / max(len(groups), 1)
    bar = max(2.0, (slot - 8) / max(len(series), 1))
    body = [f'<text x="{width / 2}" y="16" text-anchor="middle" font-size="13">{escape(title)}</text>',
            f'<line x1="{left}" y1="{top + plot_h}" x2="{width - 10}" y2="{top + plot_h}" stroke="#333"/>']
    for k in range(5):
        v = top_value * k / 4
        y = top + plot_h - plot_h * k / 4
        body.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end" font-size="10">{_tick(v)}</text>'
                    f'<line x1="{left}" y1="{y:.1f}" x2="{width - 10}" y2="{y:.1f}" stroke="#ddd"/>')
    for gi, g in enumerate(groups):
        x0 = left + gi * slot + 4
        body.append(f'<text x="{x0 + slot / 2 - 4:.1f}" y="{height - bottom + 14}" text-anchor="middle" '
                    f'font-size="10">{escape(g)}</text>')
        for si, (name, vs) in enumerate(series.items()):
            value = vs[gi]
            if value is None:
                continue
            h = plot_h * value / top_value
            body.append(f'<rect x="{x0 + si * bar:.1f}" y="{top + plot_h - h:.1f}" width="{bar - 1:.1f}" '
                        f'height="{h:.1f}" fill="{PALETTE[si % len(PALETTE)]}"><title>{escape(g)} {escape(name)}: '
                        f'{value:.4g} {escape(unit)}</title></rect>')
    if reference:
        y = top + plot_h - plot_h * reference / top_value
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - 10}" y2="{y:.1f}" stroke="#e15759" '
                    f'stroke-dasharray="4 3"/>')
    for si, name in enumerate(series):
        body.append(f'<rect x="{left + si * 70}" y="{height - 16}" width="10" height="10" '
                    f'fill="{PALETTE[si % len(PALETTE)]}"/><text x="{left + si * 70 + 14}" y="{height - 7}" '
                    f'font-size="10">{escape(name)}</text>')
    return _svg(width, height, body, title)


def heatmap(title: str, labels: Sequence[str], cells: Mapping[tuple[str, str], float], unit: str) -> str:
    """Row → column matrix; darker is more; empty cells are blank."""
    n = len(labels)
    size = 46 if n <= 10 else max(12, 460 // n)
    left, top = 60, 40
    width, height = left + n * size + 10, top + n * size + 10
    values = list(cells.values()) or [1.0]
    lo, hi = 0.0, max(values)  # from zero: noise between equal links must not look like a difference
    body = [f'<text x="{width / 2}" y="16" text-anchor="middle" font-size="13">{escape(title)}</text>']
    for i, a in enumerate(labels):
        body.append(f'<text x="{left - 4}" y="{top + i * size + size / 2 + 4}" text-anchor="end" '
                    f'font-size="10">{escape(a)}</text>')
        body.append(f'<text x="{left + i * size + size / 2}" y="{top - 6}" text-anchor="middle" '
                    f'font-size="10">{escape(a)}</text>')
        for j, b in enumerate(labels):
            v = cells.get((a, b))
            if v is None:
                continue
            share = (v - lo) / (hi - lo) if hi > lo else 1.0
            light = int(235 - 160 * share)
            fill = f"rgb({light},{light + 10 if light < 245 else 245},255)"
            text = f"{v:.0f}" if v >= 10 else f"{v:.2g}"
            body.append(f'<rect x="{left + j * size}" y="{top + i * size}" width="{size - 1}" height="{size - 1}" '
                        f'fill="{fill}"><title>{escape(a)} → {escape(b)}: {v:.4g} {escape(unit)}</title></rect>')
            if size >= 30:
                body.append(f'<text x="{left + j * size + size / 2}" y="{top + i * size + size / 2 + 4}" '
                            f'text-anchor="middle" font-size="10">{text}</text>')
    return _svg(width, height, body, title)


def log_lines(title: str, series: Mapping[str, Sequence[tuple[float, float]]], x_unit: str, y_unit: str) -> str:
    """y against x on a log2 x axis (message sizes), one line per series."""
    width, height, left, bottom, top = 560, 280, 56, 44, 28
    points = [p for ps in series.values() for p in ps if p[0] > 0]
    if not points:
        return ""
    xs = [math.log2(p[0]) for p in points]
    x_lo, x_hi = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    y_hi = max(p[1] for p in points) * 1.1 or 1.0
    plot_w, plot_h = width - left - 16, height - bottom - top

    def xy(x: float, y: float) -> tuple[float, float]:
        return left + plot_w * (math.log2(x) - x_lo) / (x_hi - x_lo), top + plot_h - plot_h * y / y_hi

    body = [f'<text x="{width / 2}" y="16" text-anchor="middle" font-size="13">{escape(title)}</text>',
            f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#333"/>',
            f'<text x="{left + plot_w / 2}" y="{height - 6}" text-anchor="middle" font-size="10">{escape(x_unit)}</text>',
            f'<text x="12" y="{top + plot_h / 2}" font-size="10" transform="rotate(-90 12 {top + plot_h / 2})">'
            f'{escape(y_unit)}</text>']
    for k in range(5):
        y = top + plot_h - plot_h * k / 4
        body.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end" font-size="10">{y_hi * k / 4:.3g}</text>'
                    f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#ddd"/>')
    for e in range(math.ceil(x_lo), math.floor(x_hi) + 1, 4):
        x, _ = xy(2.0**e, 0)
        label = f"{2**e // 2**20}M" if e >= 20 else (f"{2**e // 1024}K" if e >= 10 else str(2**e))
        body.append(f'<text x="{x:.1f}" y="{top + plot_h + 14}" text-anchor="middle" font-size="10">{label}</text>')
    for si, (name, ps) in enumerate(series.items()):
        pts = " ".join(f"{a:.1f},{b:.1f}" for a, b in (xy(x, y) for x, y in ps if x > 0))
        color = PALETTE[si % len(PALETTE)]
        body.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2"/>')
        body.append(f'<text x="{left + 8 + si * 110}" y="{top + 12}" font-size="10" fill="{color}">{escape(name)}</text>')
    return _svg(width, height, body, title)


def lines(title: str, series: Mapping[str, Sequence[tuple[float, float]]], x_unit: str, y_unit: str,
          marks: Mapping[str, float] | None = None) -> str:
    """y against x on linear axes, one line per series; ``marks``: vertical lines (e.g. a knee)."""
    width, height, left, bottom, top = 560, 300, 56, 44, 28
    points = [p for ps in series.values() for p in ps]
    if not points:
        return ""
    x_lo, x_hi = min(p[0] for p in points), max(p[0] for p in points)
    x_hi = x_hi if x_hi > x_lo else x_lo + 1
    y_hi = max(p[1] for p in points) * 1.1 or 1.0
    plot_w, plot_h = width - left - 16, height - bottom - top

    def xy(x: float, y: float) -> tuple[float, float]:
        return left + plot_w * (x - x_lo) / (x_hi - x_lo), top + plot_h - plot_h * y / y_hi

    body = [f'<text x="{width / 2}" y="16" text-anchor="middle" font-size="13">{escape(title)}</text>',
            f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#333"/>',
            f'<text x="{left + plot_w / 2}" y="{height - 6}" text-anchor="middle" font-size="10">{escape(x_unit)}</text>',
            f'<text x="12" y="{top + plot_h / 2}" font-size="10" transform="rotate(-90 12 {top + plot_h / 2})">'
            f'{escape(y_unit)}</text>']
    for k in range(5):
        y = top + plot_h - plot_h * k / 4
        x = left + plot_w * k / 4
        body.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end" font-size="10">{_tick(y_hi * k / 4)}</text>'
                    f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#ddd"/>'
                    f'<text x="{x:.1f}" y="{top + plot_h + 14}" text-anchor="middle" font-size="10">'
                    f'{_tick(x_lo + (x_hi - x_lo) * k / 4)}</text>')
    for si, (name, ps) in enumerate(series.items()):
        pts = " ".join(f"{a:.1f},{b:.1f}" for a, b in (xy(x, y) for x, y in ps))
        color = PALETTE[si % len(PALETTE)]
        body.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2"/>')
        body.append(f'<text x="{left + 8 + si * 110}" y="{top + 12}" font-size="10" fill="{color}">{escape(name)}</text>')
    for mi, (name, x) in enumerate((marks or {}).items()):
        px, _ = xy(x, 0)
        anchor = "end" if px > left + plot_w * 0.6 else "start"
        body.append(f'<line x1="{px:.1f}" y1="{top}" x2="{px:.1f}" y2="{top + plot_h}" stroke="#e15759" '
                    f'stroke-dasharray="4 3"/><text x="{px - 3 if anchor == "end" else px + 3:.1f}" '
                    f'y="{top + 60 + 12 * mi}" font-size="10" fill="#e15759" text-anchor="{anchor}">'
                    f'{escape(name)} {x:.0f} W</text>')
    return _svg(width, height, body, title)


def strip(title: str, values: Sequence[tuple[str, float, bool]], unit: str) -> str:
    """One dot per node (label, value, outlier?) on a horizontal axis; outliers in red."""
    width, height, left = 560, 90, 20
    if not values:
        return ""
    lo, hi = min(v for _, v, _ in values), max(v for _, v, _ in values)
    span = hi - lo or abs(hi) or 1.0
    lo, hi = lo - 0.05 * span, hi + 0.05 * span
    body = [f'<text x="{width / 2}" y="16" text-anchor="middle" font-size="12">{escape(title)}</text>',
            f'<line x1="{left}" y1="50" x2="{width - left}" y2="50" stroke="#999"/>',
            f'<text x="{left}" y="76" font-size="10">{_tick(lo)} {escape(unit)}</text>',
            f'<text x="{width - left}" y="76" font-size="10" text-anchor="end">{_tick(hi)} {escape(unit)}</text>']
    for label, v, bad in values:
        x = left + (width - 2 * left) * (v - lo) / (hi - lo)
        color = "#e15759" if bad else "#4e79a7"
        body.append(f'<circle cx="{x:.1f}" cy="50" r="{5 if bad else 3}" fill="{color}" fill-opacity="0.7">'
                    f'<title>{escape(label)}: {v:.4g} {escape(unit)}</title></circle>')
        if bad:
            body.append(f'<text x="{x:.1f}" y="38" font-size="10" text-anchor="middle" fill="#e15759">'
                        f'{escape(label)}</text>')
    return _svg(width, height, body, title)


def grid(title: str, rows: Sequence[str], cols: Sequence[str], cells: Mapping[tuple[str, str], float]) -> str:
    """Rows × columns of values around 100 (% of the fleet median): blue above, red below."""
    cw, ch, left, top = 34, 16, 110, 120
    width, height = left + cw * len(cols) + 10, top + ch * len(rows) + 10
    body = [f'<text x="10" y="16" font-size="13">{escape(title)}</text>']
    for j, c in enumerate(cols):
        x = left + j * cw + cw / 2
        body.append(f'<text x="{x}" y="{top - 6}" font-size="9" transform="rotate(-60 {x} {top - 6})">{escape(c)}</text>')
    for i, r in enumerate(rows):
        y = top + i * ch
        body.append(f'<text x="{left - 4}" y="{y + ch - 4}" font-size="10" text-anchor="end">{escape(r)}</text>')
        for j, c in enumerate(cols):
            v = cells.get((r, c))
            if v is None:
                continue
            d = max(min((v - 100) / 10, 1.0), -1.0)  # ±10 % saturates
            red = 255 if d < 0 else int(255 - 150 * d)
            blue = 255 if d > 0 else int(255 + 150 * d)
            fill = f"rgb({red},{int(255 - 150 * abs(d))},{blue})"
            body.append(f'<rect x="{left + j * cw}" y="{y}" width="{cw - 1}" height="{ch - 1}" fill="{fill}">'
                        f'<title>{escape(r)} {escape(c)}: {v:.1f} % of the fleet median</title></rect>')
    return _svg(width, height, body, title)
