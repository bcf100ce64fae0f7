import os
import pathlib

import pytest

DATA = pathlib.Path(os.environ.get("LA_DATA_DIR", pathlib.Path(__file__).resolve().parents[2] / "data"))


@pytest.fixture
def data():
    return DATA


def gpu_reason():
    """Why the GPU tests skip, or None when they run."""
    import la
    if not la.cuda_available():
        return "no GPU: " + la.cuda_status()
    return None


def cupy_reason():
    r = gpu_reason()
    if r:
        return r
    try:
        import cupy  # noqa: F401
        import cupyx.scipy.sparse  # noqa: F401
    except ImportError:
        return "CuPy is not installed"
    return None
