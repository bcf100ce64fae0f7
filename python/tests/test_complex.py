"""la.solve on complex systems (issue 69): complex64 and complex128 scipy/numpy input on the CPU
and the GPU, CuPy input in place; the method auto picks and says why; the result has the
input's dtype and its residual is checked; what complex systems do not take is refused."""
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import la
from conftest import cupy_reason, gpu_reason


def helmholtz(n, shift=0.5):
    """A complex symmetric 2D Helmholtz-like matrix with an absorbing diagonal (as la's generator)."""
    T = sp.diags([-1, 2, -1], [-1, 0, 1], shape=(n, n))
    A = sp.kronsum(T, T).tocsr().astype(np.complex128)
    k2 = (2 * np.pi / 10) ** 2
    return (A - (k2 - 1j * shift * k2) * sp.eye(n * n)).tocsr()


def devices():
    return ["cpu"] + ([] if gpu_reason() else ["gpu"])


@pytest.mark.parametrize("device", devices())
def test_the_complex_data_matrices_solve_with_the_defaults(data, device):
    for name in ("w156", "arrowc", "mhd1280b"):
        A = sp.csr_matrix(scipy.io.mmread(str(data / (name + ".mtx"))))
        b = A @ np.ones(A.shape[0], dtype=np.complex128)
        x, info, r = la.solve(A, b, device=device, full_output=True)
        assert info == 0, (name, r.message)
        assert x.dtype == np.complex128
        res = np.linalg.norm(b - A @ x) / np.linalg.norm(b)
        assert res <= 1e-8 * 100, (name, res)
        assert r.true_residual <= 1e-6
        assert r.device == device
        assert r.method_choice.startswith("auto:"), r.method_choice
    # mhd1280b is Hermitian: CG; w156 has no diagonal: the direct method first.
    A = sp.csr_matrix(scipy.io.mmread(str(data / "mhd1280b.mtx")))
    _, _, r = la.solve(A, A @ np.ones(1280), device=device, full_output=True)
    assert r.method == "cg", r.method


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("method", ["cocg", "bicgstab", "gmres", "direct", "auto"])
def test_every_method_on_a_complex_symmetric_system(device, method):
    A = helmholtz(30)
    rng = np.random.default_rng(1)
    want = rng.standard_normal(900) + 1j * rng.standard_normal(900)
    b = A @ want
    x, info, r = la.solve(A, b, method=method, rtol=1e-10, device=device, full_output=True)
    assert info == 0, r.message
    assert np.abs(x - want).max() / np.abs(want).max() < 1e-6
    assert r.method == ("direct" if method in ("direct", "auto") else method)


@pytest.mark.parametrize("device", devices())
def test_solver_keeps_the_complex_factors(device):
    A = helmholtz(20)
    s = la.Solver(A, device=device)
    rng = np.random.default_rng(4)
    for _ in range(2):
        want = rng.standard_normal(400) + 1j * rng.standard_normal(400)
        x, info, r = s.solve(A @ want, full_output=True)
        assert info == 0, r.message
        assert x.dtype == np.complex128 and r.method == "direct", r.method
        assert r.method_choice.startswith("auto:")
        assert np.abs(x - want).max() < 1e-9
    B = np.stack([A @ np.ones(400, dtype=complex), 2j * (A @ np.ones(400, dtype=complex))], axis=1)
    X, info = s.solve(B)
    assert info == 0 and X.shape == (400, 2) and np.allclose(X[:, 1], 2j)
    g = la.Solver(A.astype(np.complex64), method="gmres", rtol=1e-5, device=device)  # complex64 stays complex64
    x, info = g.solve((A @ np.ones(400)).astype(np.complex64))
    assert info == 0 and x.dtype == np.complex64
    with pytest.raises(la.NotSupported):
        s.update_values(A)
    with pytest.raises(ValueError, match="callback"):
        s.solve(A @ np.ones(400, dtype=complex), callback=lambda i, r: None)


@pytest.mark.parametrize("device", devices())
def test_ic0_and_ilu0_on_the_cpu_and_the_gpu(data, device):
    # mhd1280b is Hermitian positive definite: CG with IC(0) (L L^H), fewer iterations than with
    # Jacobi; ILU(0) with GMRES on a complex symmetric system.
    A = sp.csr_matrix(scipy.io.mmread(str(data / "mhd1280b.mtx")))
    b = A @ np.ones(A.shape[0], dtype=np.complex128)
    x, info, r = la.solve(A, b, method="cg", precond="ic0", rtol=1e-10, device=device, full_output=True)
    assert info == 0, r.message
    assert r.device == device and r.precond == "ic0", (r.device, r.precond)
    H = helmholtz(20)
    _, info_i, ri = la.solve(H, H @ np.ones(400, dtype=complex), method="gmres", precond="ilu0", device=device,
                             full_output=True)
    assert info_i == 0 and ri.precond == "ilu0", ri.message
    assert np.linalg.norm(b - A @ x) / np.linalg.norm(b) < 1e-9
    _, info_j, rj = la.solve(A, b, method="cg", precond="jacobi", rtol=1e-10, device=device, full_output=True)
    assert info_j == 0 and r.iterations < rj.iterations, (r.iterations, rj.iterations)
    with pytest.raises(ValueError, match="not Hermitian"):  # complex symmetric, not Hermitian
        la.solve(helmholtz(5), np.ones(25, dtype=complex), method="gmres", precond="ic0")


