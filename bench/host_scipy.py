#!/usr/bin/env python3
"""la's host solver against scipy.sparse.linalg, iteration for iteration (no GPU needed).

usage: PYTHONPATH=build/python python3 bench/host_scipy.py [--out FILE.csv] [--repeat K]

The same system, b = A * ones, rtol 1e-8, no preconditioner on both sides (scipy's cg and gmres
take none by default) and the same method: la.solve(device='cpu', precond='none') against
scipy's cg (SPD) or gmres(restart) (general), each run --repeat times (default 3), the fastest
kept. Both report their iterations (scipy's through its callback, one call an iteration for cg,
one an inner iteration for gmres with callback_type='pr_norm'); the table gives the time per
iteration, la's over scipy's, and checks each solution (||b - A x|| / ||b|| <= 1e-6) before
printing its time. The time is la's iterating time (SolveResult.iterate_seconds) against
scipy's whole call, so the ratio favours neither: scipy's setup is a few vector allocations.
"""
import argparse
import csv
import pathlib
import sys
import time

import numpy as np
import scipy.sparse.linalg as spla

import la
from python_bench import poisson  # the same generated grids as the Python benchmark

ROOT = pathlib.Path(__file__).resolve().parents[1]


def relres(A, x, b):
    return np.linalg.norm(b - A @ x) / np.linalg.norm(b)


def scipy_run(A, b, method, restart, maxiter):
    its = [0]

    def cb(_):
        its[0] += 1

    import inspect
    f = spla.cg if method == "cg" else spla.gmres
    tol = {"rtol": 1e-8} if "rtol" in inspect.signature(f).parameters else {"tol": 1e-8}  # scipy < 1.12: tol
    t = time.perf_counter()
    if method == "cg":
        x, info = spla.cg(A, b, atol=0.0, maxiter=maxiter, callback=cb, **tol)
    else:
        x, info = spla.gmres(A, b, atol=0.0, restart=restart, maxiter=maxiter, callback=cb,
                             callback_type="pr_norm", **tol)
    return time.perf_counter() - t, its[0], x, info


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cases = [
        ("poisson2d:256", poisson(256, 2), "cg", 0),
        ("poisson2d:512", poisson(512, 2), "cg", 0),
        ("poisson3d:64", poisson(64, 3), "cg", 0),
        ("bcsstk21.mtx", la.read_matrix_market(ROOT / "data/bcsstk21.mtx"), "cg", 0),
        ("Trefethen_2000.mtx", la.read_matrix_market(ROOT / "data/Trefethen_2000.mtx"), "cg", 0),
        ("west0479.mtx gmres(30)", la.read_matrix_market(ROOT / "data/west0479.mtx"), "gmres", 30),
        ("adder_dcop_05.mtx gmres(30)", la.read_matrix_market(ROOT / "data/adder_dcop_05.mtx"), "gmres", 30),
        ("poisson2d:128 gmres(30)", poisson(128, 2), "gmres", 30),
        ("poisson2d:128 gmres(200)", poisson(128, 2), "gmres", 200),
    ]
    rows = []
    print("%-28s %8s %6s %6s %10s %10s %7s" % ("system", "rows", "la it", "sp it", "la us/it", "sp us/it", "la/sp"))
    for name, A, method, restart in cases:
        A = A.tocsr().astype(np.float64)
        b = A @ np.ones(A.shape[0])
        maxiter = 2000 if method == "gmres" else 20 * A.shape[0]
        best_la = best_sp = None
        for _ in range(args.repeat):
            x, info, r = la.solve(A, b, method=method, precond="none", device="cpu", maxiter=maxiter * (restart or 1),
                                  full_output=True, **({"restart": restart} if restart else {}))
            if best_la is None or r.iterate_seconds < best_la[0]:
                best_la = (r.iterate_seconds, r.iterations, relres(A, x, b))
            ts, its, xs, _ = scipy_run(A, b, method, restart, maxiter)
            if best_sp is None or ts < best_sp[0]:
                best_sp = (ts, its, relres(A, xs, b))
        ok = best_la[2] <= 1e-6 and best_sp[2] <= 1e-6
        la_us = 1e6 * best_la[0] / max(best_la[1], 1)
        sp_us = 1e6 * best_sp[0] / max(best_sp[1], 1)
        print("%-28s %8d %6d %6d %10.1f %10.1f %7.2f%s" % (name, A.shape[0], best_la[1], best_sp[1], la_us, sp_us,
                                                          la_us / sp_us, "" if ok else "  (not converged)"))
        rows.append(dict(system=name, rows=A.shape[0], la_iterations=best_la[1], scipy_iterations=best_sp[1],
                         la_us_per_iteration=round(la_us, 2), scipy_us_per_iteration=round(sp_us, 2),
                         ratio=round(la_us / sp_us, 3), la_relres=best_la[2], scipy_relres=best_sp[2]))
    if args.out:
        with open(args.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
