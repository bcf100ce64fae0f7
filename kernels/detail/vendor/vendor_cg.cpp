#include <la/kernels/detail/vendor/vendor_cg.hpp>

#include <cmath>

#include <la/kernels/detail/vendor/cusparse_spmv.hpp>

namespace la {
namespace {
// The cuBLAS calls for float and double, by overload.
cublasStatus_t dot(cublasHandle_t h, int n, const float* x, const float* y, float* r) { return cublasSdot(h, n, x, 1, y, 1, r); }
cublasStatus_t dot(cublasHandle_t h, int n, const double* x, const double* y, double* r) { return cublasDdot(h, n, x, 1, y, 1, r); }
cublasStatus_t axpy(cublasHandle_t h, int n, const float* a, const float* x, float* y) { return cublasSaxpy(h, n, a, x, 1, y, 1); }
cublasStatus_t axpy(cublasHandle_t h, int n, const double* a, const double* x, double* y) { return cublasDaxpy(h, n, a, x, 1, y, 1); }
cublasStatus_t scal(cublasHandle_t h, int n, const float* a, float* x) { return cublasSscal(h, n, a, x, 1); }
cublasStatus_t scal(cublasHandle_t h, int n, const double* a, double* x) { return cublasDscal(h, n, a, x, 1); }
cublasStatus_t copy(cublasHandle_t h, int n, const float* x, float* y) { return cublasScopy(h, n, x, 1, y, 1); }
cublasStatus_t copy(cublasHandle_t h, int n, const double* x, double* y) { return cublasDcopy(h, n, x, 1, y, 1); }
}  // namespace

template <typename T>
vendor_cg_result vendor_cg(vendor_handles& h, const device_csr<T, std::int32_t>& a, const device_vector<T>& b,
                           device_vector<T>& x, std::int64_t max_iterations, double rtol) {
  context& ctx = h.ctx();
  const int n = a.rows();
  cublasHandle_t cb = h.cublas();
  LA_CUBLAS_TRY(cublasSetPointerMode(cb, CUBLAS_POINTER_MODE_HOST));
  device_vector<T> r(ctx, n), p(ctx, n), ap(ctx, n);
  cusparse_spmv<T> spmv(h, spmv_view(a), cusparse_spmv_alg::csr_alg1, p.data(), ap.data());
  // x = 0, so r = b.
  LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, sizeof(T) * n, ctx.stream()));
  LA_CUBLAS_TRY(copy(cb, n, b.data(), r.data()));
  T r1, r0 = 0, pap;
  LA_CUBLAS_TRY(dot(cb, n, r.data(), r.data(), &r1));
  const double bnorm = std::sqrt(static_cast<double>(r1)), stop = rtol * bnorm;
  vendor_cg_result res;
  while (std::sqrt(static_cast<double>(r1)) > stop && res.iterations < max_iterations) {
    if (res.iterations > 0) {
      const T beta = r1 / r0, one = 1;
      LA_CUBLAS_TRY(scal(cb, n, &beta, p.data()));
      LA_CUBLAS_TRY(axpy(cb, n, &one, r.data(), p.data()));
    } else {
      LA_CUBLAS_TRY(copy(cb, n, r.data(), p.data()));
    }
    spmv.run(T(1), T(0));
    LA_CUBLAS_TRY(dot(cb, n, p.data(), ap.data(), &pap));
    const T alpha = r1 / pap, minus_alpha = -alpha;
    LA_CUBLAS_TRY(axpy(cb, n, &alpha, p.data(), x.data()));
    LA_CUBLAS_TRY(axpy(cb, n, &minus_alpha, ap.data(), r.data()));
    r0 = r1;
    LA_CUBLAS_TRY(dot(cb, n, r.data(), r.data(), &r1));
    ++res.iterations;
  }
  ctx.synchronize();
  res.residual = bnorm > 0 ? std::sqrt(static_cast<double>(r1)) / bnorm : 0;
  return res;
}

template vendor_cg_result vendor_cg<float>(vendor_handles&, const device_csr<float, std::int32_t>&,
                                           const device_vector<float>&, device_vector<float>&, std::int64_t, double);
template vendor_cg_result vendor_cg<double>(vendor_handles&, const device_csr<double, std::int32_t>&,
                                            const device_vector<double>&, device_vector<double>&, std::int64_t, double);

}  // namespace la
