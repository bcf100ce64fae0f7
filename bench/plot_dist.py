#!/usr/bin/env python3
"""Strong scaling picture of CG on several GPUs.

usage: bench/plot_dist.py dist.csv out.svg [--one-gpu SYSTEM=US ...] [--title TEXT]

Reads the CSV that bench/dist_bench --out FILE.csv writes and draws, per system, one bar per
GPU count: time per iteration relative to the distributed solver on one GPU (so perfect
scaling halves the bar at each doubling), a tick at the bytes floor, and the ideal 1/N.
la's one-GPU solver (cg_device) is a dashed line: its time from the CSV when dist_bench measured
it, or from --one-gpu SYSTEM=US when it comes from another run (capped at 1.15 of the plot's
scale when slower than the distributed solver on one GPU). Plain SVG, no plotting library needed.
"""
import csv
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    title = sys.argv[sys.argv.index("--title") + 1] if "--title" in sys.argv else "CG on several GPUs: time per iteration"
    one = {}
    for i, a in enumerate(sys.argv):
        if a == "--one-gpu":
            k, v = sys.argv[i + 1].split("=")
            one[k] = float(v)
    rows = [r for r in csv.DictReader(open(src)) if r["ok"] == "1" and "to 1e-8" not in r["system"]]
    systems = []
    for r in rows:
        if r["system"] not in systems:
            systems.append(r["system"])
    W, H, left, top, group_w, bar_w, plot_h = 760, 360, 70, 50, 300, 60, 240
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="15">{title}</text>']
    y_of = lambda f: top + plot_h * (1 - f)  # f: share of the one-GPU distributed time
    for t in (0, 0.25, 0.5, 0.75, 1):
        out.append(f'<line x1="{left}" x2="{W - 20}" y1="{y_of(t)}" y2="{y_of(t)}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y_of(t) + 4}" text-anchor="end">{t:.2f}</text>')
    out.append(f'<text x="18" y="{top + plot_h / 2}" transform="rotate(-90 18 {top + plot_h / 2})" '
               'text-anchor="middle">time / (distributed, 1 GPU)</text>')
    for s_i, s in enumerate(systems):
        rs = [r for r in rows if r["system"] == s]
        base = next((float(r["us_per_iteration"]) for r in rs if r["gpus"] == "1"), None)
        if base is None:
            continue
        x0 = left + 30 + s_i * group_w
        for b_i, r in enumerate(rs):
            g, us, floor = int(r["gpus"]), float(r["us_per_iteration"]), float(r["floor_us"])
            x = x0 + b_i * (bar_w + 20)
            f = us / base
            out.append(f'<rect x="{x}" y="{y_of(f)}" width="{bar_w}" height="{plot_h * f}" fill="#1f77b4"/>')
            out.append(f'<line x1="{x - 4}" x2="{x + bar_w + 4}" y1="{y_of(floor / base)}" y2="{y_of(floor / base)}" '
                       'stroke="#d62728" stroke-width="2"/>')
            out.append(f'<line x1="{x}" x2="{x + bar_w}" y1="{y_of(1 / g)}" y2="{y_of(1 / g)}" stroke="#2ca02c" '
                       'stroke-dasharray="4 3"/>')
            out.append(f'<text x="{x + bar_w / 2}" y="{y_of(f) - 5}" text-anchor="middle">{us:.0f} us</text>')
            out.append(f'<text x="{x + bar_w / 2}" y="{top + plot_h + 16}" text-anchor="middle">{g} GPU{"s" if g > 1 else ""}'
                       f' ({float(r["speedup_vs_1gpu_dist"]):.2f}x)</text>')
        measured = next((float(r["one_gpu_us"]) for r in rs if float(r.get("one_gpu_us") or 0) > 0), None)
        if s in one or measured:
            y = y_of(min(1.15, one.get(s, measured) / base))  # kept inside the plot's top
            out.append(f'<line x1="{x0 - 6}" x2="{x0 + len(rs) * (bar_w + 20)}" y1="{y}" y2="{y}" stroke="#ff7f0e" '
                       'stroke-dasharray="8 4" stroke-width="2"/>')
            out.append(f'<text x="{x0 + len(rs) * (bar_w + 20) + 4}" y="{y + 4}" fill="#ff7f0e">'
                       f'{one.get(s, measured):.0f} us</text>')
        out.append(f'<text x="{x0 + len(rs) * (bar_w + 20) / 2 - 10}" y="{top + plot_h + 34}" text-anchor="middle" '
                   f'font-weight="bold">{s}</text>')
    ly = H - 12
    for i, (color, name, dash) in enumerate([("#1f77b4", "la distributed", ""), ("#d62728", "bytes floor", ""),
                                              ("#2ca02c", "ideal 1/N", "4 3"), ("#ff7f0e", "la one-GPU solver", "8 4")]):
        x = left + i * 160
        out.append(f'<line x1="{x}" x2="{x + 24}" y1="{ly - 4}" y2="{ly - 4}" stroke="{color}" stroke-width="3" '
                   f'stroke-dasharray="{dash}"/>')
        out.append(f'<text x="{x + 30}" y="{ly}">{name}</text>')
    out.append("</svg>")
    open(dst, "w").write("\n".join(out))


if __name__ == "__main__":
    main()
