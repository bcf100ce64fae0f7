// The direct method for complex systems on the GPU (issue 69; <la/solvers/complex_direct.hpp>):
// A's dense form (at most complex_dense_rows rows) factored by dense_cholesky_device where A is
// Hermitian with a positive real diagonal and its pivots stay positive, else by dense_lu_device
// (complex_dense.cu); each solve refined against the sparse A with the GPU's complex SpMV
// (detail::refine's rule, classical steps).
#include <algorithm>
#include <chrono>
#include <complex>
#include <string>
#include <vector>

#include <la/detail/device_complex.cuh>
#include <la/detail/instantiate.hpp>
#include <la/grid.cuh>
#include <la/kernels/spmv/spmv.hpp>
#include <la/solvers/complex_direct.hpp>
#include <la/solvers/detail/complex_common.hpp>
#include <la/solvers/detail/complex_direct_common.hpp>
#include <la/solvers/detail/refinement.hpp>

namespace la {
namespace complex_dense_detail {

using C = detail::dcomplex<double>;

/// x += d (refinement's correction).
__global__ void add_into(C* x, const C* d, long long n) {
  LA_GRID_STRIDE(i, n) x[i] += d[i];
}

/// The dense column-major form of a CSR matrix (duplicates added).
template <typename O>
__global__ void scatter_dense(csr_view<const C, O> s, C* a, long long lda) {
  LA_GRID_STRIDE(i, s.rows) {
    for (O k = s.row_ptr[i]; k < s.row_ptr[i + 1]; ++k) a[i + static_cast<long long>(s.col_idx[k]) * lda] += s.values[k];
  }
}


}  // namespace complex_dense_detail

namespace complex_direct_detail {

/// The GPU's kept factors: A's dense form by dense_lu_device, A on the device for the residuals.
template <typename O>
struct device_backend final : direct_backend<O> {
  context& ctx;
  cg_options o;
  index_t n;
  device_csr<z, O> da;
  device_buffer<z> dense;
  device_buffer<index_t> piv;  // empty: Cholesky's L in dense
  spmv_plan<z> plan;

  device_backend(context& c, const csr_matrix<z, O>& a, const cg_options& o_, device_csr<z, O> d, device_buffer<z> f,
                 device_buffer<index_t> p)
      : ctx(c), o(o_), n(a.rows()), da(std::move(d)), dense(std::move(f)), piv(std::move(p)), plan(c, spmv_view(da)) {}

  /// x (device) = the factors' solution in place.
  void factors_solve(z* x) {
    if (piv.size() == 0) dense_cholesky_solve_device(ctx, dense.data(), n, n, x);
    else dense_lu_solve_device(ctx, dense.data(), n, n, piv.data(), x);
  }