@pytest.mark.parametrize("device", devices())
def test_complex64_stays_complex64_and_x0_is_used(device):
    A = helmholtz(20).astype(np.complex64)
    b = (A @ np.ones(400, dtype=np.complex64)).astype(np.complex64)
    x, info, r = la.solve(A, b, method="gmres", rtol=1e-5, device=device, full_output=True)
    assert info == 0 and x.dtype == np.complex64, r.message
    assert np.abs(x - 1).max() < 1e-3
    x2, info2, r2 = la.solve(A, b, x0=x, method="gmres", rtol=1e-4, device=device, full_output=True)
    assert info2 == 0 and r2.iterations < r.iterations / 2, (r.iterations, r2.iterations)
    assert r.precond == "jacobi"
    # A real matrix with a complex b is a complex system; float32 with complex64 stays complex64.
    R = sp.identity(10, format="csr", dtype=np.float32) * 2
    x, info = la.solve(R, np.full(10, 1 + 1j, dtype=np.complex64), device=device)
    assert info == 0 and x.dtype == np.complex64 and np.allclose(x, 0.5 + 0.5j)


def test_what_complex_systems_do_not_take_is_refused():
    A = helmholtz(5)
    b = A @ np.ones(25, dtype=complex)
    with pytest.raises(ValueError, match="complex systems take"):
        la.solve(A, b, precond="fsai", device="cpu")
    x, info, r = la.solve(A, b, method="gmres", precond="ilu0", device="cpu", full_output=True)
    assert info == 0 and r.device == "cpu" and r.precond == "ilu0", r.message
    with pytest.raises(ValueError, match="complex systems take"):
        la.solve(A, b, method="fgmres", device="cpu")
    with pytest.raises(ValueError, match="not apply to complex"):
        la.solve(A, b, fsai_pattern="a2", device="cpu")
    with pytest.raises(ValueError, match="callback"):
        la.solve(A, b, callback=lambda i, r: None, device="cpu")
    with pytest.raises(ValueError, match="complex128"):
        la.solve(A.astype(np.complex64), b.astype(np.complex64), method="direct", device="cpu")
    with pytest.raises(ValueError, match="entries|shape"):
        la.solve(A, b[:-1], device="cpu")
    x, info, r = la.solve(A, np.full(25, np.nan + 0j), method="gmres", device="cpu", full_output=True)
    assert info == -1 and r.status == "non_finite"
    # A singular system: never converged.
    S = sp.csr_matrix(np.array([[1, 1], [1, 1]], dtype=complex))
    x, info, r = la.solve(S, np.array([1, 1j]), device="cpu", full_output=True)
    assert info != 0, r.message


@pytest.mark.skipif(cupy_reason() is not None, reason=str(cupy_reason()))
def test_cupy_input_is_solved_in_place():
    import cupy
    import cupyx.scipy.sparse as csp
    A = helmholtz(30)
    b = A @ np.ones(900, dtype=complex)
    dA, db = csp.csr_matrix(A), cupy.asarray(b)
    before = la.copies()
    x, info, r = la.solve(dA, db, method="cocg", full_output=True)
    assert info == 0, r.message
    assert isinstance(x, cupy.ndarray) and x.dtype == cupy.complex128
    assert la.copies() == before  # A, b and x used in place
    assert float(cupy.abs(x - 1).max()) < 1e-6
    x, info, r = la.solve(dA, db, full_output=True)  # auto: reads A's values on the host (counted)
    assert info == 0 and la.copies() > before


def test_corrupt_complex_scipy_matrices_are_refused_before_scipy_reads_them():
    # In a child: a corrupt index array read unchecked by scipy can kill the interpreter.
    import os
    import subprocess
    import sys
    code = """
import numpy as np, scipy.sparse as sp, la
A = (sp.random(20, 20, density=0.3, random_state=1) + 4 * sp.identity(20)).astype(np.complex128)
b = A @ np.ones(20, dtype=np.complex128)
for fmt in ("csr", "csc", "bsr", "coo", "dia"):
    M = A.asformat(fmt).copy()
    if fmt in ("csr", "csc", "bsr"):
        M.indptr[3] = 10**6
    elif fmt == "coo":
        M.row[2] = 99
    else:
        M.offsets = np.append(M.offsets, 7)
    try:
        la.solve(M, b, device="cpu")
        print(fmt, "accepted")
    except la.InvalidArgument as e:
        print(fmt, "refused:", e)
    try:
        la.Solver(M, device="cpu")
        print(fmt, "Solver accepted")
    except la.InvalidArgument as e:
        print(fmt, "Solver refused:", e)
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert run.returncode == 0, run.stderr
    for fmt in ("csr", "csc", "bsr", "coo", "dia"):
        assert fmt + " refused:" in run.stdout, run.stdout
        assert fmt + " Solver refused:" in run.stdout, run.stdout
