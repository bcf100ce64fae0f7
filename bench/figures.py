#!/usr/bin/env python3
"""The figures quoted in bench/RESULTS.md and docs/, computed from the CSVs they come from.

Each claim names a document, a phrase with {} where the figure goes, the CSV and how the figure
is computed from it. `figures.py --check` (a ctest) fails, printing the phrase it expected,
where a document's figure differs from its CSV; `figures.py` alone prints every claim's phrase
with the CSV's figure, to paste. Only the standard library: CI runs it without numpy.
"""
import csv
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RES = os.path.join(ROOT, "bench", "results")


def rows(name):
    with open(os.path.join(RES, name), newline="") as f:
        return list(csv.DictReader(f))


def one(name, **match):
    found = [r for r in rows(name) if all(r.get(k) == v for k, v in match.items())]
    if len(found) != 1:
        raise SystemExit("figures.py: %s has %d rows matching %s" % (name, len(found), match))
    return found[0]


def f(v):
    return float(v)


def g2(v):
    """Two significant digits, as '4.8e-15'."""
    return "%.2g" % v


def g3(v):
    return "%.3g" % v


def x2(v):
    return "%.2fx" % v


def direct_ratio(system):
    r = one("direct-h200.csv", system=system)
    return f(r["spsolve"]) / f(r["la_direct"])


def fidapex6_condition():
    msg = one("direct-h200.csv", system="fidapex6.mtx")["la_message"]
    return float(re.search(r"condition estimate ([0-9.e+-]+)", msg).group(1))


def worst_relres_but(skip):
    return max(f(r["la_relres"]) for r in rows("direct-h200.csv")
               if r["la_relres"] not in ("", "nan") and r["system"] != skip and r["la_relres"] == r["la_relres"]
               and r["la_relres"] != "nan")


def gesv(n, impl, kind="getrf", name="gesv-16bit-h200.csv"):
    return f(one(name, n=str(n), impl=impl, kind=kind)["ms"])


def gesv_misses(name):
    return sum(1 for r in rows(name) if r["ok"] == "0")


def host_ratio(csvname, system, peer):
    """A peer's whole time over la's, from a sparse_direct_bench CSV."""
    rs = [r for r in rows(csvname) if r["system"] == system]
    t = {r["solver"]: f(r["analyze_s"]) + f(r["factor_s"]) + f(r["solve_s"]) for r in rs}
    return t[peer] / t["la host"]


# (document, phrase with {} for the figure, the figure computed from the CSV, its format)
CLAIMS = [
    ("docs/solvers.md", "on the GPU {} scipy's spsolve on a 1M-row 2D Poisson", lambda: direct_ratio("poisson2d:1000"), x2),
    ("docs/solvers.md", "and {} on convection-diffusion", lambda: direct_ratio("convdiff2d:512"), x2),
    ("docs/solvers.md", "{} on bayer10", lambda: direct_ratio("bayer10.mtx"), x2),
    ("docs/solvers.md", "and {} on arrow", lambda: direct_ratio("arrow.mtx"), x2),
    ("docs/solvers.md", "fidapex6, condition {})", fidapex6_condition, g3),
    ("docs/solvers.md", "to a relative residual of {} or better but fidapex6's", lambda: worst_relres_but("fidapex6.mtx"), g2),
    ("docs/solvers.md", "(fidapex6 {})", lambda: f(one("direct-h200.csv", system="fidapex6.mtx")["la_relres"]), g3),
    ("bench/RESULTS.md", "to relres <= {}, fidapex6", lambda: worst_relres_but("fidapex6.mtx"), g2),
    ("bench/RESULTS.md", "fidapex6 {} (through the dense LU", lambda: f(one("direct-h200.csv", system="fidapex6.mtx")["la_relres"]), g3),
    ("bench/RESULTS.md", "condition estimate {}); the same on this host", fidapex6_condition, g3),
    ("bench/RESULTS.md", "fidapex6, condition estimate {}) and on the host", fidapex6_condition, g3),
    ("bench/RESULTS.md", "to relres <= {} but fidapex6's", lambda: worst_relres_but("fidapex6.mtx"), g2),
    ("bench/RESULTS.md", "at 16384 against {} ms fp64", lambda: gesv(16384, "la:fp64"), lambda v: "%.1f" % v),
    ("bench/RESULTS.md", "and {} ms 3xTF32", lambda: gesv(16384, "la:tf32x3", "gesv-mixed"), lambda v: "%.1f" % v),
    ("bench/RESULTS.md", "Every row but {} validated", lambda: gesv_misses("gesv-h200-final.csv"), str),
    ("bench/RESULTS.md", "2D Poisson 500^2: la host {} CHOLMOD's time", lambda: 1 / host_ratio("sparse-direct-host-2core.csv", "poisson2d:500", "CHOLMOD supernodal"), x2),
]


def main():
    check = "--check" in sys.argv
    bad = 0
    for doc, phrase, value, fmt in CLAIMS:
        text = open(os.path.join(ROOT, doc)).read()
        want = phrase.format(fmt(value()))
        ok = want in text
        if check and not ok:
            bad += 1
            print("%s: expected the CSV's figure: '%s'" % (doc, want))
        elif not check:
            print("%-18s %s%s" % (doc, want, "" if ok else "   <- differs or missing"))
    if check:
        print("figures.py: %d of %d figures match their CSVs" % (len(CLAIMS) - bad, len(CLAIMS)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
