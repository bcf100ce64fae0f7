"""la from Python: host paths here run everywhere (CI has no GPU); GPU and CuPy tests skip,
saying why, where there is none. Tolerances: solves run to rtol 1e-8 on ||b - A x|| / ||b||,
and are compared with scipy's direct spsolve to 1e-8 * cond-ish slack (1e-5 relative on x for
the SPD systems; the non-symmetric ones only by residual), and float32 to rtol 1e-5."""
import os
import pathlib
import re
import signal
import subprocess
import threading
import time

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import la
from conftest import cupy_reason, gpu_reason

SPD = ["bcsstk09.mtx", "gr_30_30.mtx", "1138_bus.mtx"]
GENERAL = ["west0479.mtx", "adder_dcop_05.mtx"]
ROOT = pathlib.Path(__file__).resolve().parents[2]


def poisson2d(n, dtype=np.float64):
    t = sp.diags([-1, 2, -1], [-1, 0, 1], shape=(n, n))
    return (sp.kron(sp.identity(n), t) + sp.kron(t, sp.identity(n))).tocsr().astype(dtype)


def rel_residual(A, x, b):
    return np.linalg.norm(b - A @ x) / np.linalg.norm(b)


# ---- files ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", SPD + GENERAL)
def test_read_matrix_market_equals_scipy(data, name):
    A = la.read_matrix_market(data / name)
    B = sp.csr_matrix(scipy.io.mmread(str(data / name)))
    assert isinstance(A, sp.csr_matrix) and A.shape == B.shape and A.has_canonical_format
    assert abs(A - B).max() == 0


def test_write_then_read_is_the_same_matrix(data, tmp_path):
    A = la.read_matrix_market(data / "bcsstk09.mtx")
    for symmetric in (False, True):
        p = tmp_path / ("sym.mtx" if symmetric else "gen.mtx")
        la.write_matrix_market(p, A, symmetric=symmetric)
        assert abs(la.read_matrix_market(p) - A).max() == 0
        assert ("symmetric" in p.read_text().splitlines()[0]) == symmetric
    with pytest.raises(la.InvalidArgument, match="symmetric"):
        la.write_matrix_market(tmp_path / "x.mtx", la.read_matrix_market(data / "west0479.mtx"), symmetric=True)


def test_file_errors_name_the_file_and_line(tmp_path):
    p = tmp_path / "bad.mtx"
    p.write_text("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n3 1 2.0\n")
    with pytest.raises(la.FileError, match=r"bad.mtx:4: row index 3"):
        la.read_matrix_market(p)
    with pytest.raises(OSError):
        la.read_matrix_market(tmp_path / "missing.mtx")


# ---- solves on the host ------------------------------------------------------------------------

@pytest.mark.parametrize("name", SPD + GENERAL)
def test_solve_matches_spsolve(data, name):
    A = la.read_matrix_market(data / name)
    rng = np.random.default_rng(1)
    b = A @ (1 + rng.random(A.shape[0]))
    x, info, r = la.solve(A, b, device="cpu", full_output=True)
    assert info == 0, r.message
    assert r.converged and r.device == "cpu" and r.true_residual <= 1e-6
    assert rel_residual(A, x, b) <= 1e-6
    if name in SPD:  # the non-symmetric ones are too ill-conditioned (west0479: ~1e12) to compare x
        ref = spla.spsolve(A.tocsc(), b)
        assert np.linalg.norm(x - ref) <= 1e-4 * np.linalg.norm(ref)
    # auto: cg for SPD, except a small one (at most 5,000 nonzeros: 1138_bus) whose factorization
    # the analysis predicts at most auto_direct_flops (2e5) multiply-adds; a non-SPD system of at
    # most auto_direct_rows (20,000) rows directly first.
    cheap = name not in SPD or name == "1138_bus.mtx"
    assert r.method == ("direct" if cheap else "cg"), r.method_choice
    if name not in SPD:
        _, _, k = la.solve(A, b, device="cpu", full_output=True, auto_direct_rows=0)
        assert k.converged and k.method == "bicgstab", k.method_choice
    elif cheap:
        assert "auto_direct_flops" in r.method_choice, r.method_choice
        _, _, k = la.solve(A, b, device="cpu", full_output=True, auto_direct_flops=0)
        assert k.converged and k.method == "cg", k.method_choice


