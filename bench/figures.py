#!/usr/bin/env python3
"""The figures and tables quoted in bench/RESULTS.md and docs/, computed from the CSVs they come from.

Each claim names a document, a phrase with {} where the figure goes, the CSV and how the figure
is computed from it. `figures.py --check` (a ctest) fails, printing the phrase it expected,
where a document's figure differs from its CSV; `figures.py` alone prints every claim's phrase
with the CSV's figure, to paste; `figures.py --write` rewrites the tables (blocks between
"<!-- figures.py: NAME -->" and "<!-- /figures.py -->") from their CSVs. Only the standard library: CI runs it without numpy.
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


def i0(v):
    return "%.0f" % v


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


def best_peer_ratio(system):
    """The faster of CHOLMOD's and UMFPACK's whole time over la's default's."""
    rs = [r for r in rows("sparse-direct-host-2core.csv") if r["system"] == system and float(r["relres"]) <= 1e-10]
    t = {r["solver"]: f(r["analyze_s"]) + f(r["factor_s"]) + f(r["solve_s"]) for r in rs}
    return min(t[k] for k in ("CHOLMOD supernodal", "UMFPACK") if k in t) / t["la host default"]


def columns_ratio(system, k):
    rs = rows("columns-host-2core.csv")
    pick = lambda kk, s: f([r for r in rs if r["system"] == system and r["k"] == str(kk) and r["solver"] == s][0]["seconds"])
    return pick(k, "la") / pick(1, "la")


def cli_median(k):
    import statistics
    return statistics.median(f(r["seconds"]) for r in rows("columns-cli-host-2core.csv") if r["k"] == str(k))


def cli_ratio():
    return cli_median(8) / cli_median(1)


def columns_scipy(system, k):
    rs = rows("columns-host-2core.csv")
    pick = lambda s: f([r for r in rs if r["system"] == system and r["k"] == str(k) and r["solver"] == s][0]["seconds"])
    return pick("scipy") / pick("la")


def gesv_factor(n, impl, kind="getrf", name="gesv-16bit-h200.csv"):
    """The factorization alone: a row's ms less its solve_ms."""
    r = one(name, n=str(n), impl=impl, kind=kind)
    return f(r["ms"]) - f(r["solve_ms"])


def gesv_misses(name):
    return sum(1 for r in rows(name) if r["ok"] == "0")


def host_ratio(csvname, system, peer):
    """A peer's whole time over la's default's, from a sparse_direct_bench CSV."""
    rs = [r for r in rows(csvname) if r["system"] == system]
    t = {r["solver"]: f(r["analyze_s"]) + f(r["factor_s"]) + f(r["solve_s"]) for r in rs}
    return t[peer] / t["la host default"]


# (document, phrase with {} for the figure, the figure computed from the CSV, its format)
def first_run_ms(n, impl="la:fp64", kind="getrf"):
    return f(one("gesv-h100-2026-12-07-first.csv", kind=kind, n=str(n), impl=impl)["ms"])


def gesv_ratios(kind, lo, hi, name="gesv-h100-2026-12-07.csv"):
    rs = rows(name)
    t = {(r["kind"], r["n"], r["impl"]): r for r in rs}
    out = []
    for n in sorted({int(r["n"]) for r in rs if r["kind"] == kind}):
        if lo <= n <= hi:
            out.append(f(t[(kind, str(n), "cusolver")]["ms"]) / f(t[(kind, str(n), "la:fp64")]["ms"]))
    return out


def batch_ratios(kind, impl, peer):
    rs = rows(GESV_BATCH_CSV)
    t = {(r["kind"], r["n"], r["impl"]): r for r in rs}
    return [f(t[(kind, n, peer)]["ms"]) / f(t[(kind, n, impl)]["ms"]) for n in sorted({r["n"] for r in rs}, key=int)]


def rng(v):
    return "%.2f-%.2fx" % (min(v), max(v))


def py_ratios(peer):
    g = {}
    for r in rows(BATCHED_GPU_CSV):
        g.setdefault((r["count"], r["n"]), {})[r["solver"]] = f(r["ms"])
    return [v[peer] / v["la"] for (c, n), v in g.items() if c != "1" and peer in v]


def mixed_ratio(n, impl):
    rs = [r for r in rows("gesv-mixed-h100-2026-12-07.csv") if r["kind"] == "gesv-mixed" and r["n"] == str(n)]
    base = [f(r["ms"]) for r in rs if r["impl"] == "cusolver:fp64"][0]
    return base / [f(r["ms"]) for r in rs if r["impl"] == impl][0]


def streams_ratio(system):
    t = {r["solver"]: f(r["factor_s"]) for r in rows("sparse-direct-streams-h100-2026-12-07.csv") if r["system"] == system}
    return t["la GPU multifrontal 1 stream"] / t["la GPU multifrontal"]


def dgemm_ratio(n, impl):
    t = {r["impl"]: f(r["ms"]) for r in rows(DGEMM_CSV) if r["kind"] == "dgemm" and r["n"] == str(n)}
    return t["cublas"] / t[impl]


def fronts_factor(csvname, system):
    return f(one(csvname, system=system, solver="la GPU multifrontal")["factor_s"])


def fronts_gain(system):
    return fronts_factor("sparse-direct-streams-h100-2026-12-07.csv", system) / fronts_factor(
        "sparse-direct-fronts-h100-2026-12-07.csv", system)


def pool_ms(impl):
    return f(one("gesv-pool-h100-2026-12-07.csv", kind="getrf", n="32", impl=impl)["ms"])


def dgemm_tma_ratios():
    return [dgemm_ratio(n, i) for n in (2048, 4096, 8192) for i in ("la:dmma_tma", "la:dmma_tma_x2", "la:dmma_tma_x2_k32")]


