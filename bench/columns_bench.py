#!/usr/bin/env python3
"""Many right-hand sides through one setup: la.Solver(A, method='direct') on k columns against
scipy's splu (SuperLU) + solve, in one process, every answer checked.

    PYTHONPATH=build/python python3 bench/columns_bench.py [--systems poisson2d:300] [--k 1,8]
        [--device cpu] [--reps 3] [--out columns.csv]

Per system and k: la's whole time (Solver: the analysis and factors, then the k columns: the
host's block solve and refinement), and scipy's (splu, then solve of the n x k block). Each time
is the median of --reps runs; relres is the worst column's ||b - Ax|| / ||b||; a relres above
1e-10 is a miss, and any miss (la's or scipy's) makes the exit status 1.
"""
import argparse
import csv
import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import la


def grid(name):
    kind, n = name.split(":")
    n = int(n)
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    i = sp.eye(n)
    if kind == "poisson2d":
        return (sp.kron(i, t) + sp.kron(t, i)).tocsr()
    if kind == "poisson3d":
        return (sp.kron(sp.kron(i, i), t) + sp.kron(sp.kron(i, t), i) + sp.kron(sp.kron(t, i), i)).tocsr()
    raise SystemExit("unknown system " + name)


def relres(a, x, b):
    r = b - a @ x
    return float(max(np.linalg.norm(r[:, j]) / np.linalg.norm(b[:, j]) for j in range(b.shape[1])))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--systems", default="poisson2d:300")
    ap.add_argument("--k", default="1,8")
    ap.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default="columns.csv")
    a = ap.parse_args()
    rows, misses = [], 0
    print("%-16s %4s %-12s %9s %9s" % ("system", "k", "solver", "seconds", "relres"))
    for name in a.systems.split(","):
        A = grid(name)
        n = A.shape[0]
        rng = np.random.default_rng(1)
        for k in [int(v) for v in a.k.split(",")]:
            B = rng.standard_normal((n, k))
            for solver in ("la", "scipy"):
                times, worst = [], 0.0
                for _ in range(a.reps):
                    t0 = time.perf_counter()
                    if solver == "la":
                        s = la.Solver(A, method="direct", device=a.device)
                        X, info = s.solve(B if k > 1 else B[:, 0])
                        ok = info == 0
                    else:
                        lu = spla.splu(A.tocsc())
                        X = lu.solve(B if k > 1 else B[:, 0])
                        ok = True
                    times.append(time.perf_counter() - t0)
                    X = X.reshape(n, k)
                    rr = relres(A, X, B)
                    worst = max(worst, rr if ok else float("inf"))
                miss = not worst <= 1e-10
                misses += miss
                row = {"system": name, "rows": n, "k": k, "solver": solver, "device": a.device if solver == "la" else "cpu",
                       "seconds": statistics.median(times), "relres": worst, "ok": int(not miss)}
                rows.append(row)
                print("%-16s %4d %-12s %9.4f %9.1e%s" % (name, k, solver, row["seconds"], worst, " MISS" if miss else ""),
                      flush=True)
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
