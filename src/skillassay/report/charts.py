"""Charts as inline SVG, drawn on the server: no JavaScript, nothing fetched (the report works offline and
under a CSP that forbids scripts). Every label passes through ``escape``; the SVG is returned as
``Markup``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from markupsafe import Markup, escape

from skillassay.scoring.stats import Comparison, Point, ScoreStats

PASS = "#1a7f37"
FAIL = "#cf222e"
INK = "#24292f"
GRID = "#d0d7de"
MUTED = "#57606a"
FONT = 'font-family="system-ui, sans-serif" font-size="12"'


def _svg(width: int, height: int, body: list[str], title: str) -> Markup:
    return Markup(
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" '
        f'role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>{"".join(body)}</svg>'
    )


def _axis(
    x0: float, x1: float, y_top: float, y_bottom: float, lo: float, hi: float, ticks: int = 5
) -> list[str]:
    out = []
    for i in range(ticks + 1):
        v = lo + (hi - lo) * i / ticks
        x = x0 + (x1 - x0) * i / ticks
        out.append(f'<line x1="{x:.1f}" y1="{y_top}" x2="{x:.1f}" y2="{y_bottom}" stroke="{GRID}"/>')
        out.append(
            f'<text x="{x:.1f}" y="{y_bottom + 14}" text-anchor="middle" fill="{MUTED}" {FONT}>{v:g}</text>'
        )
    return out


def strip_plot(
    stats: Sequence[ScoreStats],
    points: Mapping[str, Sequence[Point]],
    threshold: float | None = None,
    title: str = "Scores per eval",
) -> Markup:
    """One row per eval: a dot per run (green pass, red fail), the mean as a bar, its bootstrap interval as
    a line.
    """
    label_w, plot_w, row_h = 170, 460, 26
    x0, x1 = label_w, label_w + plot_w
    h = 20 + row_h * max(1, len(stats)) + 24
    body = _axis(x0, x1, 10, h - 24, 0, 100)
    if threshold is not None:
        tx = x0 + plot_w * threshold
        body.append(
            f'<line x1="{tx:.1f}" y1="10" x2="{tx:.1f}" y2="{h - 24}" stroke="{INK}" stroke-dasharray="4 3"/>'
        )
    for row, s in enumerate(stats):
        y = 20 + row * row_h + row_h / 2
        body.append(
            f'<text x="{label_w - 8}" y="{y + 4:.1f}" text-anchor="end" fill="{INK}" '
            f"{FONT}>{escape(s.eval_id)}</text>"
        )
        lo, hi = s.ci
        body.append(
            f'<line x1="{x0 + plot_w * lo:.1f}" y1="{y:.1f}" x2="{x0 + plot_w * hi:.1f}" y2="{y:.1f}" '
            f'stroke="{INK}" stroke-width="2"/>'
        )
        mx = x0 + plot_w * s.mean
        body.append(
            f'<line x1="{mx:.1f}" y1="{y - 9:.1f}" x2="{mx:.1f}" y2="{y + 9:.1f}" stroke="{INK}" '
            'stroke-width="3"/>'
        )
        pts = points.get(s.eval_id, ())
        for j, p in enumerate(pts):
            jitter = ((j * 7) % 11 - 5) * 1.1  # deterministic jitter so equal scores stay visible
            colour = PASS if p.passed else FAIL
            body.append(
                f'<circle cx="{x0 + plot_w * p.score:.1f}" cy="{y + jitter:.1f}" r="3.5" fill="{colour}" '
                f'fill-opacity="0.7"><title>run {p.run_index}: {p.score * 100:.1f}%</title></circle>'
            )
    return _svg(x1 + 20, int(h), body, title)


def histogram(values: Sequence[float], bins: int = 10, title: str = "Score distribution") -> Markup:
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, max(0, int(v * bins)))] += 1
    w, h, x0, y0 = 480, 160, 40, 10
    plot_h = h - 40
    top = max(counts) if any(counts) else 1
    body = _axis(x0, x0 + w - 60, y0, y0 + plot_h, 0, 100)
    bw = (w - 60) / bins
    for i, c in enumerate(counts):
        bh = plot_h * c / top
        body.append(
            f'<rect x="{x0 + i * bw + 1:.1f}" y="{y0 + plot_h - bh:.1f}" width="{bw - 2:.1f}" '
            f'height="{bh:.1f}" '
            f'fill="#0969da" fill-opacity="0.75"><title>{i * 100 // bins}-{(i + 1) * 100 // bins}%: {c} '
            "runs</title>"
            f"</rect>"
        )
        if c:
            body.append(
                f'<text x="{x0 + (i + 0.5) * bw:.1f}" y="{y0 + plot_h - bh - 3:.1f}" text-anchor="middle" '
                f'fill="{INK}" {FONT}>{c}</text>'
            )
    return _svg(w, h, body, title)


def _heat_colour(v: float) -> str:
    # red (0) -> yellow (0.5) -> green (1)
    v = max(0.0, min(1.0, v))
    if v < 0.5:
        r, g = 230, int(80 + 2 * v * 150)
    else:
        r, g = int(230 - (v - 0.5) * 2 * 180), 200
    return f"rgb({r},{g},90)"


def heat_map(criteria: Mapping[str, Mapping[str, float]], title: str = "Criteria by eval") -> Markup:
    """Rows: evals; columns: criteria (union over evals); cell: mean fraction earned. Blank where an eval has
    no such criterion."""
    evals = list(criteria)
    cols: list[str] = []
    for e in evals:
        for c in criteria[e]:
            if c not in cols:
                cols.append(c)
    if not evals or not cols:
        return Markup("")
    label_w, cell_w, cell_h, head_h = 170, 58, 24, 120
    w = label_w + cell_w * len(cols) + 110  # room for the last rotated label
    h = head_h + cell_h * len(evals) + 10
    body = []
    for j, c in enumerate(cols):
        x = label_w + j * cell_w + cell_w / 2
        body.append(
            f'<text transform="translate({x:.1f},{head_h - 6}) rotate(-45)" fill="{INK}" '
            f"{FONT}>{escape(c)}</text>"
        )
    for i, e in enumerate(evals):
        y = head_h + i * cell_h
        body.append(
            f'<text x="{label_w - 8}" y="{y + cell_h / 2 + 4:.1f}" text-anchor="end" fill="{INK}" {FONT}>'
            f"{escape(e)}</text>"
        )
        for j, c in enumerate(cols):
            x = label_w + j * cell_w
            v = criteria[e].get(c)
            if v is None:
                body.append(
                    f'<rect x="{x}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" fill="#f6f8fa"/>'
                )
                continue
            body.append(
                f'<rect x="{x}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" fill="{_heat_colour(v)}">'
                f"<title>{escape(e)} / {escape(c)}: {v * 100:.0f}%</title></rect>"
                f'<text x="{x + cell_w / 2 - 1:.1f}" y="{y + cell_h / 2 + 3:.1f}" text-anchor="middle" '
                f'fill="{INK}" '
                f"{FONT}>{v * 100:.0f}</text>"
            )
    return _svg(w, h, body, title)


def comparison_plot(cmp: Comparison, a_label: str, b_label: str) -> Markup:
    """Forest plot of B - A per eval and overall, with the bootstrap intervals and a zero line."""
    rows = [*cmp.per_eval, *([cmp.overall] if cmp.overall else [])]
    if not rows:
        return Markup("")
    extent = 0.05
    for d in rows:
        extent = max(extent, abs(d.delta), *(abs(x) for x in (d.ci or ())))
    # a round axis: the smallest of these (in fractions) that holds every interval
    extent = next((e for e in (0.05, 0.1, 0.2, 0.25, 0.4, 0.5, 0.8, 1.0) if e >= extent), 1.0)
    label_w, plot_w, row_h = 170, 460, 26
    x0 = label_w
    h = 20 + row_h * len(rows) + 40

    def sx(v: float) -> float:
        return x0 + plot_w * (v + extent) / (2 * extent)

    body = _axis(x0, x0 + plot_w, 10, h - 40, round(-extent * 100), round(extent * 100), ticks=4)
    body.append(f'<line x1="{sx(0):.1f}" y1="10" x2="{sx(0):.1f}" y2="{h - 40}" stroke="{INK}"/>')
    for i, d in enumerate(rows):
        y = 20 + i * row_h + row_h / 2
        name = "overall" if d.eval_id == "*" else d.eval_id
        weight = ' font-weight="bold"' if d.eval_id == "*" else ""
        body.append(
            f'<text x="{label_w - 8}" y="{y + 4:.1f}" text-anchor="end" fill="{INK}"{weight} {FONT}>'
            f"{escape(name)}</text>"
        )
        colour = (PASS if d.delta > 0 else FAIL) if d.excludes_zero else MUTED
        if d.ci:
            body.append(
                f'<line x1="{sx(d.ci[0]):.1f}" y1="{y:.1f}" x2="{sx(d.ci[1]):.1f}" y2="{y:.1f}" '
                f'stroke="{colour}" '
                f'stroke-width="2"/>'
            )
        shape = "rect" if d.eval_id == "*" else "circle"
        if shape == "rect":
            body.append(
                f'<rect x="{sx(d.delta) - 5:.1f}" y="{y - 5:.1f}" width="10" height="10" fill="{colour}"/>'
            )
        else:
            body.append(f'<circle cx="{sx(d.delta):.1f}" cy="{y:.1f}" r="5" fill="{colour}"/>')
    body.append(
        f'<text x="{x0 + plot_w / 2}" y="{h - 8}" text-anchor="middle" fill="{MUTED}" {FONT}>'
        f"difference in points ({escape(b_label)} minus {escape(a_label)}), 95% interval</text>"
    )
    return _svg(x0 + plot_w + 20, h, body, f"{b_label} vs {a_label}")
