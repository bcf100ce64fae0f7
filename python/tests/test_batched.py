"""la.solve on a batch of dense systems: A (batch, n, n), b (batch, n) or (batch, n, k), on the
CPU (the host's threads) and, where there is one, the GPU (numpy copied there, CuPy in place);
per-system statuses inside a batch; numpy's solve as the reference."""
import numpy as np
import pytest

import la


def _batch(count, n, seed, spd=False):
    g = np.random.default_rng(seed)
    if spd:
        m = g.uniform(-1, 1, (count, n, n))
        return m @ m.transpose(0, 2, 1) / n + np.eye(n)
    return g.uniform(-1, 1, (count, n, n)) + np.sqrt(n) * np.eye(n)


def _devices():
    return ["cpu"] + (["gpu"] if la.cuda_available() else [])


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("n", [1, 3, 8, 31, 33])
def test_batch_solves_as_numpy(device, n):
    A = _batch(50, n, n)
    b = np.random.default_rng(1).uniform(-1, 1, (50, n))
    x, info = la.solve(A, b, device=device)
    assert x.shape == b.shape and info.shape == (50,)
    assert (info == 0).all()
    assert np.allclose(x, np.linalg.solve(A, b[..., None])[..., 0], rtol=1e-10, atol=1e-12)
    B = np.random.default_rng(2).uniform(-1, 1, (50, n, 3))  # several right-hand sides
    X, info, r = la.solve(A, B, device=device, full_output=True)
    assert X.shape == B.shape and (info == 0).all() and r.solved == 50 and r.device == device
    assert np.allclose(X, np.linalg.solve(A, B), rtol=1e-10, atol=1e-12)
    assert (r.backward_error <= 1e-13).all()


@pytest.mark.parametrize("device", _devices())
def test_statuses_inside_a_batch(device):
    A = _batch(6, 5, 3, spd=True)
    b = np.ones((6, 5))
    A[1][:, 2] = 0                     # singular: column 3
    A[2][0, 1] = A[2][1, 0] = 5.0      # symmetric, positive diagonal, indefinite
    A[3][1, 2] = np.nan                # A not finite
    b[4][3] = np.inf                   # b not finite
    keep = A.copy(), b.copy()
    x, info, r = la.solve(A, b, device=device, full_output=True)
    assert np.array_equal(A, keep[0], equal_nan=True) and np.array_equal(b, keep[1])  # nothing the caller passed is written
    assert info[0] == 0 and info[5] == 0 and info[2] == 0      # LU solves the indefinite member
    assert 0 < info[1] <= 3 and info[3] == -1 and info[4] == -1
    assert np.isnan(x[1]).all() and np.isnan(x[3]).all() and np.isnan(x[4]).all()
    assert not r.cholesky[2] and r.cholesky[0]
    assert "system 1" in r.message and "column" in r.message
    _, info_c = la.solve(A, b, device=device, direct_factorization="cholesky")
    assert info_c[2] > 0                                        # not positive definite
    _, info_l = la.solve(A, b, device=device, direct_factorization="lu")
    assert info_l[2] == 0 and info_l[0] == 0


def test_batch_refusals():
    A = _batch(4, 3, 4)
    b = np.ones((4, 3))
    with pytest.raises(la.InvalidArgument, match="method must be 'auto' or 'direct'"):
        la.solve(A, b, method="cg", device="cpu")
    with pytest.raises(la.InvalidArgument, match="rtol does not apply to a batch"):
        la.solve(A, b, rtol=1e-3, device="cpu")
    with pytest.raises(la.InvalidArgument, match="precond, restart do not apply"):
        la.solve(A, b, precond="jacobi", restart=5, device="cpu")
    with pytest.raises(la.InvalidArgument, match=r"b must have shape \(4, 3\) or \(4, 3, k\)"):
        la.solve(A, np.ones((4, 2)), device="cpu")
    with pytest.raises(la.InvalidArgument, match="square matrices"):
        la.solve(np.ones((4, 3, 2)), b, device="cpu")
    with pytest.raises(la.InvalidArgument, match="direct_factorization"):
        la.solve(A, b, direct_factorization="qr", device="cpu")


def test_float32_batch_and_variable_dtype():
    A = _batch(20, 16, 5).astype(np.float32)
    b = np.ones((20, 16), dtype=np.float32)
    x, info = la.solve(A, b, device="cpu")
    assert x.dtype == np.float32 and (info == 0).all()
    assert np.allclose(x, np.linalg.solve(A.astype(np.float64), b[..., None].astype(np.float64))[..., 0], rtol=1e-4)


@pytest.mark.skipif(not la.cuda_available(), reason="no GPU: " + la.cuda_status())
def test_cupy_batch_in_place_on_its_gpu():
    cupy = pytest.importorskip("cupy")
    A = _batch(1000, 8, 6)
    b = np.random.default_rng(3).uniform(-1, 1, (1000, 8))
    x, info = la.solve(cupy.asarray(A), cupy.asarray(b))
    assert isinstance(x, cupy.ndarray) and (np.asarray(info) == 0).all()
    assert np.allclose(cupy.asnumpy(x), np.linalg.solve(A, b[..., None])[..., 0], rtol=1e-10, atol=1e-12)