def test_formats_types_and_x0():
    A = poisson2d(20)
    b = A @ np.ones(A.shape[0])
    for M in (A.tocsc(), A.tocoo(), sp.csr_array(A), A.toarray()):
        x, info = la.solve(M, b, device="cpu")
        assert info == 0 and np.allclose(x, 1, atol=1e-6)
    wide = A.copy()
    wide.indptr, wide.indices = wide.indptr.astype(np.int64), wide.indices.astype(np.int64)
    x, info = la.solve(wide, b, device="cpu")
    assert info == 0 and np.allclose(x, 1, atol=1e-6)
    x32, info, r = la.solve(A.astype(np.float32), b.astype(np.float32), rtol=1e-5, device="cpu", full_output=True)
    assert info == 0 and x32.dtype == np.float32 and r.true_residual <= 1e-4
    x0 = np.full(A.shape[0], 0.5)
    x, info, r = la.solve(A, b, x0, device="cpu", full_output=True)
    assert info == 0 and np.all(x0 == 0.5)  # x0 is not written


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_numpy_arrays_are_read_in_place_and_checked(device):
    if device == "gpu" and gpu_reason() is not None:
        pytest.skip(str(gpu_reason()))
    A = poisson2d(20)
    b2 = np.zeros(2 * A.shape[0])
    b2[::2] = A @ np.ones(A.shape[0])  # a strided b: converted, not refused
    keep = [a.copy() for a in (A.indptr, A.indices, A.data, b2)]
    x, info = la.solve(A, b2[::2], device=device)
    assert info == 0 and np.allclose(x, 1, atol=1e-6)
    for a, k in zip((A.indptr, A.indices, A.data, b2), keep):
        assert np.array_equal(a, k)  # nothing the caller passed is written
    # A broken structure (scipy does not check index ranges) is refused, not read past.
    bad = sp.csr_matrix((np.ones(3), np.array([0, 5, 1], dtype=np.int32), np.array([0, 2, 3], dtype=np.int32)),
                        shape=(2, 2))
    with pytest.raises(ValueError, match=r"indices\[1\] = 5 is outside \[0, 2\)"):
        la.solve(bad, np.ones(2), device=device)


def test_options_reach_the_solver_and_are_refused_where_they_do_not_apply():
    A = poisson2d(30)
    b = A @ np.ones(A.shape[0])
    for pc in ("none", "jacobi", "block-jacobi", "fsai", "ic0", "ilu0", "amg", "auto"):
        x, info, r = la.solve(A, b, precond=pc, device="cpu", full_output=True)
        assert info == 0, (pc, r.message)
        if pc not in ("auto",):
            assert r.precond == pc or (pc == "none" and r.precond == "none")
    for method in ("cg", "bicgstab", "gmres", "fgmres"):
        x, info, r = la.solve(A, b, method=method, precond="jacobi", device="cpu", full_output=True)
        assert info == 0 and r.method == method
    _, _, r = la.solve(A, b, precond="amg", amg_cycle="w", amg_degree=3, device="cpu", full_output=True)
    assert "W-cycle" in r.precond_detail and "degree 3" in r.precond_detail
    # Any registered method as an inner solve (PCKSP), by keyword; only fgmres takes it, and
    # the direct method is refused as an inner one.
    x, info, r = la.solve(A, b, method="fgmres", precond="inner", inner_method="bicgstab", inner_iterations=4,
                          inner_precond="ilu0", device="cpu", full_output=True)
    assert info == 0 and "bicgstab, 4 iterations" in r.precond_detail, r.precond_detail
    assert np.linalg.norm(b - A @ x) <= 1e-8 * np.linalg.norm(b)
    with pytest.raises(ValueError, match="only a flexible method"):
        la.solve(A, b, method="gmres", precond="inner", device="cpu")
    with pytest.raises(ValueError, match="inner_method='direct'"):
        la.solve(A, b, method="fgmres", precond="inner", inner_method="direct", device="cpu")
    _, _, r = la.solve(A, b, maxiter=3, precond="none", device="cpu", full_output=True)
    assert r.status == "max_iterations" and r.iterations == 3
    bad = [dict(method="lu"), dict(precond="ilu7"), dict(amg_strength=0.2, precond="jacobi"),
           dict(amg_strength=2.0, precond="amg"), dict(restart=10, method="cg"), dict(rtol=-1.0),
           dict(device="tpu"), dict(ic_shift=0.1, precond="fsai")]
    for kw in bad:
        with pytest.raises(ValueError):
            la.solve(A, b, **{"device": "cpu", **kw})
    with pytest.raises(ValueError, match="amg_strength"):
        la.solve(A, b, precond="jacobi", amg_strength=0.2, device="cpu")
    with pytest.raises(TypeError, match="unexpected keyword"):
        la.solve(A, b, tolerance=1e-3)
    with pytest.raises(ValueError, match="entries"):
        la.solve(A, b[:-1], device="cpu")
    x, info = la.solve(A.astype(complex), b, device="cpu")  # a complex system (test_complex.py)
    assert info == 0 and x.dtype == np.complex128
    with pytest.raises(ValueError, match="square"):
        la.solve(sp.random(5, 6, density=0.5, format="csr"), np.ones(5), device="cpu")
    with pytest.raises(ValueError, match="symmetric"):  # CG on a non-symmetric matrix
        la.solve(A + sp.eye(A.shape[0], k=1), b, method="cg", device="cpu")


