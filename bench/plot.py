#!/usr/bin/env python3
"""SpMV picture: share of the measured copy bandwidth per matrix, la's kernels beside cuSPARSE.

usage: bench/plot.py spmv.csv out.svg [--title TEXT]

Reads the CSV that `la bench spmv --out FILE.csv` or bench/spmv_bench (LA_SPMV_OUT) writes and
draws, for every matrix and precision larger than the L2 cache (over 1M rows), four bars: the
auto-selected la kernel, the fastest la kernel, cuSPARSE CSR ALG1 and the fastest cuSPARSE
peer. Plain SVG, no plotting library needed.
"""
import csv
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    title = sys.argv[sys.argv.index("--title") + 1] if "--title" in sys.argv else "SpMV: share of copy bandwidth"
    groups = {}
    for r in csv.DictReader(open(src)):
        if int(r["rows"]) < 1_000_000 or r["ok"] != "1":
            continue
        g = groups.setdefault((r["matrix"], r["precision"]), {})
        share, kernel = float(r["copy_share"]), r["kernel"]
        vendor = r["vendor"] == "1"
        if r["auto"] == "1":
            g["auto"] = (share, kernel)
        if not vendor and share > g.get("la", (0, ""))[0]:
            g["la"] = (share, kernel)
        if kernel == "cusparse_csr_alg1":
            g["alg1"] = (share, kernel)
        if vendor and share > g.get("cus", (0, ""))[0]:
            g["cus"] = (share, kernel)
    series = [("auto", "la auto", "#1f77b4"), ("la", "la fastest", "#6baed6"),
              ("alg1", "cuSPARSE CSR ALG1", "#d62728"), ("cus", "cuSPARSE fastest", "#ff9896")]
    bar, gap, left, top, height = 14, 22, 70, 50, 300
    width = left + len(groups) * (4 * bar + gap) + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + height + 170}" '
           'font-family="sans-serif" font-size="11">',
           f'<text x="{left}" y="20" font-size="14">{title}</text>']
    for i, (key, label, color) in enumerate(series):
        out.append(f'<rect x="{left + i * 150}" y="30" width="10" height="10" fill="{color}"/>'
                   f'<text x="{left + i * 150 + 14}" y="39">{label}</text>')
    for t in range(0, 11, 2):
        y = top + height - t / 10 * height
        out.append(f'<line x1="{left - 4}" x2="{width - 10}" y1="{y}" y2="{y}" stroke="#ddd"/>'
                   f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{t * 10}%</text>')
    for gi, ((matrix, prec), g) in enumerate(groups.items()):
        x0 = left + gi * (4 * bar + gap) + gap / 2
        for si, (key, _, color) in enumerate(series):
            share = g.get(key, (0, ""))[0]
            h = min(share, 1.1) / 1.0 * height
            out.append(f'<rect x="{x0 + si * bar}" y="{top + height - h}" width="{bar - 2}" height="{h}" '
                       f'fill="{color}"><title>{matrix} {prec}: {g.get(key, (0, "-"))[1]} {share:.0%}</title></rect>')
        cx = x0 + 2 * bar
        out.append(f'<text transform="translate({cx},{top + height + 10}) rotate(60)">{matrix} {prec}</text>')
    out.append("</svg>")
    open(dst, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
