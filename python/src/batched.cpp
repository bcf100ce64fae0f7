// la.solve on a batch of dense systems (python/la/__init__.py's batched path): A of shape
// (batch, n, n) and B of shape (batch, n, k), numpy (solved on the host's threads, or copied to
// the GPU) or CuPy (used in place on their GPU), by la::batched_dense_solver; X over B. Each
// system's status and backward error come back as lists.
#include <chrono>
#include <cmath>

#include <la/solvers/batched_dense.hpp>

#include "binding.hpp"

namespace la::pybind_detail {
namespace {

struct batched_out {
  std::vector<int> info;
  std::vector<double> backward_error;
  std::vector<unsigned char> cholesky;
  double factor_seconds = 0, solve_seconds = 0;
  py::dict dict() const {
    py::dict d;
    d["info"] = info, d["backward_error"] = backward_error;
    d["cholesky"] = std::vector<int>(cholesky.begin(), cholesky.end());
    d["factor_seconds"] = factor_seconds, d["solve_seconds"] = solve_seconds;
    return d;
  }
};

template <typename T>
batched_out report(batched_dense_solver<T>& s, T* b, index_t k) {
  batched_out o;
  o.factor_seconds = s.factor_seconds();
  const auto t1 = clock_type::now();
  const batched_dense_report r = s.solve(b, k);
  o.solve_seconds = since(t1);
  o.info = r.info, o.backward_error = r.backward_error, o.cholesky = s.cholesky();
  return o;
}

/// The GPU from device pointers (CuPy): A count x n x n and B count x n x k, packed; X over B.
template <typename T>
batched_out solve_gpu(std::uintptr_t a, std::uintptr_t b, std::int64_t count, std::int64_t n, std::int64_t k, int device,
                      batched_dense_options o) {
  context ctx(device);
  ctx.synchronize();
  batched_dense_solver<T> s(ctx, static_cast<index_t>(count), static_cast<index_t>(n), reinterpret_cast<const T*>(a), o);
  batched_out r = report(s, reinterpret_cast<T*>(b), static_cast<index_t>(k));
  ctx.synchronize();
  return r;
}

/// The GPU from numpy arrays: copied there and back.
template <typename T>
batched_out solve_gpu_from_host(const T* a, T* b, std::int64_t count, std::int64_t n, std::int64_t k, batched_dense_options o) {
  context ctx;
  const auto na = static_cast<std::size_t>(count * n * n), nb = static_cast<std::size_t>(count * n * k);
  check_device_memory(ctx, double(na + nb) * sizeof(T), "the batch's copy of A and B");
  auto da = ctx.allocate<T>(std::max<std::size_t>(na, 1)), db = ctx.allocate<T>(std::max<std::size_t>(nb, 1));
  if (na > 0) LA_CUDA_TRY(cudaMemcpyAsync(da.data(), a, sizeof(T) * na, cudaMemcpyHostToDevice, ctx.stream()));
  if (nb > 0) LA_CUDA_TRY(cudaMemcpyAsync(db.data(), b, sizeof(T) * nb, cudaMemcpyHostToDevice, ctx.stream()));
  copies += 2;
  batched_dense_solver<T> s(ctx, static_cast<index_t>(count), static_cast<index_t>(n), da.data(), o);
  batched_out r = report(s, db.data(), static_cast<index_t>(k));
  if (nb > 0) LA_CUDA_TRY(cudaMemcpyAsync(b, db.data(), sizeof(T) * nb, cudaMemcpyDeviceToHost, ctx.stream()));
  ctx.synchronize();
  copies += 1;
  return r;
}

template <typename T>
batched_out solve_host(const T* a, T* b, std::int64_t count, std::int64_t n, std::int64_t k, batched_dense_options o) {
  batched_dense_solver<T> s(static_cast<index_t>(count), static_cast<index_t>(n), a, o);
  return report(s, b, static_cast<index_t>(k));
}

/// f(a, b, count, n, k) without the GIL on numpy A (count, n, n) and B (count, n, k), both
/// C-contiguous of one type; B is written in place.
template <typename F>
py::dict on_numpy(const py::array& a, const py::array& b, F&& f) {
  if (a.ndim() != 3 || b.ndim() != 3 || a.shape(0) != b.shape(0) || a.shape(1) != a.shape(2) || b.shape(1) != a.shape(1))
    throw invalid_argument("batched solve: A must be (batch, n, n) and B (batch, n, k)");
  const std::int64_t count = a.shape(0), n = a.shape(1), k = b.shape(2);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    using arr = py::array_t<T, py::array::c_style>;
    if (!py::isinstance<arr>(a) || !py::isinstance<arr>(b))
      throw invalid_argument("batched solve: A and b must be C-contiguous arrays of one type, float32 or float64");
    const arr av = a.cast<arr>();
    arr bv = b.cast<arr>();
    const T* ap = av.data();
    T* bp = bv.mutable_data();
    batched_out r;
    {
      py::gil_scoped_release release;
      r = f(ap, bp, count, n, k);
    }
    return r.dict();
  };
  return a.dtype().is(py::dtype::of<float>()) ? run(float{}) : run(double{});
}
}  // namespace

void bind_batched(py::module_& mod) {
  mod.def(
      "batched_solve_gpu",
      [](std::uintptr_t a, std::uintptr_t b, std::int64_t count, std::int64_t n, std::int64_t k, char code, int device,
         const std::string& factorization) {
        batched_dense_options o;
        o.factorization = factorization_named(factorization);
        batched_out r;
        {
          py::gil_scoped_release release;
          r = code == 'f' ? solve_gpu<float>(a, b, count, n, k, device, o) : solve_gpu<double>(a, b, count, n, k, device, o);
        }
        return r.dict();
      },
      "A_i x_i = B_i for a batch on the GPU from device pointers (A count x n x n, B count x n x k; X over B).");
  mod.def(
      "batched_solve_numpy",
      [](py::array a, py::array b, bool gpu, const std::string& factorization) {
        batched_dense_options o;
        o.factorization = factorization_named(factorization);
        return on_numpy(a, b, [&](const auto* ap, auto* bp, std::int64_t count, std::int64_t n, std::int64_t k) {
          using T = std::remove_const_t<std::remove_pointer_t<decltype(ap)>>;
          return gpu ? solve_gpu_from_host<T>(ap, bp, count, n, k, o) : solve_host<T>(ap, bp, count, n, k, o);
        });
      },
      "A_i x_i = B_i for a batch of numpy arrays, on the GPU (copied there and back) or the host's threads; X over B.");
}

}  // namespace la::pybind_detail
