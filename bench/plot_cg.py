#!/usr/bin/env python3
"""CG picture: time per iteration against system size, la's GPU solver and the vendor CG.

usage: bench/plot_cg.py cg.csv out.svg [--title TEXT]

Reads the CSV that bench/cg_bench --out FILE.csv writes and draws, on log-log axes, the time
per iteration of la and of the vendor-library CG (cusparseSpMV + cuBLAS) against the number
of rows, one line per precision, with the bytes-model floor dotted. Only rows that passed
validation (ok = 1) are drawn. Plain SVG, no plotting library needed.
"""
import csv
import math
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    title = sys.argv[sys.argv.index("--title") + 1] if "--title" in sys.argv else "CG: time per iteration"
    rows = [r for r in csv.DictReader(open(src)) if r["ok"] == "1"]
    if not rows:
        sys.exit("no validated rows in " + src)
    series = [("la_us", "double", "la, double", "#1f77b4", ""), ("la_us", "float", "la, float", "#6baed6", ""),
              ("vendor_us", "double", "vendor CG, double", "#d62728", ""),
              ("vendor_us", "float", "vendor CG, float", "#ff9896", ""),
              ("floor_us", "double", "bytes floor, double", "#555", "4,3"),
              ("floor_us", "float", "bytes floor, float", "#aaa", "4,3")]
    xs = [int(r["rows"]) for r in rows]
    ys = [float(r[k]) for r in rows for k in ("la_us", "vendor_us", "floor_us") if float(r[k]) > 0]
    x0, x1 = math.log10(min(xs)) - 0.1, math.log10(max(xs)) + 0.1
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    left, top, w, h = 70, 60, 620, 380

    def px(x):
        return left + (math.log10(x) - x0) / (x1 - x0) * w

    def py(y):
        return top + h - (math.log10(y) - y0) / (y1 - y0) * h

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + w + 40}" height="{top + h + 60}" '
           'font-family="sans-serif" font-size="11">', f'<text x="{left}" y="20" font-size="14">{title}</text>']
    for e in range(y0, y1 + 1):
        y = py(10 ** e)
        out.append(f'<line x1="{left}" x2="{left + w}" y1="{y}" y2="{y}" stroke="#ddd"/>'
                   f'<text x="{left - 6}" y="{y + 4}" text-anchor="end">{10 ** e:g} us</text>')
    for e in range(math.ceil(x0), math.floor(x1) + 1):
        x = px(10 ** e)
        out.append(f'<line x1="{x}" x2="{x}" y1="{top}" y2="{top + h}" stroke="#eee"/>'
                   f'<text x="{x}" y="{top + h + 16}" text-anchor="middle">10^{e} rows</text>')
    for i, (key, prec, label, color, dash) in enumerate(series):
        pts = sorted((int(r["rows"]), float(r[key]), r["system"]) for r in rows if r["precision"] == prec)
        pts = [p for p in pts if p[1] > 0]
        if not pts:
            continue
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y, _ in pts)
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.5"'
                   + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
        for x, y, name in pts:
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.5" fill="{color}">'
                       f'<title>{name} {prec}: {y:.2f} us</title></circle>')
        lx, ly = left + 10 + (i % 3) * 200, 34 + (i // 3) * 14
        out.append(f'<line x1="{lx}" x2="{lx + 16}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="2"'
                   + (f' stroke-dasharray="{dash}"' if dash else "") + f'/><text x="{lx + 20}" y="{ly + 4}">{label}</text>')
    out.append("</svg>")
    open(dst, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