  void solve(const std::vector<z>& b, std::vector<z>& x, solve_result& r, const input& in) override {
    using namespace complex_dense_detail;
    const auto t1 = std::chrono::steady_clock::now();
    const cudaStream_t s = ctx.stream();
    const auto db = to_device(ctx, b);
    device_vector<z> dx(ctx, n), dr(ctx, n);
    std::vector<z> res(static_cast<std::size_t>(n)), best;
    double be = 0, rel = 0;
    const auto measure = [&] {  // res = b - A x on the GPU, be and rel on the host
      LA_CUDA_TRY(cudaMemcpyAsync(dr.data(), db.data(), sizeof(z) * std::size_t(n), cudaMemcpyDeviceToDevice, s));
      plan.run(dx.data(), dr.data(), z(-1), z(1), s);
      res = to_host(ctx, dr);
      x = to_host(ctx, dx);
      measures(res, x, in, be, rel);
    };
    LA_CUDA_TRY(cudaMemcpyAsync(dx.data(), db.data(), sizeof(z) * std::size_t(n), cudaMemcpyDeviceToDevice, s));
    factors_solve(dx.data());
    measure();
    best = x;
    const int steps = detail::refine(
        classical_rule(o), be, rel,
        [&](bool, double& be_out, double& rel_out) {
          factors_solve(dr.data());  // dr: the residual measure() left
          add_into<<<detail::grid_for(n), 256, 0, s>>>(detail::device_ptr(dx.data()), detail::device_ptr(dr.data()), n);
          LA_CHECK_LAUNCH(s);
          measure();
          be_out = be, rel_out = rel;
        },
        [&] { best = x; },
        [&] {
          x = best;
          LA_CUDA_TRY(cudaMemcpyAsync(dx.data(), x.data(), sizeof(z) * x.size(), cudaMemcpyHostToDevice, s));
        });
    x = best;
    LA_CUDA_TRY(cudaMemcpyAsync(dx.data(), x.data(), sizeof(z) * x.size(), cudaMemcpyHostToDevice, s));
    measure();
    r.iterations = steps;
    r.iterate_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    verdict(r, x, rel, in, o,
            std::to_string(steps) + " refinement step" + (steps == 1 ? "" : "s") + ", backward error " + short_number(be));
  }
};

template <typename O>
std::unique_ptr<direct_backend<O>> factor_device(context& ctx, const csr_matrix<z, O>& a, const cg_options& o, solve_result& r,
                                                 const input&) {
  using namespace complex_dense_detail;
  const index_t n = a.rows();
  check_device_memory(ctx, double(n) * double(n) * sizeof(z), "the dense form of a complex matrix of " + std::to_string(n) + " rows");
  const cudaStream_t s = ctx.stream();
  auto da = to_device(ctx, a);
  device_buffer<z> dense = ctx.allocate<z>(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
  const auto fill = [&] {  // A's dense form
    LA_CUDA_TRY(cudaMemsetAsync(dense.data(), 0, sizeof(z) * dense.size(), s));
    if (n > 0) {
      scatter_dense<<<detail::grid_for(n), 256, 0, s>>>(detail::rebind_view<csr_view<const C, O>>(da.view()),
                                                        detail::device_ptr(dense.data()), n);
      LA_CHECK_LAUNCH(s);
    }
  };
  fill();
  // Hermitian A with a positive real diagonal: Cholesky first (half LU's work, no pivoting);
  // where a pivot is not positive (A indefinite), LU.
  bool hpd_diag = n > 0 && complex_krylov_detail::hermitian_problem(a).empty();
  for (index_t i = 0; i < n && hpd_diag; ++i) {
    z d(0);
    for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      if (a.col_idx()[k] == i) d += a.values()[k];
    hpd_diag = d.real() > 0 && d.imag() == 0;
  }
  if (hpd_diag) {
    if (dense_cholesky_device(ctx, dense.data(), n, n) == 0) {
      r.method = "direct (dense Cholesky), gpu";
      return std::make_unique<device_backend<O>>(ctx, a, o, std::move(da), std::move(dense), device_buffer<index_t>());
    }
    fill();
  }
  device_buffer<index_t> piv = ctx.allocate<index_t>(static_cast<std::size_t>(std::max<index_t>(n, 1)));
  const index_t zero_pivot = dense_lu_device(ctx, dense.data(), n, std::max<index_t>(n, 1), piv.data());
  if (zero_pivot) {
    r.status = solve_status::breakdown;
    r.message = "A is singular: column " + std::to_string(zero_pivot) + " has no nonzero pivot in partial pivoting's search";
    return nullptr;
  }
  return std::make_unique<device_backend<O>>(ctx, a, o, std::move(da), std::move(dense), std::move(piv));
}

template std::unique_ptr<direct_backend<std::int32_t>> factor_device<std::int32_t>(context&, const csr_matrix<z, std::int32_t>&,
                                                                                   const cg_options&, solve_result&, const input&);
template std::unique_ptr<direct_backend<std::int64_t>> factor_device<std::int64_t>(context&, const csr_matrix<z, std::int64_t>&,
                                                                                   const cg_options&, solve_result&, const input&);

}  // namespace complex_direct_detail

template <typename O>
solve_result solve_complex_direct_device(context& ctx, const csr_matrix<std::complex<double>, O>& a,
                                         const std::vector<std::complex<double>>& b, std::vector<std::complex<double>>& x,
                                         const cg_options& o) {
  return complex_direct<O>(&ctx, a, o).solve(b, x);
}

template solve_result solve_complex_direct_device<std::int32_t>(context&, const csr_matrix<std::complex<double>, std::int32_t>&,
                                                                const std::vector<std::complex<double>>&,
                                                                std::vector<std::complex<double>>&, const cg_options&);
template solve_result solve_complex_direct_device<std::int64_t>(context&, const csr_matrix<std::complex<double>, std::int64_t>&,
                                                                const std::vector<std::complex<double>>&,
                                                                std::vector<std::complex<double>>&, const cg_options&);

}  // namespace la
