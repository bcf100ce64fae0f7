#!/usr/bin/env python3
"""Preconditioner picture: time to solution per system and method.

usage: bench/plot_precond.py precond.csv [more.csv ...] out.svg [--title TEXT] [--by-size]

Reads the CSV that bench/precond_bench --out FILE.csv writes and draws, per system, one
horizontal bar per method: time to solution (setup included) on a log axis, with the
iterations at the bar's end. Rows that failed validation (ok = 0) and methods that did not
run (the vendor recipe where IC(0) breaks down) are left out, and the system's label says
which. With --by-size it draws instead time to solution against rows (both axes log), a
line per family of generated systems (poisson2d:N, poisson3d:N, ...) and method, with the
iterations at each point. Plain SVG, no plotting library needed.
"""
import csv
import math
import sys

COLORS = {"la jacobi": "#7f7f7f", "la block-jacobi": "#bcbd22", "la fsai": "#1f77b4", "la fsai2": "#6baed6",
          "la ic0": "#2ca02c", "la ilu0": "#98df8a", "la auto": "#17becf", "la amg": "#9467bd", "vendor ic0": "#d62728",
          "eigen ic": "#ff7f0e", "la ic0+exact+exact": "#98df8a", "la ic0+sweeps+exact": "#74c476",
          "la ic0+sweeps+jacobi": "#31a354", "la ic0+sweeps+isai": "#2ca02c", "la ic0+exact+exact ": "#98df8a"}


def draw(rows, dst, title, colors=COLORS, value="time_to_solution_ms", series="method"):
    """Horizontal bars of `value` (log axis) per system, one per `series`, colored by `colors`
    (plot_krylov.py draws its table with it too)."""
    systems = []
    for r in rows:
        if r["system"] not in systems:
            systems.append(r["system"])
    drawn = [r for r in rows if r["ok"] == "1" and float(r[value]) > 0]
    if not drawn:
        sys.exit("no drawable rows")
    lo = math.floor(math.log10(min(float(r[value]) for r in drawn)))
    hi = math.ceil(math.log10(max(float(r[value]) for r in drawn)))
    left, width, bar, gap, top = 190, 620, 11, 14, 50
    height = top + 40 + sum(gap + bar * len([r for r in drawn if r["system"] == s]) for s in systems)
    x = lambda v: left + width * (math.log10(v) - lo) / max(1, hi - lo)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">'
           % (left + width + 170, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="20" font-size="14">%s</text>' % (left, title)]
    for e in range(lo, hi + 1):
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (x(10 ** e), top - 8, x(10 ** e), height - 30))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s ms</text>' % (x(10 ** e), height - 16, "%g" % 10 ** e))
    y = top
    for s in systems:
        mine = [r for r in drawn if r["system"] == s]
        missing = [r[series] for r in rows if r["system"] == s and r not in mine]
        label = s + (" (no " + ", ".join(missing) + ")" if missing else "")
        out.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (left - 6, y + bar * len(mine) / 2 + 4, label[:34]))
        for r in mine:
            v = float(r[value])
            out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>'
                       % (left, y, max(1.0, x(v) - left), bar - 2, colors.get(r[series], "#000")))
            out.append('<text x="%.1f" y="%d" font-size="9">%s its</text>' % (x(v) + 3, y + bar - 3, r["iterations"]))
            y += bar
        y += gap
    ly = top
    for m, c in colors.items():
        if any(r[series] == m for r in drawn):
            out.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>' % (left + width + 60, ly, c))
            out.append('<text x="%d" y="%d">%s</text>' % (left + width + 74, ly + 9, m))
            ly += 16
    out.append("</svg>")
    open(dst, "w").write("\n".join(out) + "\n")


def draw_by_size(rows, dst, title, colors=COLORS):
    """Time to solution against rows, log-log: a line per generated family and method."""
    lines = {}  # (family, method) -> [(rows, ms, iterations)]
    for r in rows:
        if r["ok"] != "1" or ":" not in r["system"] or float(r["time_to_solution_ms"]) <= 0:
            continue
        key = (r["system"].split(":")[0], r["method"])
        lines.setdefault(key, []).append((int(r["rows"]), float(r["time_to_solution_ms"]), r["iterations"]))
    if not lines:
        sys.exit("no generated systems (poisson2d:N, ...) to draw against size")
    pts = [p for v in lines.values() for p in v]
    xlo, xhi = math.floor(math.log10(min(p[0] for p in pts))), math.ceil(math.log10(max(p[0] for p in pts)))
    ylo, yhi = math.floor(math.log10(min(p[1] for p in pts))), math.ceil(math.log10(max(p[1] for p in pts)))
    left, top, width, height = 70, 40, 560, 380
    x = lambda v: left + width * (math.log10(v) - xlo) / max(1, xhi - xlo)
    y = lambda v: top + height - height * (math.log10(v) - ylo) / max(1, yhi - ylo)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">'
           % (left + width + 230, top + height + 50),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="20" font-size="14">%s</text>' % (left, title)]
    for e in range(xlo, xhi + 1):
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (x(10 ** e), top, x(10 ** e), top + height))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%g</text>' % (x(10 ** e), top + height + 16, 10 ** e))
    for e in range(ylo, yhi + 1):
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (left, y(10 ** e), left + width, y(10 ** e)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%g ms</text>' % (left - 4, y(10 ** e) + 4, 10 ** e))
    out.append('<text x="%d" y="%d" text-anchor="middle">rows</text>' % (left + width / 2, top + height + 34))
    ly = top
    for n, ((family, method), v) in enumerate(sorted(lines.items())):
        v.sort()
        c = colors.get(method, "#000")
        dash = ' stroke-dasharray="5,3"' if family.endswith("3d") else ""
        out.append('<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>'
                   % (c, dash, " ".join("%.1f,%.1f" % (x(p[0]), y(p[1])) for p in v)))
        for p in v:
            out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (x(p[0]), y(p[1]), c))
            out.append('<text x="%.1f" y="%.1f" font-size="8">%s</text>' % (x(p[0]) + 4, y(p[1]) - 4, p[2]))
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                   % (left + width + 20, ly + 5, left + width + 44, ly + 5, c, dash))
        out.append('<text x="%d" y="%d">%s, %s</text>' % (left + width + 50, ly + 9, family, method))
        ly += 16
    out.append('<text x="%d" y="%d" font-size="9">numbers: iterations</text>' % (left + width + 20, ly + 12))
    out.append("</svg>")
    open(dst, "w").write("\n".join(out) + "\n")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    args = [a for i, a in enumerate(sys.argv[1:], 1) if not a.startswith("--") and sys.argv[i - 1] != "--title"]
    srcs, dst = args[:-1], args[-1]
    title = sys.argv[sys.argv.index("--title") + 1] if "--title" in sys.argv else "CG time to solution (setup included)"
    rows = [r for src in srcs for r in csv.DictReader(open(src))]  # several CSVs: their rows in order
    if "--by-size" in sys.argv:
        draw_by_size(rows, dst, title)
    else:
        draw(rows, dst, title)


if __name__ == "__main__":
    main()
