#!/usr/bin/env python3
"""Draws timeouts-churn's ns per operation against the number of pending timeouts (log-log SVG).

Reads the markdown tables ./run-all.sh writes (results/timeouts-churn-fifo.md and
results/timeouts-churn-random.md) and writes the chart to the path given (default:
../Docs/timeouts-churn.svg). Uses each benchmark's p50 of "ns per op".
"""
import math
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parent / "Docs" / "timeouts-churn.svg"
SIZES = {"10k": 10_000, "100k": 100_000, "1M": 1_000_000, "10M": 10_000_000}
COLORS = {"LoopScheduler": "#1f77b4", "libuv-C": "#2ca02c", "NIO": "#d62728"}


def read(order):
    """{system: {n: ns}} from one results file."""
    series = {}
    text = (HERE / "results" / f"timeouts-churn-{order}.md").read_text()
    for block in re.split(r"^### ", text, flags=re.M)[1:]:
        title = block.splitlines()[0]
        match = re.match(r"timeouts-churn-\w+/(\S+) \((\w+)\)", title)
        row = re.search(r"^\| ns per op( \((K|M)\))?\s*\|\s*[\d.]+\s*\|\s*[\d.]+\s*\|\s*([\d.]+)", block, re.M)
        if not match or not row:
            continue
        scale = {None: 1, "K": 1_000, "M": 1_000_000}[row.group(2)]
        series.setdefault(match.group(1), {})[SIZES[match.group(2)]] = float(row.group(3)) * scale
    return series


def main():
    width, height, left, right, top, bottom = 760.0, 440.0, 70.0, 170.0, 40.0, 60.0
    data = {order: read(order) for order in ("fifo", "random")}
    values = [v for order in data.values() for s in order.values() for v in s.values()]
    lo, hi = 10 ** math.floor(math.log10(min(values))), 10 ** math.ceil(math.log10(max(values)))
    nlo, nhi = 10_000, 10_000_000

    def x(n):
        return left + (math.log10(n) - math.log10(nlo)) / (math.log10(nhi) - math.log10(nlo)) * (width - left - right)

    def y(v):
        return top + (1 - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))) * (height - top - bottom)

    svg = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{int(width)}" height="{int(height)}" '
        'font-family="sans-serif" font-size="12">',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="{(width - right + left) / 2}" y="22" text-anchor="middle" font-size="15">'
        "timeouts-churn: ns per cancel + schedule against pending timeouts</text>",
    ]
    for n in (10_000, 100_000, 1_000_000, 10_000_000):
        label = {10_000: "10k", 100_000: "100k", 1_000_000: "1M", 10_000_000: "10M"}[n]
        svg.append(f'<line x1="{x(n)}" y1="{top}" x2="{x(n)}" y2="{height - bottom}" stroke="#ddd"/>')
        svg.append(f'<text x="{x(n)}" y="{height - bottom + 16}" text-anchor="middle">{label}</text>')
    v = lo
    while v <= hi * 1.0001:
        for m in (1, 2, 5):
            if lo <= v * m <= hi:
                svg.append(f'<line x1="{left}" y1="{y(v * m)}" x2="{width - right}" y2="{y(v * m)}" stroke="#eee"/>')
                svg.append(f'<text x="{left - 8}" y="{y(v * m) + 4}" text-anchor="end">{int(v * m):,}</text>')
        v *= 10
    svg.append(f'<text x="{(width - right + left) / 2}" y="{height - 18}" text-anchor="middle">pending timeouts (log)</text>')
    svg.append(f'<text x="18" y="{(height - bottom + top) / 2}" text-anchor="middle" '
               f'transform="rotate(-90 18 {(height - bottom + top) / 2})">ns per operation (log)</text>')
    legend = top + 10
    for order, dash in (("fifo", ""), ("random", ' stroke-dasharray="6 4"')):
        for system, points in sorted(data[order].items()):
            color = COLORS.get(system, "#555")
            coords = " ".join(f"{x(n):.1f},{y(v):.1f}" for n, v in sorted(points.items()))
            svg.append(f'<polyline fill="none" stroke="{color}" stroke-width="2"{dash} points="{coords}"/>')
            for n, v in sorted(points.items()):
                svg.append(f'<circle cx="{x(n):.1f}" cy="{y(v):.1f}" r="3" fill="{color}"/>')
            lx = width - right + 12
            svg.append(f'<line x1="{lx}" y1="{legend}" x2="{lx + 24}" y2="{legend}" stroke="{color}" stroke-width="2"{dash}/>')
            svg.append(f'<text x="{lx + 30}" y="{legend + 4}">{system}, {order}</text>')
            legend += 18
    svg.append("</svg>")
    OUT.write_text("\n".join(svg) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