def test_broken_scipy_structures_are_refused_before_scipy_reads_them():
    A = poisson2d(10)
    b = A @ np.ones(A.shape[0])
    # Run in a child: before the fix, the first of these killed the interpreter in scipy's
    # sum_duplicates(), and the second leaked a C++ RuntimeError.
    code = """
import numpy as np, scipy.sparse as sp, la
t = sp.diags([-1, 2, -1], [-1, 0, 1], shape=(10, 10))
A = (sp.kron(sp.identity(10), t) + sp.kron(t, sp.identity(10))).tocsr()
b = A @ np.ones(100)
for case in ("past", "decreasing", "first"):
    M = A.copy()
    M.has_canonical_format = False
    if case == "past":
        M.indptr[5] = 10**6
    elif case == "decreasing":
        M.indptr[5] = M.indptr[3]
    else:
        M.indptr[0] = 1
    try:
        la.solve(M, b, device="cpu")
        print(case, "accepted")
    except la.InvalidArgument as e:
        print(case, "refused:", e)
"""
    run = subprocess.run([__import__("sys").executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(__import__("sys").path)})
    assert run.returncode == 0, run.stderr
    assert "past refused: indptr (CSR)[5] = 1000000 is past the end" in run.stdout, run.stdout
    assert "decreasing refused: indptr (CSR) decreases at entry 5" in run.stdout, run.stdout
    assert "first refused: indptr (CSR) starts at 1" in run.stdout, run.stdout


def test_right_hand_sides_of_the_wrong_shape_or_kind_are_refused():
    A = poisson2d(10)
    b = A @ np.ones(A.shape[0])
    x, info = la.solve(A, b.reshape(100, 1), device="cpu")  # a column, as scipy takes
    assert info == 0 and x.shape == (100,)
    for bad in (b.reshape(50, 2), b.reshape(2, 5, 10), b.reshape(1, 100)):
        with pytest.raises(ValueError, match="must have shape"):
            la.solve(A, bad, device="cpu")
    x, info = la.solve(A, b + 1j, device="cpu")  # a complex b makes a complex system
    assert info == 0 and x.dtype == np.complex128
    with pytest.raises(ValueError, match="complex"):
        la.solve(A, b, x0=np.zeros(100) + 0j, device="cpu")
    with pytest.raises(ValueError, match="whole number"):
        la.solve(A, b, maxiter=1.7, device="cpu")
    with pytest.raises(ValueError, match="True or False"):
        la.solve(A, b, force="no", device="cpu")
    x, info = la.solve(A, b, maxiter=300.0, device="cpu")  # a whole float is a count
    assert info == 0


def test_results_and_errors_use_pythons_names():
    A = poisson2d(30)
    b = A @ np.ones(A.shape[0])
    _, info, r = la.solve(A, b, maxiter=3, precond="none", device="cpu", full_output=True)
    assert info == 3
    assert "--" not in r.message and "maxiter" in r.message and "precond" in r.message, r.message
    with pytest.raises(ValueError) as e:
        la.solve(A, b, precond="jacobi", matching="on", device="cpu")
    assert "--" not in str(e.value) and "matching applies to precond='ilu0'" in str(e.value), str(e.value)


def test_solutions_outside_doubles_range_are_not_converged():
    _, info, r = la.solve(sp.diags([1e-300, 1.0]).tocsr(), np.array([1e300, 1.0]), device="cpu", full_output=True)
    assert info != 0 and r.status == "non_finite" and "does not fit in double" in r.message


def test_statuses_as_scipy_info():
    A = poisson2d(10)
    b = A @ np.ones(A.shape[0])
    _, info = la.solve(A, b, maxiter=2, precond="none", device="cpu")
    assert info == 2  # not converged: the iterations it stopped at
    N = A.copy()
    N.data[3] = np.nan
    _, info, r = la.solve(N, b, device="cpu", precond="none", full_output=True)
    assert info == -1 and r.status == "non_finite" and "nan" in r.message.lower()
    _, info, r = la.solve(-A, b, method="cg", precond="none", device="cpu", force=True, full_output=True)
    assert r.status in ("breakdown", "converged")  # -A is negative definite: CG may still converge


def test_callback_history_and_errors_from_the_callback():
    A = poisson2d(60)
    b = A @ np.ones(A.shape[0])
    seen = []
    _, info, r = la.solve(A, b, precond="none", device="cpu", callback=lambda k, res: seen.append((k, res)),
                          history=True, full_output=True)
    assert info == 0 and seen and seen[-1][0] == r.iterations and len(r.history) == r.iterations
    assert seen[-1][1] == pytest.approx(r.residual)

    def boom(k, res):
        raise RuntimeError("stop here")
    with pytest.raises(RuntimeError, match="stop here"):
        la.solve(A, b, precond="none", device="cpu", callback=boom)