CLAIMS = [
    ("bench/RESULTS.md", "partitioned hierarchy's iterations in {} rows", lambda: amg_partition_same_iterations(), str),
    ("bench/RESULTS.md", "a cycle sends {} values at level 0", lambda: amg_partition("poisson3d:128", 2, 0, "cycle_values"), lambda v: "{:,}".format(int(v))),
    ("bench/RESULTS.md", "values at level 0 in {} messages", lambda: amg_partition("poisson3d:128", 2, 0, "cycle_messages"), i0),
    ("bench/RESULTS.md", "from {} with one block to", lambda: amg_partition("poisson3d:64", 1, 0, "operator_complexity"), lambda v: "%.2f" % v),
    ("bench/RESULTS.md", "with one block to {} with 8", lambda: amg_partition("poisson3d:64", 8, 0, "operator_complexity"), lambda v: "%.2f" % v),
    ("bench/RESULTS.md", "one grid plane ({} values)", lambda: 128 * 128, lambda v: "{:,}".format(v)),
    ("bench/RESULTS.md", "latency is ({} messages a cycle", lambda: amg_partition("poisson3d:128", 2, 0, "cycle_messages") + amg_partition("poisson3d:128", 2, 1, "cycle_messages"), i0),
    ("bench/RESULTS.md", "one-GPU iteration of {} ms at this size", lambda: amg_value("poisson3d:128", "la amg", "us_per_iteration") / 1e3, lambda v: "%.1f" % v),
    ("bench/RESULTS.md", "the cycle halves to about {} ms", lambda: amg_value("poisson3d:256", "la amg", "us_per_iteration") / 2e3, lambda v: "%.1f" % v),
    ("bench/RESULTS.md", "the setup ({} ms of the", lambda: amg_value("poisson3d:256", "la amg", "setup_ms"), i0),
    ("bench/RESULTS.md", "ms of the {}) is 1.2x", lambda: amg_value("poisson3d:256", "la amg", "time_to_solution_ms"), i0),
    ("bench/RESULTS.md", "rigid-body modes {} iterations, scalar", lambda: amg_value("elasticity3d:70", "la amg", "iterations"), i0),
    ("bench/RESULTS.md", "scalar AMG {} iterations: met", lambda: amg_value("elasticity3d:70", "la amg+scalar", "iterations"), i0),
    ("bench/RESULTS.md", "poisson3d:100 (1M unknowns) took {} iterations", lambda: amg_value("poisson3d:100", "la amg", "iterations"), i0),
    ("bench/RESULTS.md", "elasticity {} that: met", lambda: amg_value("elasticity3d:70", "la amg", "iterations") / amg_value("poisson3d:100", "la amg", "iterations"), x2),
    ("bench/RESULTS.md", "Against Jacobi CG: elasticity3d:70 {},", lambda: amg_vs("elasticity3d:70", "la amg"), x2),
    ("bench/RESULTS.md", "elasticity3d:96 {}: **missed**", lambda: amg_vs("elasticity3d:96", "la amg"), x2),
    ("bench/RESULTS.md", "the setup takes {} ms of the", lambda: amg_value("elasticity3d:70", "la amg", "setup_ms"), i0),
    ("bench/RESULTS.md", "ms of the {} ms to solution;", lambda: amg_value("elasticity3d:70", "la amg", "time_to_solution_ms"), i0),
    ("bench/RESULTS.md", "the Galerkin products take {} ms of the setup", lambda: amg_detail("elasticity3d:70", "la amg", r"Galerkin ([0-9.]+) ms"), i0),
    ("bench/RESULTS.md", "The cycles alone ({} ms)", lambda: amg_cycles_ms("elasticity3d:70"), i0),
    ("bench/RESULTS.md", "are still only {} faster", lambda: amg_value("elasticity3d:70", "la jacobi", "time_to_solution_ms") / amg_cycles_ms("elasticity3d:70"), x2),
    ("bench/RESULTS.md", "elasticity3d:32 took {} iterations", lambda: amg_value("elasticity3d:32", "la amg", "iterations"), i0),
    ("bench/RESULTS.md", "elasticity3d:96 took {} (", lambda: amg_value("elasticity3d:96", "la amg", "iterations"), i0),
    ("bench/RESULTS.md", "took 17 ({}): **missed** by one", lambda: amg_growth("elasticity3d:32", "elasticity3d:96"), str),
    ("bench/RESULTS.md", "poisson3d:32 took {} iterations, poisson3d:256", lambda: amg_value("poisson3d:32", "la amg", "iterations"), i0),
    ("bench/RESULTS.md", "poisson3d:256 took {} (", lambda: amg_value("poisson3d:256", "la amg", "iterations"), i0),
    ("bench/RESULTS.md", "poisson3d:256 took 17 ({}). The W-cycle", lambda: amg_growth("poisson3d:32", "poisson3d:256"), str),
    ("bench/RESULTS.md", "The W-cycle took {} at 32^3", lambda: amg_value("poisson3d:32", "la amg+w", "iterations"), i0),
    ("bench/RESULTS.md", "and {} at 256^3 (", lambda: amg_value("poisson3d:256", "la amg+w", "iterations"), i0),
    ("bench/RESULTS.md", "at 256^3 ({}). **Missed**", lambda: amg_growth("poisson3d:32", "poisson3d:256", "la amg+w"), str),
    ("bench/RESULTS.md", "V-cycle's: {} at 256^3", lambda: amg_vs("poisson3d:256", "la amg+w", "la amg"), x2),
    ("bench/RESULTS.md", "at 256^3, {} at 100^3", lambda: amg_vs("poisson3d:100", "la amg+w", "la amg"), x2),
    ("bench/RESULTS.md", "at 100^3, {} at 32^3", lambda: amg_vs("poisson3d:32", "la amg+w", "la amg"), x2),
    ("bench/RESULTS.md", "the V-cycle took {} ms to solution", lambda: amg_value("poisson3d:256", "la amg", "time_to_solution_ms"), i0),
    ("bench/RESULTS.md", "with {} ms of setup", lambda: amg_value("poisson3d:256", "la amg", "setup_ms"), i0),
    ("bench/RESULTS.md", "and {} ms of Galerkin products", lambda: amg_detail("poisson3d:256", "la amg", r"Galerkin ([0-9.]+) ms"), i0),
    ("bench/RESULTS.md", "Re-setup took {} of a first setup", lambda: amg_resetup("poisson3d:128"), str),
    ("bench/RESULTS.md", "poisson3d:128, {} on elasticity3d:70", lambda: amg_resetup("elasticity3d:70"), str),
    ("bench/RESULTS.md", "and {} on elasticity3d:96.", lambda: amg_resetup("elasticity3d:96"), str),
    ("bench/RESULTS.md", "cuSPARSE's best: geometric mean {} over", lambda: complex_spmv_geomean(), x2),
    ("bench/RESULTS.md", "the rule's choice (`la:auto`): geometric mean {} over", lambda: complex_spmv_geomean("la:auto"), x2),
    ("bench/RESULTS.md", "la's LU runs at {} zgetrf's speed", lambda: complex_lu_ratios("la:dense_lu_device", "cusolver:zgetrf"), rng),
    ("bench/RESULTS.md", "la's Cholesky at {} zpotrf's", lambda: complex_lu_ratios("la:dense_cholesky_device", "cusolver:zpotrf"), rng),
    ("bench/RESULTS.md", "la's COCG with Jacobi is {}\nCuPy's gmres", lambda: cupy_complex_ratios("la:cocg+jacobi"), rng),
    ("bench/RESULTS.md", "la's GMRES(30) {}.", lambda: cupy_complex_ratios("la:gmres+jacobi"), rng),
    ("bench/RESULTS.md", "spsolve (SuperLU) on 2D 300^2: {} (la", lambda: complex_direct_ratio("2d:300"), x2),
    ("bench/RESULTS.md", "4,096^3 and 8,192^3: {} and", lambda: dgemm_ratio(4096, "la:dmma_m16n8k8"), x2),
    ("bench/RESULTS.md", "and {} (`dmma_m16n8k8`, H100)", lambda: dgemm_ratio(8192, "la:dmma_m16n8k8"), x2),
    ("bench/RESULTS.md", "the TMA-fed forms {} (the table above", dgemm_tma_ratios, rng),
    ("bench/RESULTS.md", "memory), a later call measured {} s (2D)", lambda: fronts_factor("sparse-direct-fronts-h100-2026-12-07.csv", "poisson2d:1000"), lambda v: "%.3f" % v),
    ("bench/RESULTS.md", "and {} s (3D) with the side streams", lambda: fronts_factor("sparse-direct-fronts-h100-2026-12-07.csv", "poisson3d:64"), lambda v: "%.3f" % v),
    ("bench/RESULTS.md", "against\n  {} s and", lambda: fronts_factor("sparse-direct-streams-h100-2026-12-07.csv", "poisson2d:1000"), lambda v: "%.3f" % v),
    ("bench/RESULTS.md", "s and {} s in the first run", lambda: fronts_factor("sparse-direct-streams-h100-2026-12-07.csv", "poisson3d:64"), lambda v: "%.3f" % v),
    ("bench/RESULTS.md", "in the first run: {} and", lambda: fronts_gain("poisson2d:1000"), x2),
    ("bench/RESULTS.md", "and {} more, across runs", lambda: fronts_gain("poisson3d:64"), x2),
    ("bench/RESULTS.md", "getrf at\n  n = 32 took {} ms, as without", lambda: pool_ms("la:fp64-pool-kept"), lambda v: "%.3f" % v),
    ("bench/RESULTS.md", "from n = 2,048: getrf {},", lambda: gesv_ratios("getrf", 2048, 10 ** 6), rng),
    ("bench/RESULTS.md", "potrf {}.\n", lambda: gesv_ratios("potrf", 2048, 10 ** 6), rng),
    ("bench/RESULTS.md", "getrf {} at n = 32", lambda: gesv_ratios("getrf", 32, 32)[0], x2),
    ("bench/RESULTS.md", "and {} at 64 (one kernel", lambda: gesv_ratios("getrf", 64, 64)[0], x2),
    ("bench/RESULTS.md", "  {} from 128; potrf", lambda: gesv_ratios("getrf", 128, 1024), rng),
    ("bench/RESULTS.md", "from 128; potrf {}.", lambda: gesv_ratios("potrf", 32, 1024), rng),
    ("bench/RESULTS.md", "LU {} of cuBLAS", lambda: batch_ratios("getrf-batch", "la:lu", "cublas"), rng),
    ("bench/RESULTS.md", "Cholesky {} of\n  cuSOLVER", lambda: batch_ratios("potrf-batch", "la:cholesky", "cusolver"), rng),
    ("bench/RESULTS.md", "(before the warp kernel) {} of CuPy", lambda: py_ratios("cupy"), rng),
    ("bench/RESULTS.md", "of CuPy, {} of torch", lambda: py_ratios("torch"), rng),
    ("bench/RESULTS.md", "at n >= 16,384: {} (3xTF32)", lambda: mixed_ratio(16384, "la:tf32x3"), x2),
    ("bench/RESULTS.md", "the side streams gave {} (2D)", lambda: streams_ratio("poisson2d:1000"), x2),
    ("bench/RESULTS.md", "and {} (3D) in the", lambda: streams_ratio("poisson3d:64"), x2),
    ("bench/RESULTS.md", "the first run: {} ms at 1024", lambda: first_run_ms(1024), lambda v: "%.2f" % v),
    ("bench/RESULTS.md", "and {} ms at 2048)", lambda: first_run_ms(2048), lambda v: "%.2f" % v),
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
    ("bench/RESULTS.md", "at 16384 against {} ms fp64", lambda: gesv_factor(16384, "la:fp64"), lambda v: "%.0f" % v),
    ("bench/RESULTS.md", "and {} ms 3xTF32", lambda: gesv_factor(16384, "la:tf32x3", "gesv-mixed"), lambda v: "%.0f" % v),
    ("bench/RESULTS.md", "Factorization alone: {} ms for either", lambda: gesv_factor(16384, "la:fp16", "gesv-mixed"), lambda v: "%.0f" % v),
    ("bench/RESULTS.md", "Every row but {} validated", lambda: gesv_misses("gesv-h200.csv"), str),
    ("bench/RESULTS.md", "2D Poisson 500^2 at {} and", lambda: 1 / best_peer_ratio("poisson2d:500"), x2),
    ("bench/RESULTS.md", "3D Poisson 40^3 at {} the faster peer", lambda: 1 / best_peer_ratio("poisson3d:40"), x2),
    ("bench/RESULTS.md", "8 columns at most 1.5x one column (2D Poisson 300^2, host) | {} from the CLI", cli_ratio, x2),
    ("bench/RESULTS.md", "from the CLI, {} through Python", lambda: columns_ratio("poisson2d:300", 8), x2),
    ("bench/RESULTS.md", "8 columns, median of 5 process runs): {} against", lambda: cli_median(8), lambda v: "%.2f s" % v),
    ("bench/RESULTS.md", "against {} for one column", lambda: cli_median(1), lambda v: "%.2f s" % v),
    ("bench/RESULTS.md", "| {} against scipy on OpenBLAS", lambda: columns_scipy("poisson2d:300", 8), x2),
]


