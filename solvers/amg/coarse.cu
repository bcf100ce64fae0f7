// The coarsest AMG level's dense inverse on the GPU (detail/coarse.cuh): the operator densely
// as [A | I] (n x 2n, double), its LU with partial pivoting by la::dense_solver (on the GEMM
// ladder) solved for the n right-hand sides of I, and A^-1 taken back in the value type. The
// cycle's coarse solve is then one product (kernels.cuh's dense_solve).
#include <la/solvers/amg/detail/coarse.cuh>
#include <la/solvers/dense_solver.hpp>
#include <la/solvers/detail/precond_device.cuh>

namespace la::precond_detail::amg_detail {
namespace {

using W = count_t;

/// The n x n operator densely, as [A | I] (n x 2n, double): the coarse inverse's input.
template <typename T>
__global__ void densify(csr_view<const T, W> a, double* m) {
  const index_t n = a.rows;
  LA_GRID_STRIDE(e, static_cast<long long>(n) * 2 * n) m[e] = (e % (2 * n)) == n + e / (2 * n) ? 1.0 : 0.0;
}
template <typename T>
__global__ void scatter_dense(csr_view<const T, W> a, double* m) {
  const index_t n = a.rows;
  LA_GRID_STRIDE(i, n)
  for (W k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) m[i * 2 * n + a.col_idx[k]] = a.values[k];
}
template <typename T>
__global__ void take_inverse(const double* m, index_t n, T* inv) {
  LA_GRID_STRIDE(e, static_cast<long long>(n) * n) inv[e] = static_cast<T>(m[(e / n) * 2 * n + n + e % n]);
}

}  // namespace

template <typename T>
device_buffer<T> coarse_inverse(context& ctx, const device_csr<T, W>& a) {
  const index_t n = a.rows();
  cudaStream_t s = ctx.stream();
  auto m = ctx.allocate<double>(static_cast<std::size_t>(n) * 2 * n);
  const auto av = a.view();
  densify<<<grid_for(static_cast<long long>(n) * 2 * n), block_threads, 0, s>>>(av, m.data());
  scatter_dense<<<grid_for(n), block_threads, 0, s>>>(av, m.data());
  // A^-1 = A^-1 I, the n right-hand sides the identity of [A | I].
  {
    const device_dense<double> av_dense(n, n, 2 * n, device_buffer<double>::borrow(m.data(), static_cast<std::size_t>(n) * 2 * n, ctx.device()));
    dense_solver_options dopt;
    dopt.factorization = dense_factorization::lu;
    dense_solver<double> lu(ctx, av_dense, dopt);
    LA_EXPECTS(lu.ok(), "amg: the coarsest operator (" + std::to_string(n) + " rows) is singular (no pivot in column " +
                            std::to_string(lu.status().bad_column) + "), so the V-cycle has no coarse solve");
    device_dense<double> x(ctx, n, n);
    LA_CUDA_TRY(cudaMemcpy2DAsync(x.view().values, sizeof(double) * n, m.data() + n, sizeof(double) * 2 * n,
                                  sizeof(double) * n, n, cudaMemcpyDeviceToDevice, s));
    lu.solve(x);
    LA_CUDA_TRY(cudaMemcpy2DAsync(m.data() + n, sizeof(double) * 2 * n, x.view().values, sizeof(double) * n,
                                  sizeof(double) * n, n, cudaMemcpyDeviceToDevice, s));
  }
  auto inverse = ctx.allocate<T>(static_cast<std::size_t>(n) * n);
  take_inverse<<<grid_for(static_cast<long long>(n) * n), block_threads, 0, s>>>(m.data(), n, inverse.data());
  LA_CUDA_TRY(cudaGetLastError());
  ctx.synchronize();
  return inverse;
}

#define LA_INSTANTIATE(T) template device_buffer<T> coarse_inverse<T>(context&, const device_csr<T, W>&);
LA_FOR_EACH_VALUE(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace la::precond_detail::amg_detail