def test_ctrl_c_stops_a_long_solve_with_keyboard_interrupt():
    A = poisson2d(200)
    b = A @ np.ones(A.shape[0])
    timer = threading.Timer(0.3, lambda: signal.raise_signal(signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        la.solve(A, b, rtol=0.0, maxiter=10 ** 8, precond="none", method="cg", device="cpu")
    timer.join()
    assert time.monotonic() - t0 < 10


def test_the_gil_is_released_during_a_solve():
    A = poisson2d(150)
    b = A @ np.ones(A.shape[0])
    ticks, stop = [0], threading.Event()

    def count():
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.001)
    t = threading.Thread(target=count)
    t.start()
    time.sleep(0.01)
    before = ticks[0]
    t0 = time.monotonic()
    _, info = la.solve(A, b, precond="none", device="cpu")
    during = ticks[0] - before
    took = time.monotonic() - t0
    stop.set()
    t.join()
    assert info == 0
    assert took < 0.05 or during >= 5, (took, during)  # the other thread ran while la solved


def test_solver_reuses_its_setup_and_takes_new_values():
    A = poisson2d(25)
    b = A @ np.ones(A.shape[0])
    s = la.Solver(A, precond="amg", device="cpu")
    x1, info, r1 = s.solve(b, full_output=True)
    x2, info2, r2 = s.solve(2 * b, full_output=True)
    assert info == info2 == 0 and np.allclose(x2, 2 * x1, rtol=1e-6)
    # One AMG setup for both solves (la::host_solver): each reports the same build.
    assert r1.precond == r2.precond == "amg" and r1.precond_setup_seconds == r2.precond_setup_seconds > 0
    s.update_values(A * 4)
    x3, info = s.solve(b)
    assert info == 0 and np.allclose(x3, 0.25, rtol=1e-5)
    with pytest.raises(ValueError, match="pattern"):
        s.update_values(poisson2d(24))


def test_info_reports_what_the_solvers_read(data):
    d = la.info(la.read_matrix_market(data / "bcsstk09.mtx"))
    assert d["rows"] == d["cols"] == 1083 and d["symmetric"] and d["looks_spd"]
    assert "symmetric values" in d["description"]
    g = la.info(la.read_matrix_market(data / "west0479.mtx"))
    assert not g["symmetric"] and g["max_asymmetry"] > 0


def test_no_gpu_is_a_clear_error_and_auto_uses_the_host():
    if la.cuda_available():
        pytest.skip("a GPU is present: the no-GPU paths are not reachable")
    A = poisson2d(10)
    b = A @ np.ones(A.shape[0])
    with pytest.raises(la.NoGpuError, match="device='cpu'"):
        la.solve(A, b, device="gpu")
    _, info, r = la.solve(A, b, full_output=True)
    assert info == 0 and r.device == "cpu"
    with pytest.raises(la.NoGpuError):
        la.spmv(A, np.ones(A.shape[0]))


def _cli():
    p = os.environ.get("LA_CLI") or str(ROOT / "build" / "tools" / "la")
    return p if os.path.exists(p) else None


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_same_iterations_and_bits_as_the_cli(data, tmp_path, device):
    if device == "gpu" and gpu_reason():
        pytest.skip(gpu_reason())
    cli = _cli()
    if not cli:
        pytest.skip("the la CLI is not built (LA_CLI names it)")
    A = la.read_matrix_market(data / "bcsstk09.mtx")
    b = np.linspace(1, 2, A.shape[0])
    rhs = tmp_path / "b.mtx"
    rhs.write_text("%%MatrixMarket matrix array real general\n" + "%d 1\n" % len(b) + "".join(repr(float(v)) + "\n" for v in b))
    out = tmp_path / "x.mtx"
    run = subprocess.run([cli, "solve", str(data / "bcsstk09.mtx"), "--rhs", str(rhs), "--precond", "fsai",
                          "--device", device, "-o", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    its = int(re.search(r"after (\d+) iterations", run.stdout).group(1))
    x, info, r = la.solve(A, b, precond="fsai", device=device, full_output=True)
    assert info == 0 and r.iterations == its
    assert np.array_equal(x, scipy.io.mmread(str(out)).ravel())  # bit for bit


def test_readme_python_example_runs():
    readme = pathlib.Path(os.environ.get("LA_README", ROOT / "README.md")).read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks, "the README has no python example"
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        for code in blocks:
            exec(compile(code, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)


# ---- the GPU ------------------------------------------------------------------------------------

@pytest.mark.skipif(gpu_reason() is not None, reason=str(gpu_reason()))
@pytest.mark.parametrize("name", SPD + GENERAL)
def test_gpu_solve_matches_the_host(data, name):
    A = la.read_matrix_market(data / name)
    b = A @ np.ones(A.shape[0])
    # The same preconditioner on both sides (auto's ILU(0) sweeps on the GPU, exact on the host).
    kw = dict(precond="fsai") if name in SPD else dict(precond="ilu0", factorization="exact", trisolve="exact")
    x, info, r = la.solve(A, b, device="gpu", full_output=True, **kw)
    xh, infoh, rh = la.solve(A, b, device="cpu", full_output=True, **kw)
    assert info == infoh == 0 and r.device == "gpu"
    # Within 15% (west0479, condition ~1e12: BiCGSTAB with exact ILU(0) took 79 on an H100 and
    # 90 on the host, the dot products summed in another order).
    assert abs(r.iterations - rh.iterations) <= max(2, (15 * rh.iterations) // 100)
    assert rel_residual(A, x, b) <= 1e-6
    x2, _ = la.solve(A, b, device="gpu", **kw)
    assert np.array_equal(x, x2)  # reruns bit-identical


@pytest.mark.skipif(gpu_reason() is not None, reason=str(gpu_reason()))
def test_gpu_solver_spmv_and_update_values():
    A = poisson2d(64)
    b = A @ np.ones(A.shape[0])
    s = la.Solver(A, precond="amg", device="gpu")
    x, info = s.solve(b)
    assert info == 0 and np.allclose(x, 1, atol=1e-6)
    s.update_values(A * 2)
    x, info = s.solve(b)
    assert info == 0 and np.allclose(x, 0.5, atol=1e-6)
    y = la.spmv(A, np.ones(A.shape[0]))
    assert np.allclose(y, b, rtol=1e-14, atol=1e-14)


@pytest.mark.skipif(cupy_reason() is not None, reason=str(cupy_reason()))
def test_cupy_input_is_used_in_place():
    import cupy
    import cupyx.scipy.sparse as csp
    A = poisson2d(100)
    dA = csp.csr_matrix(A)
    db = cupy.asarray(A @ np.ones(A.shape[0]))
    before = la.copies()
    x, info, r = la.solve(dA, db, precond="jacobi", full_output=True)
    assert la.copies() == before  # A, b used in place; x allocated, not copied
    assert isinstance(x, cupy.ndarray) and info == 0 and r.device == "gpu"
    assert float(cupy.abs(x - 1).max()) <= 1e-6
    s = la.Solver(dA, precond="amg")
    x2, info = s.solve(db)
    assert la.copies() == before and info == 0
    y = la.spmv(dA, x2)
    assert la.copies() == before and float(cupy.abs(y - db).max()) <= 1e-6 * float(cupy.abs(db).max())
    # The same solve from numpy: bit-identical to the CuPy one.
    xh, _ = la.solve(A, A @ np.ones(A.shape[0]), precond="jacobi", device="gpu")
    assert np.array_equal(cupy.asnumpy(x), xh)
    with pytest.raises(ValueError, match="CuPy array"):
        la.solve(dA, np.ones(A.shape[0]))
    with pytest.raises(ValueError, match="cpu"):
        la.solve(dA, db, device="cpu")


# ---- dense A: the direct method ---------------------------------------------------------------

def test_dense_arrays_are_solved_directly_on_the_cpu():
    rng = np.random.default_rng(3)
    for n in (1, 31, 33, 150):
        A = rng.uniform(-1, 1, (n, n)) + (2.0 * np.eye(n) if n == 1 else 0)
        b = rng.uniform(-1, 1, n)
        x, info, r = la.solve(A, b, device="cpu", full_output=True)
        assert info == 0 and r.method == "direct" and r.device == "cpu", r.message
        assert rel_residual(A, x, b) < 1e-12
        np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-7, atol=1e-9)
        assert "backward error" in r.message and "condition estimate" in r.message
    A = rng.uniform(-1, 1, (40, 40))
    B = rng.uniform(-1, 1, (40, 3))
    X, info = la.solve(A, B, device="cpu")  # several right-hand sides at once
    assert info == 0 and X.shape == (40, 3) and np.allclose(A @ X, B, atol=1e-10)
    S = A @ A.T + 40 * np.eye(40)
    S = (S + S.T) / 2
    x, info, r = la.solve(S, B[:, 0], device="cpu", full_output=True)
    assert info == 0 and "Cholesky" in r.where
    Z = A.copy()
    Z[:, 5] = 0
    x, info, r = la.solve(Z, B[:, 0], device="cpu", full_output=True)
    assert info == -1 and r.status == "breakdown" and "column 6" in r.message
    with pytest.raises(la.InvalidArgument, match="direct_precision"):
        la.solve(A, B[:, 0], device="cpu", direct_precision="fp8")
    x, info = la.solve(A, B[:, 0], device="cpu", direct_precision="auto")  # the host factors in A's precision
    assert info == 0 and np.allclose(A @ x, B[:, 0], atol=1e-10)
    with pytest.raises(la.InvalidArgument, match="square"):
        la.solve(A[:, :39], B[:, 0], device="cpu")
    with pytest.raises(la.InvalidArgument, match="NaN"):
        bad = A.copy()
        bad[2, 3] = np.nan
        la.solve(bad, B[:, 0], device="cpu")
    with pytest.raises(TypeError, match="direct method's options"):
        la.solve(A, B[:, 0], device="cpu", method="direct", restart=5)
    # An iterative method asked by name still takes a dense A as a sparse one.
    x, info, r = la.solve(S, B[:, 0], device="cpu", method="cg", full_output=True)
    assert info == 0 and r.method == "cg"


@pytest.mark.skipif(gpu_reason() is not None, reason=str(gpu_reason()))
def test_dense_arrays_on_the_gpu_in_every_precision():
    rng = np.random.default_rng(4)
    n = 700
    A = rng.uniform(-1, 1, (n, n))
    b = rng.uniform(-1, 1, n)
    for prec in ("fp64", "tf32x3", "fp32", "tf32", "auto"):
        x, info, r = la.solve(A, b, device="gpu", direct_precision=prec, full_output=True)
        assert info == 0 and r.device == "gpu", (prec, r.message)
        assert rel_residual(A, x, b) < 1e-12, (prec, r.message)
        if prec == "auto":
            assert "auto chose fp64" in r.where, r.where  # n = 700 is below where float factors pay
    # Condition 1e8 with float factors: GMRES-based refinement (its 50-vector cycles hold the 30
    # or so directions float cannot resolve) reaches fp64 accuracy without refactoring.
    u, _ = np.linalg.qr(rng.uniform(-1, 1, (300, 300)))
    v, _ = np.linalg.qr(rng.uniform(-1, 1, (300, 300)))
    ill = (u * np.logspace(0, -8, 300)) @ v.T
    bi = rng.uniform(-1, 1, 300)
    x, info, r = la.solve(ill, bi, device="gpu", direct_precision="fp32", direct_refinement="gmres", rtol=1e-6,
                          full_output=True)
    assert info == 0 and "GMRES" in r.message and "refactored" not in r.message, r.message
    with pytest.raises(la.InvalidArgument, match="direct_refinement"):
        la.solve(ill, bi, device="gpu", direct_refinement="newton")
    X, info = la.solve(A.astype(np.float32), rng.uniform(-1, 1, (n, 4)).astype(np.float32), rtol=1e-5, device="gpu")
    assert info == 0 and X.dtype == np.float32 and X.shape == (n, 4)


@pytest.mark.skipif(cupy_reason() is not None, reason=str(cupy_reason()))
def test_dense_cupy_arrays_are_solved_in_place_on_their_gpu():
    import cupy
    rng = np.random.default_rng(5)
    A = rng.uniform(-1, 1, (300, 300))
    b = rng.uniform(-1, 1, 300)
    copies = la._la.copies()
    x, info, r = la.solve(cupy.asarray(A), cupy.asarray(b), full_output=True)
    assert info == 0 and isinstance(x, cupy.ndarray) and r.device == "gpu"
    assert la._la.copies() == copies  # nothing copied by the binding
    assert rel_residual(A, cupy.asnumpy(x), b) < 1e-12


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_solver_direct_keeps_the_factor(data, device):
    if device == "gpu" and gpu_reason() is not None:
        pytest.skip(str(gpu_reason()))
    # A system the Krylov methods fail on: the factor made once, many b (one and several
    # columns), new values through update_values (the analysis kept).
    A = la.read_matrix_market(str(data / "west2021.mtx"))
    n = A.shape[0]
    s = la.Solver(A, method="direct", device=device, rtol=1e-12)
    rng = np.random.default_rng(9)
    for _ in range(2):
        xt = rng.uniform(-1, 1, n)
        b = A @ xt
        x, info, r = s.solve(b, full_output=True)
        assert info == 0 and r.method == "direct", r.message
        assert rel_residual(A, x, b) < 1e-12, r.message
        assert ("host" in r.where) == (device == "cpu"), r.where
    B = A @ rng.uniform(-1, 1, (n, 3))
    X, info = s.solve(B)
    assert info == 0 and X.shape == (n, 3)
    assert max(rel_residual(A, X[:, j], B[:, j]) for j in range(3)) < 1e-12
    A2 = A.copy()
    A2.data = A2.data * rng.uniform(0.5, 1.5, A2.nnz)
    s.update_values(A2)
    b2 = A2 @ np.ones(n)
    x2, info = s.solve(b2)
    assert info == 0 and rel_residual(A2, x2, b2) < 1e-12
    with pytest.raises(la.InvalidArgument):
        s.solve(np.ones(n + 1))
    # A structurally singular matrix: info -1 and the column named.
    S = sp.csr_matrix((np.array([1.0, 2, 3, 4, 5]), np.array([0, 1, 1, 2, 1]), np.arange(6)), shape=(5, 5))
    x, info, r = la.Solver(S, method="direct", device=device).solve(np.ones(5), full_output=True)
    assert info == -1 and "column" in r.message, r.message


# ---- the adversarial cases once answered wrongly (each fails without its fix) --------------------

def test_dense_solution_out_of_range_is_not_converged():
    x, info, r = la.solve(np.array([[1e-300]]), np.array([1e300]), device="cpu", full_output=True)
    assert info != 0 and r.status == "non_finite", r.message


def test_dense_options_are_checked():
    A, b = np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([1.0, 2.0])
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(la.InvalidArgument):
            la.solve(A, b, rtol=bad, device="cpu")
    with pytest.raises(la.InvalidArgument):
        la.solve(A, b, condition="no", device="cpu")
    with pytest.raises(la.InvalidArgument):
        la.solve(A, 1.0, device="cpu")
    x, info, r = la.solve(np.array([[1.0, 2.0], [2.0, 1.0]]), b, direct_factorization="cholesky", device="cpu",
                          full_output=True)
    assert info == -1 and "not positive definite" in r.message, r.message


def test_bsr_and_wide_indices_are_validated():
    A = sp.bsr_matrix(np.eye(4), blocksize=(2, 2))
    A.indptr[-1] = 99  # past the end of indices and data
    with pytest.raises(la.InvalidArgument):
        la.solve(A, np.ones(4), device="cpu")
    W = sp.csr_matrix((np.array([1.0]), np.array([0], dtype=np.int64), np.array([0, 1], dtype=np.int64)),
                      shape=(1, 2 ** 31))
    with pytest.raises(la.InvalidArgument):
        la.solve(W, np.ones(1), device="cpu")


def test_sparse_direct_huge_b_is_not_a_silent_answer():
    A = sp.csr_matrix(np.array([[1.0, 2, 3], [2, 4, 6], [1, 1, 1]]))  # rank 2
    b = np.full(3, 1e160)  # inconsistent
    for method in ("direct", "auto"):
        x, info, r = la.solve(A, b, method=method, device="cpu", full_output=True)
        assert info != 0, (method, r.message)


def test_solver_auto_with_columns_is_auto_per_column(data):
    A = la.read_matrix_market(str(data / "west0479.mtx"))
    n = A.shape[0]
    rng = np.random.default_rng(3)
    B = rng.uniform(-1, 1, (n, 2))
    s = la.Solver(A, method="auto", device="cpu", auto_direct_rows=0)
    X, info, rs = s.solve(B, full_output=True)
    for j in range(2):
        x1, info1 = la.solve(A, B[:, j], method="auto", device="cpu", auto_direct_rows=0)
        assert (rs[j].converged, info1 == 0) == (True, True), rs[j].message
        assert rel_residual(A, X[:, j], B[:, j]) < 1e-7


def test_every_scipy_format_with_corrupt_indices_is_refused():
    # In a child: a format la did not check would crash the interpreter in scipy's conversion.
    code = """
import numpy as np, scipy.sparse as sp, la
base = sp.random(40, 40, density=0.2, format="csr", random_state=1) + sp.identity(40)
b = np.ones(40)
cases = {}
m = base.tocsc(); m.indptr[3] = 10**6; cases["csc"] = m
m = base.tocoo(); m.row[2] = 99; cases["coo"] = m
m = base.tobsr(blocksize=(2, 2)); m.indptr[-1] = 10**6; cases["bsr"] = m
m = base.todia(); m.offsets = np.append(m.offsets, 7); cases["dia"] = m
m = base.tocsr(); m.indices[0] = -5; cases["csr"] = m
for name, m in cases.items():
    try:
        la.solve(m, b, device="cpu")
        print(name, "accepted")
    except la.InvalidArgument as e:
        print(name, "refused")
"""
    run = subprocess.run([__import__("sys").executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(__import__("sys").path)})
    assert run.returncode == 0, run.stderr
    for name in ("csc", "coo", "bsr", "dia", "csr"):
        assert name + " refused" in run.stdout, run.stdout


# ---- AMG for systems of PDEs ----------------------------------------------------------------

def elasticity2d(N, nu=0.3):
    """Plane-strain linear elasticity on Q1 elements, N x N nodes on the unit square, the face
    x = 0 clamped (its nodes left out): (A, coordinates (nodes, 2)), node-major unknowns."""
    h = 1.0 / (N - 1)
    lam, mu = nu / ((1 + nu) * (1 - 2 * nu)), 1 / (2 * (1 + nu))
    D = np.array([[lam + 2 * mu, lam, 0], [lam, lam + 2 * mu, 0], [0, 0, mu]])
    K = np.zeros((8, 8))
    g = 1 / np.sqrt(3)
    corners = [(0, 0), (1, 0), (0, 1), (1, 1)]
    for xi in (-g, g):
        for eta in (-g, g):
            B = np.zeros((3, 8))
            for a, (cx, cy) in enumerate(corners):
                sx, sy = 2 * cx - 1, 2 * cy - 1
                dx = sx * (1 + sy * eta) / 4 * (2 / h)
                dy = sy * (1 + sx * xi) / 4 * (2 / h)
                B[0, 2 * a], B[1, 2 * a + 1], B[2, 2 * a], B[2, 2 * a + 1] = dx, dy, dy, dx
            K += B.T @ D @ B * (h / 2) ** 2
    free = -np.ones(N * N, dtype=np.int64)
    free[[p for p in range(N * N) if p % N != 0]] = np.arange(N * N - N)
    rows, cols, vals = [], [], []
    for j in range(N - 1):
        for i in range(N - 1):
            nodes = [i + N * j, i + 1 + N * j, i + N * (j + 1), i + 1 + N * (j + 1)]
            dofs = [2 * free[p] + c if free[p] >= 0 else -1 for p in nodes for c in (0, 1)]
            for r in range(8):
                for c in range(8):
                    if dofs[r] >= 0 and dofs[c] >= 0:
                        rows.append(dofs[r]), cols.append(dofs[c]), vals.append(K[r, c])
    n = 2 * (N * N - N)
    A = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    A = ((A + A.T) / 2).tocsr()
    coords = np.array([[(p % N) * h, (p // N) * h] for p in range(N * N) if p % N != 0])
    return A, coords


def test_amg_takes_the_near_null_space_of_a_system():
    A, X = elasticity2d(24)
    b = A @ np.ones(A.shape[0])
    _, info0, r0 = la.solve(A, b, precond="amg", device="cpu", full_output=True)
    x, info, r = la.solve(A, b, precond="amg", coordinates=X, device="cpu", full_output=True)
    assert info0 == 0 and info == 0 and rel_residual(A, x, b) <= 1e-8 * 1.01
    assert "3 rigid-body modes from the coordinates, nodes of 2 unknowns" in r.precond_detail
    assert r.iterations * 2 < r0.iterations, (r.iterations, r0.iterations)
    # The modes given as vectors (n, 3) with the block size: the same hierarchy.
    modes = np.zeros((A.shape[0], 3))
    modes[0::2, 0], modes[1::2, 1] = 1, 1
    modes[0::2, 2], modes[1::2, 2] = -X[:, 1], X[:, 0]
    _, info, rv = la.solve(A, b, precond="amg", near_null_space=modes, amg_block_size=2, device="cpu", full_output=True)
    assert info == 0 and "3 near-null vectors given, nodes of 2 unknowns" in rv.precond_detail
    assert rv.iterations == r.iterations
    s = la.Solver(A, precond="amg", coordinates=X, device="cpu")
    xs, info, rs = s.solve(b, full_output=True)
    assert info == 0 and "rigid-body" in rs.precond_detail
    s.update_values(A * 3)  # the aggregates and T kept, the numeric phases rerun
    x3, info3, r3 = s.solve(b, full_output=True)
    assert info3 == 0 and np.allclose(x3, xs / 3, rtol=1e-6) and r3.iterations == rs.iterations
    _, _, roff = la.solve(A, b, precond="amg", coordinates=X, amg_near_null_space="none", device="cpu", full_output=True)
    assert "near-null" not in roff.precond_detail
    with pytest.raises(la.InvalidArgument, match="precond='amg'"):
        la.solve(A, b, precond="jacobi", coordinates=X, device="cpu")
    with pytest.raises(la.InvalidArgument, match=r"coordinates has shape \(5, 2\)"):
        la.solve(A, b, precond="amg", coordinates=X[:5], device="cpu")
    with pytest.raises(la.InvalidArgument, match="near_null_space has shape"):
        la.solve(A, b, precond="amg", near_null_space=np.ones((3, 2)), device="cpu")
    bad = modes.copy()
    bad[4, 1] = np.nan
    _, info, rb = la.solve(A, b, precond="amg", near_null_space=bad, device="cpu", full_output=True)
    assert info == -1 and "near-null space holds a value that is not finite" in rb.message  # as AMG's other refusals


@pytest.mark.skipif(gpu_reason() is not None, reason=str(gpu_reason()))
def test_amg_near_null_space_on_the_gpu():
    A, X = elasticity2d(40)
    b = A @ np.ones(A.shape[0])
    _, info_c, rc = la.solve(A, b, precond="amg", coordinates=X, device="cpu", full_output=True)
    x, info, r = la.solve(A, b, precond="amg", coordinates=X, device="gpu", full_output=True)
    assert info == info_c == 0 and rel_residual(A, x, b) <= 1e-8 * 1.01
    assert "3 rigid-body modes" in r.precond_detail and abs(r.iterations - rc.iterations) <= 1
    s = la.Solver(A, precond="amg", coordinates=X, device="gpu")
    x2, info2 = s.solve(b)
    assert info2 == 0
    s.update_values(A * 3)
    x3, info3 = s.solve(b)
    assert info3 == 0 and np.allclose(x3, x2 / 3, rtol=1e-6)