def host_direct_table():
    """la's direct method on the host (the default: SuiteSparse where built, la's fronts on a
    dense row) against la's own fronts, CHOLMOD and UMFPACK: whole-call seconds."""
    t, note = {}, {}
    order = []
    for r in rows("sparse-direct-host-2core.csv"):
        if r["system"] not in t:
            t[r["system"]] = {}
            order.append(r["system"])
        ok = float(r["relres"]) <= 1e-10
        t[r["system"]][r["solver"]] = (f(r["analyze_s"]) + f(r["factor_s"]) + f(r["solve_s"]), ok, r["rows"])
        if r["solver"] == "la host default":
            m = r["note"]
            note[r["system"]] = "CHOLMOD" if "CHOLMOD" in m else "UMFPACK" if "UMFPACK" in m else "la's fronts" if "multifrontal" in m else "dense LU" if "dense" in m else "?"
    out = ["| system | rows | la default (s) | factored by | la's own fronts (s) | CHOLMOD (s) | UMFPACK (s) | la default / faster peer |",
           "|---|---|---|---|---|---|---|---|"]
    for sname in order:
        d = t[sname]
        cell = lambda k: ("%.4f" % d[k][0] + ("" if d[k][1] else " MISS")) if k in d else "-"
        peers = [d[k][0] for k in ("CHOLMOD supernodal", "UMFPACK") if k in d and d[k][1]]
        ratio = "%.2fx" % (d["la host default"][0] / min(peers)) if peers and "la host default" in d else "no peer solved it"
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (sname.replace(".mtx", ""), d["la host"][2], cell("la host default"),
                   note.get(sname, ""), cell("la host"), cell("CHOLMOD supernodal"), cell("UMFPACK"), ratio))
    return "\n".join(out)


