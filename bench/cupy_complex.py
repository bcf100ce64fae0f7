"""Complex Krylov on the GPU: la against CuPy (issue 69), in one run.

The systems: la's Helmholtz operator (formats/generate.hpp: -lap u - kappa^2 (1 + i shift) u
scaled by h^2, an absorbing boundary on every face, 10 points a wavelength, shift 0.5), built
here in scipy with the same formula, b = A * ones. Each solver runs to rtol 1e-8 with at most
20,000 iterations: la's GMRES(30) and COCG (with Jacobi, la's default preconditioner) against
CuPy's gmres (restart 30, no preconditioner: cupyx takes none built in; Jacobi passed as M, a
LinearOperator, for the second row) on the same CuPy arrays; and the direct method on the host
(la's sparse LU, complex128) against scipy's spsolve (SuperLU) on the same systems. Every answer is checked: the
relative residual ||b - A x|| / ||b||, recomputed with scipy on the host, at most 1e-6; the
script exits 1 where la misses, a peer says it converged and misses, or a direct solve misses. Time:
the best of 2 runs of each call, the first (compilation, set-up) excluded. Writes a CSV.

    python3 bench/cupy_complex.py [--out FILE] [--sizes 2d:300,2d:600,3d:40]
"""
import argparse
import sys
import time

import numpy as np
import scipy.sparse as sp


def helmholtz(d, n, ppw=10.0, shift=0.5):
    kappa = 2 * np.pi * (n + 1) / ppw
    h = 1.0 / (n + 1)
    kh = kappa * h
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n), format="csr")
    I = sp.identity(n, format="csr")
    if d == 2:
        L = sp.kron(T, I) + sp.kron(I, T)
    else:
        L = sp.kron(sp.kron(T, I), I) + sp.kron(sp.kron(I, T), I) + sp.kron(sp.kron(I, I), T)
    # Boundary faces a node touches: 1 / (1 - i kh) each subtracted from the diagonal.
    e = np.zeros(n)
    e[0] += 1
    e[-1] += 1
    if d == 2:
        faces = (np.add.outer(e, np.zeros(n)) + np.add.outer(np.zeros(n), e)).ravel()
    else:
        faces = (e[:, None, None] + e[None, :, None] + e[None, None, :]).ravel()
    face = 1.0 / (1.0 - 1j * kh)
    diag = -(kh * kh) * (1 + 1j * shift) - faces * face
    A = (L.astype(np.complex128) + sp.diags(diag)).tocsr()
    A.sort_indices()
    return A


def best_of(f, reps=2):
    f()
    t = []
    out = None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = f()
        t.append(time.perf_counter() - t0)
    return min(t), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="")
    ap.add_argument("--sizes", default="2d:300,2d:600,3d:40")
    a = ap.parse_args()
    import la
    try:
        import cupy
        import cupyx.scipy.sparse as csp
        import cupyx.scipy.sparse.linalg as cla
    except ImportError:
        print("CuPy is not installed: nothing to compare")
        return 0
    if not la.cuda_available():
        print("no GPU:", la.cuda_status())
        return 0
    device = la.cuda_status()
    rows = []
    bad = 0
    for spec in a.sizes.split(","):
        d, n = spec.split(":")
        d, n = int(d[0]), int(n)
        A = helmholtz(d, n)
        b = A @ np.ones(A.shape[0], dtype=np.complex128)
        dA, db = csp.csr_matrix(A), cupy.asarray(b)
        bn = np.linalg.norm(b)
        diag = cupy.asarray(A.diagonal())
        jac = cla.LinearOperator(A.shape, matvec=lambda v: v / diag, dtype=np.complex128)

        def check(x):
            xh = cupy.asnumpy(x)
            return float(np.linalg.norm(b - A @ xh) / bn)

        runs = [
            ("la:gmres+jacobi", lambda: la.solve(dA, db, method="gmres", precond="jacobi", restart=30, rtol=1e-8,
                                                 maxiter=20000, full_output=True)),
            ("la:cocg+jacobi", lambda: la.solve(dA, db, method="cocg", precond="jacobi", rtol=1e-8, maxiter=20000,
                                                full_output=True)),
            ("cupy:gmres", lambda: cla.gmres(dA, db, restart=30, rtol=1e-8, maxiter=20000)),
            ("cupy:gmres+jacobi", lambda: cla.gmres(dA, db, restart=30, rtol=1e-8, maxiter=20000, M=jac)),
        ]
        times = {}
        for name, f in runs:
            def timed():
                out = f()
                cupy.cuda.get_current_stream().synchronize()
                cupy.cuda.Device().synchronize()
                return out
            try:
                sec, out = best_of(timed)
            except TypeError:  # an older CuPy takes tol, not rtol
                f2 = (lambda f=f: cla.gmres(dA, db, restart=30, tol=1e-8, maxiter=20000,
                                              M=jac if "jacobi" in name else None))
                sec, out = best_of(lambda: (f2(), cupy.cuda.Device().synchronize())[0])
            x = out[0]
            res = check(x)
            ok = res <= 1e-6
            iters = out[2].iterations if name.startswith("la:") else -1
            rows.append((device, spec, A.shape[0], A.nnz, name, sec * 1e3, iters, res, int(ok)))
            times[name] = sec if ok else None
            # A miss: a solver that says it converged (info 0; la's always must) whose residual does not.
            if not ok and (name.startswith("la:") or int(out[1]) == 0):
                bad += 1
                print("  %s: claimed convergence, residual %.2e" % (name, res))
            print("%-8s %9d rows  %-18s %10.2f ms  iterations %6d  residual %.2e%s" % (
                spec, A.shape[0], name, sec * 1e3, iters, res, "" if ok else "  (not converged)"), flush=True)
        for mine in ("la:gmres+jacobi", "la:cocg+jacobi"):
            for peer in ("cupy:gmres", "cupy:gmres+jacobi"):
                if times.get(mine) and times.get(peer):
                    print("  %s vs %s: %.2fx" % (mine, peer, times[peer] / times[mine]))
    # The direct method against scipy's spsolve (SuperLU), both on the host's cores.
    import scipy.sparse.linalg as sla
    for spec in a.sizes.split(","):
        d, n = spec.split(":")
        d, n = int(d[0]), int(n)
        A = helmholtz(d, n)
        if A.shape[0] > 100000 or d == 3:  # la's host LU is up-looking on one thread: 2D, 100k rows at most
            continue
        b = A @ np.ones(A.shape[0], dtype=np.complex128)
        bn = np.linalg.norm(b)
        for name, f in (("la:direct (host sparse LU)", lambda: la.solve(A, b, method="direct", device="cpu", full_output=True)),
                        ("scipy:spsolve", lambda: (sla.spsolve(A.tocsc(), b), 0))):
            sec, out = best_of(f)
            res = float(np.linalg.norm(b - A @ out[0]) / bn)
            ok = res <= 1e-6
            if not ok:  # a direct solve's answer, la's or scipy's, misses
                bad += 1
            rows.append((device, spec, A.shape[0], A.nnz, name, sec * 1e3, -1, res, int(ok)))
            print("%-8s %9d rows  %-26s %10.2f ms  residual %.2e%s" % (spec, A.shape[0], name, sec * 1e3, res,
                                                                       "" if ok else "  (missed)"), flush=True)
    if a.out:
        with open(a.out, "w") as f:
            f.write("device,system,rows,nnz,impl,ms,iterations,residual,ok\n")
            for r in rows:
                f.write('"%s",%s,%d,%d,%s,%.4f,%d,%.3e,%d\n' % r)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
