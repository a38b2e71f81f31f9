"""Small SVG plots with no plotting dependency: grader-vs-gold scatter and bar charts."""

from __future__ import annotations

from html import escape

W, H, PAD = 360, 300, 40


def scatter(rows: list[dict], title: str) -> str:
    def x(v):
        return PAD + (W - 2 * PAD) * v / 10

    def y(v):
        return H - PAD - (H - 2 * PAD) * v / 10

    dots = "".join(
        f'<circle cx="{x(r["gold"]):.1f}" cy="{y(r["score"]):.1f}" r="3" fill="{"#c0392b" if r["tier"] in ("injection", "keyword_stuffed", "fluent_central_error", "off_topic", "degenerate", "confidently_wrong") else "#2e86c1"}" fill-opacity="0.6"/>'
        for r in rows
    )
    axes = (f'<line x1="{x(0)}" y1="{y(0)}" x2="{x(10)}" y2="{y(0)}" stroke="#333"/>'
            f'<line x1="{x(0)}" y1="{y(0)}" x2="{x(0)}" y2="{y(10)}" stroke="#333"/>'
            f'<line x1="{x(0)}" y1="{y(0)}" x2="{x(10)}" y2="{y(10)}" stroke="#aaa" stroke-dasharray="4"/>')
    labels = (f'<text x="{W / 2}" y="{H - 8}" text-anchor="middle" font-size="12">gold</text>'
              f'<text x="12" y="{H / 2}" font-size="12" transform="rotate(-90 12 {H / 2})" text-anchor="middle">grader</text>'
              f'<text x="{W / 2}" y="16" text-anchor="middle" font-size="13">{escape(title)}</text>')
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}">{axes}{dots}{labels}</svg>'


def bars(values: dict[str, float], title: str, lo: float = 0.0, hi: float = 1.0) -> str:
    items = [(k, v) for k, v in values.items() if v == v]  # drop NaN
    height = 30 + 16 * len(items)
    width = 560
    left = 220
    out = [f'<text x="{width / 2}" y="16" text-anchor="middle" font-size="13">{escape(title)}</text>']
    for i, (k, v) in enumerate(items):
        yy = 26 + 16 * i
        frac = max(0.0, min(1.0, (v - lo) / (hi - lo)))
        out.append(f'<text x="{left - 6}" y="{yy + 11}" text-anchor="end" font-size="11">{escape(k)}</text>')
        out.append(f'<rect x="{left}" y="{yy}" width="{(width - left - 50) * frac:.1f}" height="12" fill="#2e86c1"/>')
        out.append(f'<text x="{left + (width - left - 50) * frac + 4:.1f}" y="{yy + 11}" font-size="11">{v:.2f}</text>')
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">{"".join(out)}</svg>'