def columns_table():
    out = ["| system | k | la.Solver direct (s) | scipy splu + solve (s) | scipy / la | la k columns / la one |", "|---|---|---|---|---|---|"]
    rs = rows("columns-host-2core.csv")
    one = {r["system"]: f(r["seconds"]) for r in rs if r["solver"] == "la" and r["k"] == "1"}
    for r in rs:
        if r["solver"] != "la":
            continue
        sp = one_of = [q for q in rs if q["system"] == r["system"] and q["k"] == r["k"] and q["solver"] == "scipy"][0]
        out.append("| %s | %s | %.3f | %.3f | %.2fx | %.2fx |" % (r["system"], r["k"], f(r["seconds"]), f(sp["seconds"]),
                   f(sp["seconds"]) / f(r["seconds"]), f(r["seconds"]) / one[r["system"]]))
    return "\n".join(out)


def host_defaults_table():
    """la.solve with its defaults (auto) and method='direct' on the host against scipy's spsolve."""
    out = ["| system | rows | la auto (s) | auto's method | la direct (s) | spsolve (s) | spsolve / la direct | relres (la direct) |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows("direct-host-2core-2026-12-07.csv"):
        sp_ok = r.get("spsolve_ok", "True") == "True" and r["spsolve"] not in ("", "nan")
        ratio = "%.2fx" % (f(r["spsolve"]) / f(r["la_direct"])) if sp_ok and r["la_ok"] == "True" and r["la_relres"] != "nan" else \
            ("spsolve missed" if r["spsolve"] not in ("", "nan") else "-")
        la_rel = "singular (said)" if r.get("la_note") else "%.1e" % f(r["la_relres"])
        out.append("| %s | %s | %.4f | %s | %.4f | %s | %s | %s |" % (
            r["system"].replace(".mtx", ""), r["rows"], f(r["la_auto"]), r["auto_method"], f(r["la_direct"]),
            "%.4f" % f(r["spsolve"]) if r["spsolve"] not in ("", "nan") else "-", ratio, la_rel))
    return "\n".join(out)


GEMM_CSV = "gemm-h100-2026-12-07.csv"  # the latest gemm_bench run (bench/gemm_csv.py)
TEACHING = {"naive", "smem_tiled", "joint_rs"}  # the ladder's first rungs, not la's best


def gemm_table():
    """Per shape and precision class: la's fastest validated variant against the cuBLAS call of
    that class, measured in the same gemm_bench run."""
    rs = rows(GEMM_CSV)
    out = ["| shape | precision | la's fastest | la (TFLOP/s) | cuBLAS | cuBLAS (TFLOP/s) | la / cuBLAS |",
           "|---|---|---|---|---|---|---|"]
    by = {}
    for r in rs:
        by.setdefault(r["shape"], []).append(r)
    for shape, group in by.items():
        t = {r["variant"]: r for r in group if r["ok"] == "1"}
        for prec in ("fp32", "tf32x3", "tf32", "fp16", "bf16"):
            own = [r for r in group if r["precision"] == prec and r["ok"] == "1" and not r["variant"].startswith("cublas")
                   and r["variant"] not in TEACHING]
            peer = t.get({"fp32": "cublas_fp32", "tf32x3": "cublas_fp32", "tf32": "cublas_tf32", "fp16": "cublas_f16",
                          "bf16": "cublas_bf16"}[prec])
            if not own or not peer:
                continue
            best = max(own, key=lambda r: f(r["tflops"]))
            out.append("| %s | %s | %s | %.1f | %s | %.1f | %.2fx |" % (shape, prec, best["variant"], f(best["tflops"]),
                       peer["variant"], f(peer["tflops"]), f(best["tflops"]) / f(peer["tflops"])))
    misses = [r["shape"] + " " + r["variant"] for r in rs if r["ok"] != "1"]
    out.append("")
    out.append("Not validated (no time): " + (", ".join(misses) if misses else "none") + ".")
    return "\n".join(out)


def batched_table():
    """la.solve on a batch against numpy.linalg.solve on the host, from batched_bench.py's CSV."""
    rs = rows("batched-host-2core.csv")
    out = ["| systems | n | la (ms) | numpy (ms) | numpy / la | worst backward error (la) |", "|---|---|---|---|---|---|"]
    la_rows = {(r["count"], r["n"]): r for r in rs if r["solver"] == "la"}
    for r in rs:
        if r["solver"] != "numpy":
            continue
        l = la_rows[(r["count"], r["n"])]
        out.append("| %s | %s | %.1f | %.1f | %.2fx | %s |" % (r["count"], r["n"], f(l["ms"]), f(r["ms"]),
                   f(r["ms"]) / f(l["ms"]), l["backward_error"]))
    return "\n".join(out)


GESV_CSV = "gesv-h100-2026-12-07.csv"  # la bench gesv --ablate (this session's run)
GESV_BATCH_CSV = "gesv-batch-h100-2026-12-07.csv"  # la bench gesv --batch
BATCHED_GPU_CSV = "batched-gpu-h100-2026-12-07.csv"  # batched_bench.py --device gpu


def gesv_table():
    """la's dense LU and Cholesky against cuSOLVER per n, look-ahead on and off, one run."""
    rs = [r for r in rows(GESV_CSV) if r["kind"] in ("getrf", "potrf")]
    t = {(r["kind"], r["n"], r["impl"]): r for r in rs}
    out = ["| n | la getrf ms | no look-ahead | cuSOLVER getrf | la / cuSOLVER | la potrf ms | no look-ahead | cuSOLVER potrf | la / cuSOLVER |",
           "|---|---|---|---|---|---|---|---|---|"]
    for n in sorted({int(r["n"]) for r in rs}):
        cells = [str(n)]
        for kind in ("getrf", "potrf"):
            la_ = t.get((kind, str(n), "la:fp64"))
            nl = t.get((kind, str(n), "la:fp64-no-lookahead"))
            cu = t.get((kind, str(n), "cusolver"))
            ok = la_ and cu and la_["ok"] == "1" and cu["ok"] == "1"
            cells += ["%.3f" % f(la_["ms"]) if la_ else "-", "%.3f" % f(nl["ms"]) if nl else "-",
                      "%.3f" % f(cu["ms"]) if cu else "-", ("%.2fx" % (f(cu["ms"]) / f(la_["ms"]))) if ok else "not validated"]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def batched_gpu_table():
    """Batches on the GPU from `la bench gesv --batch`: la::batched_dense_solver (factor + solve)
    against cuBLAS getrf/getrsBatched (LU) and cuSOLVER potrf/potrsBatched (Cholesky), one run."""
    rs = rows(GESV_BATCH_CSV)
    t = {(r["kind"], r["n"], r["impl"]): r for r in rs}
    out = ["| systems | n | la LU ms | cuBLAS ms | la / cuBLAS | la Cholesky ms | cuSOLVER ms | la / cuSOLVER |",
           "|---|---|---|---|---|---|---|---|"]
    for n in sorted({int(r["n"]) for r in rs}):
        lu, cb = t.get(("getrf-batch", str(n), "la:lu")), t.get(("getrf-batch", str(n), "cublas"))
        ch, cs = t.get(("potrf-batch", str(n), "la:cholesky")), t.get(("potrf-batch", str(n), "cusolver"))
        count = re.search(r"batch of (\d+)", lu["note"]).group(1)
        ratio = lambda a, p: ("%.2fx" % (f(p["ms"]) / f(a["ms"]))) if a["ok"] == "1" and p["ok"] == "1" else "not validated"
        out.append("| %s | %d | %.3f | %.3f | %s | %.3f | %.3f | %s |" % (count, n, f(lu["ms"]), f(cb["ms"]), ratio(lu, cb),
                                                                      f(ch["ms"]), f(cs["ms"]), ratio(ch, cs)))
    return "\n".join(out)


def python_peers_table():
    """la.solve from Python against cupy.linalg.solve and torch.linalg.solve on the same GPU
    arrays (batched_bench.py --device gpu): batches (count x n) and single systems (1 x n)."""
    rs = rows(BATCHED_GPU_CSV)
    out = ["| shape | la ms | CuPy ms | torch ms | CuPy / la | torch / la |", "|---|---|---|---|---|---|"]
    by = {}
    for r in rs:
        by.setdefault((r["count"], r["n"]), {})[r["solver"]] = r
    for (c, n), g in by.items():
        la_, cp, tc = g["la"], g.get("cupy"), g.get("torch")
        out.append("| %sx%s | %.3f | %s | %s | %s | %s |" % (c, n, f(la_["ms"]), "%.3f" % f(cp["ms"]) if cp else "-",
                   "%.3f" % f(tc["ms"]) if tc else "-", ("%.2fx" % (f(cp["ms"]) / f(la_["ms"]))) if cp else "-",
                   ("%.2fx" % (f(tc["ms"]) / f(la_["ms"]))) if tc else "-"))
    return "\n".join(out)


def mixed_table():
    """la's mixed-precision solves against cuSOLVER's fp64 getrf + getrs and its IRS solver (one run)."""
    rs = [r for r in rows("gesv-mixed-h100-2026-12-07.csv") if r["kind"] == "gesv-mixed"]
    out = ["| n | solver | ms (factor + solve) | backward error | refinement steps | validated | cuSOLVER fp64 / this |",
           "|---|---|---|---|---|---|---|"]
    base = {r["n"]: f(r["ms"]) for r in rs if r["impl"] == "cusolver:fp64"}
    for r in rs:
        ratio = ("%.2fx" % (base[r["n"]] / f(r["ms"]))) if r["n"] in base and r["ok"] == "1" else "-"
        out.append("| %s | %s | %.1f | %s | %s | %s | %s |" % (r["n"], r["impl"], f(r["ms"]), r["backward_error"],
                   r["refinement_steps"], "yes" if r["ok"] == "1" else "no", ratio))
    return "\n".join(out)


def sparse_streams_table():
    """The sparse direct factorization with a level's blocked fronts on four side streams, and on one."""
    rs = rows("sparse-direct-streams-h100-2026-12-07.csv")
    t = {(r["system"], r["solver"]): r for r in rs}
    out = ["| system | rows | factor s, 4 streams | factor s, 1 stream | 1 stream / 4 streams | relres |", "|---|---|---|---|---|---|"]
    for sysname in dict.fromkeys(r["system"] for r in rs):
        a, b = t[(sysname, "la GPU multifrontal")], t[(sysname, "la GPU multifrontal 1 stream")]
        out.append("| %s | %s | %.3f | %.3f | %.2fx | %s |" % (sysname, a["rows"], f(a["factor_s"]), f(b["factor_s"]),
                   f(b["factor_s"]) / f(a["factor_s"]), a["relres"]))
    return "\n".join(out)


DGEMM_CSV = "dgemm-tma-h100-2026-12-07.csv"


def dgemm_table():
    """Every fp64 GEMM rung against cuBLAS DGEMM (`la bench dgemm`), n^3, one run: TFLOP/s and
    the ratio to cuBLAS's time."""
    rs = [r for r in rows(DGEMM_CSV) if r["kind"] == "dgemm"]
    impls = list(dict.fromkeys(r["impl"] for r in rs if r["impl"] != "cublas"))
    t = {(r["n"], r["impl"]): r for r in rs}
    out = ["| n | cuBLAS TFLOP/s | " + " | ".join(i.replace("la:", "") for i in impls) + " |",
           "|---|---|" + "---|" * len(impls)]
    for n in dict.fromkeys(r["n"] for r in rs):
        cb = t[(n, "cublas")]
        cells = [n, "%.1f" % f(cb["tflops"])]
        for i in impls:
            r = t.get((n, i))
            cells.append("-" if not r else ("%.1f (%.2fx)" % (f(r["tflops"]), f(cb["ms"]) / f(r["ms"]))) if r["ok"] == "1"
                         else "not validated")
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


COMPLEX_CSV = "complex-h100-2026-12-07b.csv"
CUPY_COMPLEX_CSV = "cupy-complex-h100-2026-12-07b.csv"


def complex_spmv_rows():
    """Per matrix: la's best complex SpMV kernel, cuSPARSE's best algorithm, and la's bytes-floor share."""
    rs = [r for r in rows(COMPLEX_CSV) if r["bench"] == "spmv"]
    out = []
    for case in dict.fromkeys(r["case"] for r in rs):
        mine = [r for r in rs if r["case"] == case and r["impl"].startswith("la:") and r["ok"] == "1"]
        peer = [r for r in rs if r["case"] == case and r["impl"].startswith("cusparse:") and r["ok"] == "1"]
        best = min(mine, key=lambda r: f(r["ms"]))
        pb = min(peer, key=lambda r: f(r["ms"]))
        out.append((case, best, pb))
    return out


def complex_spmv_geomean(impl=None):
    """cuSPARSE's best time over la's best (impl None) or over `impl`'s, geometric mean over the matrices."""
    import math
    rs = complex_spmv_rows()
    t = {(r["case"], r["impl"]): r for r in rows(COMPLEX_CSV) if r["bench"] == "spmv"}
    mine = [(b if impl is None else t[(case, impl)], p) for case, b, p in rs]
    return math.exp(sum(math.log(f(p["ms"]) / f(m["ms"])) for m, p in mine) / len(mine))


def complex_spmv_table():
    """Complex SpMV (complex<double>): la's kernels against cusparseSpMV, one run."""
    rs = [r for r in rows(COMPLEX_CSV) if r["bench"] == "spmv"]
    t = {(r["case"], r["impl"]): r for r in rs}
    out = ["| matrix | rows | nnz | la CSR default ms | la csr_scalar ms | la SELL ms | la auto ms | cuSPARSE ALG1 ms | cuSPARSE ALG2 ms "
           "| la auto / cuSPARSE best | la best / cuSPARSE best | la auto, bytes floor |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for case, best, pb in complex_spmv_rows():
        csr = [r for r in rs if r["case"] == case and r["impl"].startswith("la:") and r["impl"] != "la:sell"][0]
        scalar, sell, auto = t[(case, "la:csr_scalar")], t[(case, "la:sell")], t[(case, "la:auto")]
        a1, a2 = t[(case, "cusparse:csr_alg1")], t[(case, "cusparse:csr_alg2")]
        out.append("| %s | %s | %s | %.4f (%s) | %.4f | %.4f | %.4f | %.4f | %.4f | %.2fx | %.2fx | %.0f%% |" % (
            case, best["n"], best["nnz"], f(csr["ms"]), csr["impl"].replace("la:", ""), f(scalar["ms"]), f(sell["ms"]),
            f(auto["ms"]), f(a1["ms"]), f(a2["ms"]), f(pb["ms"]) / f(auto["ms"]), f(pb["ms"]) / f(best["ms"]),
            100 * f(auto["floor_share"])))
    return "\n".join(out)


def complex_lu_table():
    """The dense complex LU and Cholesky (la's kernels) against cusolverDnZgetrf and cusolverDnZpotrf, one run."""
    rs = [r for r in rows(COMPLEX_CSV) if r["bench"] in ("lu", "cholesky")]
    t = {(r["case"], r["impl"]): r for r in rs}
    out = ["| n | zgetrf ms | la LU ms | la LU / zgetrf speed | la LU TFLOP/s | zpotrf ms | la Cholesky ms "
           "| la Cholesky / zpotrf speed |", "|---|---|---|---|---|---|---|---|"]
    for case in dict.fromkeys(r["case"] for r in rs):
        v, m = t[(case, "cusolver:zgetrf")], t[(case, "la:dense_lu_device")]
        n = f(m["n"])
        row = "| %d | %.2f | %.2f | %.2fx | %.2f |" % (n, f(v["ms"]), f(m["ms"]), f(v["ms"]) / f(m["ms"]),
                                                       8.0 / 3.0 * n ** 3 / (f(m["ms"]) * 1e-3) / 1e12)
        if (case, "la:dense_cholesky_device") in t:
            pv, pm = t[(case, "cusolver:zpotrf")], t[(case, "la:dense_cholesky_device")]
            row += " %.2f | %.2f | %.2fx |" % (f(pv["ms"]), f(pm["ms"]), f(pv["ms"]) / f(pm["ms"]))
        else:
            row += " - | - | - |"
        out.append(row)
    return "\n".join(out)


def complex_lu_ratios(impl, peer, lo=2048):
    """The vendor's time over la's for `impl`, n >= lo."""
    rs = [r for r in rows(COMPLEX_CSV) if r["impl"] in (impl, peer) and f(r["n"]) >= lo]
    t = {(r["case"], r["impl"]): r for r in rs}
    return [f(t[(c, peer)]["ms"]) / f(t[(c, impl)]["ms"]) for c in dict.fromkeys(r["case"] for r in rs)]


def complex_krylov_table():
    """Complex Krylov on Helmholtz systems: la against CuPy's gmres, one run (ms, best of 2)."""
    rs = [r for r in rows(CUPY_COMPLEX_CSV) if "direct" not in r["impl"] and "spsolve" not in r["impl"]]
    t = {(r["system"], r["impl"]): r for r in rs}
    impls = list(dict.fromkeys(r["impl"] for r in rs))
    out = ["| system | rows | " + " | ".join(impls) + " | la COCG vs CuPy gmres | la GMRES vs CuPy gmres |",
           "|---|---|" + "---|" * (len(impls) + 2)]
    for sysname in dict.fromkeys(r["system"] for r in rs):
        cells = [sysname, t[(sysname, impls[0])]["rows"]]
        for i in impls:
            r = t[(sysname, i)]
            it = " (%s it)" % r["iterations"] if r["iterations"] != "-1" else ""
            cells.append(("%.1f%s" % (f(r["ms"]), it)) if r["ok"] == "1" else "not converged")
        peer = t[(sysname, "cupy:gmres")]
        for mine in ("la:cocg+jacobi", "la:gmres+jacobi"):
            r = t[(sysname, mine)]
            cells.append("%.2fx" % (f(peer["ms"]) / f(r["ms"])) if r["ok"] == "1" and peer["ok"] == "1" else "-")
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def cupy_complex_ratios(mine):
    """CuPy's gmres time over la's `mine`, per system where both converged."""
    rs = rows(CUPY_COMPLEX_CSV)
    t = {(r["system"], r["impl"]): r for r in rs}
    return [f(t[(sy, "cupy:gmres")]["ms"]) / f(t[(sy, mine)]["ms"]) for sy in dict.fromkeys(r["system"] for r in rs)
            if (sy, mine) in t and t[(sy, mine)]["ok"] == "1" and t[(sy, "cupy:gmres")]["ok"] == "1"]


def complex_direct_ratio(system):
    """scipy's spsolve time over la's host complex LU's (above 1: la faster)."""
    rs = {r["impl"]: r for r in rows(CUPY_COMPLEX_CSV) if r["system"] == system}
    return f(rs["scipy:spsolve"]["ms"]) / f(rs["la:direct (host sparse LU)"]["ms"])


AMG_SYSTEMS_CSVS = ["amg-systems-h100-2026-12-07.csv", "amg-elasticity96-h100-2026-12-07.csv",
                    "amg-poisson3d-h100-2026-12-07.csv", "amg-poisson3d-h100-2026-12-07b.csv"]


def amg_systems_rows():
    return [r for name in AMG_SYSTEMS_CSVS for r in rows(name)]


def amg_systems_table():
    """precond_bench rows (issue 70): AMG with the near-null space, scalar AMG and Jacobi CG, one run per CSV."""
    out = ["| system | rows | method | its | setup ms | us/it | time to solution ms | x Jacobi CG (same run) "
           "| re-setup / setup | op. complexity |", "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name in AMG_SYSTEMS_CSVS:
        out += amg_table_rows(rows(name))
    return "\n".join(out)


def amg_table_rows(rs):
    jac = {r["system"]: r for r in rs if r["method"] == "la jacobi"}
    out = []
    for r in rs:
        resetup = re.search(r"re-setup [0-9.]+ ms = ([0-9]+)%", r["detail"])
        opc = re.search(r"operator complexity ([0-9.]+)", r["detail"])
        j = jac.get(r["system"])
        out.append("| %s | %s | %s | %s | %.1f | %.0f | %.1f | %s | %s | %s |" % (
            r["system"], "{:,}".format(int(r["rows"])), r["method"].replace("la ", ""), r["iterations"], f(r["setup_ms"]),
            f(r["us_per_iteration"]), f(r["time_to_solution_ms"]),
            "%.2fx" % (f(j["time_to_solution_ms"]) / f(r["time_to_solution_ms"])) if j else "-",
            resetup.group(1) + "%" if resetup else "-", opc.group(1) if opc else "-"))
    return out


def amg_row(system, method):
    """The one row of `system` and `method` ("la amg") in the AMG CSVs; poisson3d:32 is in two of
    them, the later one (amg-poisson3d-h100-2026-12-07b.csv) taken."""
    found = [r for r in amg_systems_rows() if r["system"] == system and r["method"] == method]
    if not found:
        raise SystemExit("figures.py: no AMG row for %s, %s" % (system, method))
    return found[-1]


def amg_value(system, method, field):
    return f(amg_row(system, method)[field])


def amg_detail(system, method, pattern):
    return float(re.search(pattern, amg_row(system, method)["detail"]).group(1))


def amg_vs(system, mine, peer="la jacobi"):
    return amg_value(system, peer, "time_to_solution_ms") / amg_value(system, mine, "time_to_solution_ms")


def amg_growth(a, b, method="la amg"):
    return "+%.0f%%" % (100 * (amg_value(b, method, "iterations") / amg_value(a, method, "iterations") - 1))


def amg_resetup(system):
    return "%.0f%%" % amg_detail(system, "la amg", r"re-setup [0-9.]+ ms = ([0-9]+)%")


def amg_cycles_ms(system):
    return amg_value(system, "la amg", "iterations") * amg_value(system, "la amg", "us_per_iteration") / 1e3


AMG_PARTITION_CSVS = ["amg-partition-host-2026-12-08.csv", "amg-partition128-host-2026-12-08.csv"]


def amg_partition_rows():
    return [r for name in AMG_PARTITION_CSVS for r in rows(name)]


def amg_partition_table():
    """amg_partition_bench rows (issue 70, several GPUs): per system, team size and split level, what a cycle and
    the setup send, and CG's iterations with the team's cycle."""
    out = ["| system | ranks | level | rows | a cycle sends (values) | messages | setup sends (entries: T, P, coarse rows, R) "
           "| gathered from (rows) | CG its, ranks' cycle | one block |",
           "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    for r in amg_partition_rows():
        if r["ranks"] == "1":
            continue
        setup = [r[k] for k in ("setup_t_rows", "setup_p_rows", "setup_coarse_rows", "setup_r_entries")]
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["system"], r["ranks"], r["level"], "{:,}".format(int(r["rows"])), "{:,}".format(int(r["cycle_values"])),
            r["cycle_messages"], "-" if all(v == "0" for v in setup) else ", ".join("{:,}".format(int(v)) for v in setup),
            "{:,}".format(int(r["gathered_rows"])), r["iterations"], r["iterations_one_block"]))
    return "\n".join(out)


def amg_partition(system, ranks, level, field):
    for r in amg_partition_rows():
        if r["system"] == system and r["ranks"] == str(ranks) and r["level"] == str(level):
            return f(r[field])
    raise SystemExit("figures.py: no amg_partition_bench row for %s, %d ranks, level %d" % (system, ranks, level))


def amg_partition_same_iterations():
    rs = amg_partition_rows()
    return "%d of %d" % (sum(r["iterations"] == r["iterations_whole"] for r in rs), len(rs))


# Blocks a document holds between "<!-- figures.py: NAME -->" and "<!-- /figures.py -->",
# produced whole from a CSV.
TABLES = {
    ("bench/RESULTS.md", "host-direct"): host_direct_table,
    ("bench/RESULTS.md", "columns"): columns_table,
    ("bench/RESULTS.md", "host-defaults"): host_defaults_table,
    ("bench/RESULTS.md", "gemm"): gemm_table,
    ("bench/RESULTS.md", "batched-host"): batched_table,
    ("bench/RESULTS.md", "gesv-h100"): gesv_table,
    ("bench/RESULTS.md", "batched-gpu"): batched_gpu_table,
    ("bench/RESULTS.md", "python-peers"): python_peers_table,
    ("bench/RESULTS.md", "gesv-mixed-h100"): mixed_table,
    ("bench/RESULTS.md", "sparse-streams"): sparse_streams_table,
    ("bench/RESULTS.md", "dgemm-h100"): dgemm_table,
    ("bench/RESULTS.md", "complex-spmv"): complex_spmv_table,
    ("bench/RESULTS.md", "complex-lu"): complex_lu_table,
    ("bench/RESULTS.md", "complex-krylov"): complex_krylov_table,
    ("bench/RESULTS.md", "amg-systems"): amg_systems_table,
    ("bench/RESULTS.md", "amg-partition"): amg_partition_table,
}


def tables(check, write):
    bad = 0
    for (doc, name), make in TABLES.items():
        path = os.path.join(ROOT, doc)
        text = open(path).read()
        begin, end = "<!-- figures.py: %s -->\n" % name, "<!-- /figures.py -->"
        a = text.find(begin)
        b = text.find(end, a)
        if a < 0 or b < 0:
            print("%s: no '%s' block" % (doc, name))
            bad += 1
            continue
        want = make() + "\n"
        have = text[a + len(begin):b]
        if have != want:
            if write:
                open(path, "w").write(text[:a + len(begin)] + want + text[b:])
                print("%s: the '%s' block written from its CSV" % (doc, name))
            else:
                bad += 1
                print("%s: the '%s' block differs from its CSV; `bench/figures.py --write` makes it:\n%s" % (doc, name, want))
    return bad


def main():
    check = "--check" in sys.argv
    bad = tables(check, "--write" in sys.argv)
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
        print("figures.py: %d of %d figures and %d tables checked against their CSVs; %d differ"
              % (len(CLAIMS), len(CLAIMS), len(TABLES), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
