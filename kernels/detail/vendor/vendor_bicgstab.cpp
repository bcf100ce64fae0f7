#include <la/kernels/detail/vendor/vendor_bicgstab.hpp>

#include <chrono>
#include <cmath>

#include <la/kernels/detail/vendor/cusparse_spmv.hpp>

// csrilu02 is deprecated in cuSPARSE; it is the vendor's only ILU(0), so the recipe uses it.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace la {

vendor_bicgstab_result vendor_bicgstab(vendor_handles& h, const csr_matrix<double, std::int32_t>& host_a,
                                       const device_vector<double>& b, device_vector<double>& x,
                                       const std::string& precond, std::int64_t max_iterations, double rtol) {
  using clock = std::chrono::steady_clock;
  context& ctx = h.ctx();
  cudaStream_t s = ctx.stream();
  const int n = host_a.rows();
  const int nnz = static_cast<int>(host_a.nnz());
  cusparseHandle_t sp = h.cusparse();
  cublasHandle_t cb = h.cublas();
  LA_CUBLAS_TRY(cublasSetPointerMode(cb, CUBLAS_POINTER_MODE_HOST));
  vendor_bicgstab_result res;
  const device_csr<double, std::int32_t> a = to_device(ctx, host_a);
  device_vector<double> r(ctx, n), r0(ctx, n), p(ctx, n), v(ctx, n), sv(ctx, n), t(ctx, n), ph(ctx, n), sh(ctx, n),
      y(ctx, n), dinv;
  ctx.synchronize();
  const auto t0 = clock::now();

  // ILU(0): factor a copy of A in place; L unit lower and U upper share its arrays.
  device_csr<double, std::int32_t> lu;
  cusparseSpMatDescr_t lm = nullptr, um = nullptr;
  cusparseSpSVDescr_t fwd = nullptr, bwd = nullptr;
  device_buffer<unsigned char> fbuf, bbuf;
  cusparseDnVecDescr_t vin = nullptr, vy = nullptr, vout = nullptr;
  const double one = 1;
  if (precond == "jacobi") {
    std::vector<double> d(static_cast<std::size_t>(n), 1.0);
    for (int i = 0; i < n; ++i)
      for (auto k = host_a.row_ptr()[i]; k < host_a.row_ptr()[i + 1]; ++k)
        if (host_a.col_idx()[k] == i && host_a.values()[k] != 0) d[i] = 1 / host_a.values()[k];
    dinv = to_device(ctx, d);
  } else if (precond == "ilu0") {
    lu = to_device(ctx, host_a);
    const auto lv = lu.view();
    cusparseMatDescr_t descr = nullptr;
    csrilu02Info_t info = nullptr;
    LA_CUSPARSE_TRY(cusparseCreateMatDescr(&descr));
    LA_CUSPARSE_TRY(cusparseSetMatType(descr, CUSPARSE_MATRIX_TYPE_GENERAL));
    LA_CUSPARSE_TRY(cusparseSetMatIndexBase(descr, CUSPARSE_INDEX_BASE_ZERO));
    LA_CUSPARSE_TRY(cusparseCreateCsrilu02Info(&info));
    int bytes = 0;
    LA_CUSPARSE_TRY(cusparseDcsrilu02_bufferSize(sp, n, nnz, descr, lv.values, lv.row_ptr, lv.col_idx, info, &bytes));
    auto buffer = ctx.allocate<unsigned char>(static_cast<std::size_t>(std::max(bytes, 1)));
    LA_CUSPARSE_TRY(cusparseDcsrilu02_analysis(sp, n, nnz, descr, lv.values, lv.row_ptr, lv.col_idx, info,
                                               CUSPARSE_SOLVE_POLICY_USE_LEVEL, buffer.data()));
    int pivot = -1;
    if (cusparseXcsrilu02_zeroPivot(sp, info, &pivot) == CUSPARSE_STATUS_ZERO_PIVOT) {
      res.why = "structural zero pivot (missing diagonal) at row " + std::to_string(pivot + 1);
    } else {
      LA_CUSPARSE_TRY(cusparseDcsrilu02(sp, n, nnz, descr, lv.values, lv.row_ptr, lv.col_idx, info,
                                        CUSPARSE_SOLVE_POLICY_USE_LEVEL, buffer.data()));
      if (cusparseXcsrilu02_zeroPivot(sp, info, &pivot) == CUSPARSE_STATUS_ZERO_PIVOT)
        res.why = "zero pivot at row " + std::to_string(pivot + 1);
    }
    cusparseDestroyCsrilu02Info(info);
    cusparseDestroyMatDescr(descr);
    if (!res.why.empty()) {
      res.factored = false;
      return res;
    }
    for (auto* m : {&lm, &um})
      LA_CUSPARSE_TRY(cusparseCreateCsr(m, n, n, nnz, lv.row_ptr, lv.col_idx, lv.values, CUSPARSE_INDEX_32I,
                                        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    cusparseFillMode_t lower = CUSPARSE_FILL_MODE_LOWER, upper = CUSPARSE_FILL_MODE_UPPER;
    cusparseDiagType_t unit = CUSPARSE_DIAG_TYPE_UNIT, non_unit = CUSPARSE_DIAG_TYPE_NON_UNIT;
    LA_CUSPARSE_TRY(cusparseSpMatSetAttribute(lm, CUSPARSE_SPMAT_FILL_MODE, &lower, sizeof(lower)));
    LA_CUSPARSE_TRY(cusparseSpMatSetAttribute(lm, CUSPARSE_SPMAT_DIAG_TYPE, &unit, sizeof(unit)));
    LA_CUSPARSE_TRY(cusparseSpMatSetAttribute(um, CUSPARSE_SPMAT_FILL_MODE, &upper, sizeof(upper)));
    LA_CUSPARSE_TRY(cusparseSpMatSetAttribute(um, CUSPARSE_SPMAT_DIAG_TYPE, &non_unit, sizeof(non_unit)));
    LA_CUSPARSE_TRY(cusparseCreateDnVec(&vin, n, p.data(), CUDA_R_64F));
    LA_CUSPARSE_TRY(cusparseCreateDnVec(&vy, n, y.data(), CUDA_R_64F));
    LA_CUSPARSE_TRY(cusparseCreateDnVec(&vout, n, ph.data(), CUDA_R_64F));
    LA_CUSPARSE_TRY(cusparseSpSV_createDescr(&fwd));
    LA_CUSPARSE_TRY(cusparseSpSV_createDescr(&bwd));
    std::size_t fb = 0, bb = 0;
    LA_CUSPARSE_TRY(cusparseSpSV_bufferSize(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, lm, vin, vy, CUDA_R_64F,
                                            CUSPARSE_SPSV_ALG_DEFAULT, fwd, &fb));
    LA_CUSPARSE_TRY(cusparseSpSV_bufferSize(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, um, vy, vout, CUDA_R_64F,
                                            CUSPARSE_SPSV_ALG_DEFAULT, bwd, &bb));
    fbuf = ctx.allocate<unsigned char>(std::max<std::size_t>(fb, 1));
    bbuf = ctx.allocate<unsigned char>(std::max<std::size_t>(bb, 1));
    LA_CUSPARSE_TRY(cusparseSpSV_analysis(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, lm, vin, vy, CUDA_R_64F,
                                          CUSPARSE_SPSV_ALG_DEFAULT, fwd, fbuf.data()));
    LA_CUSPARSE_TRY(cusparseSpSV_analysis(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, um, vy, vout, CUDA_R_64F,
                                          CUSPARSE_SPSV_ALG_DEFAULT, bwd, bbuf.data()));
  }
  // out = M^-1 in.
  auto precondition = [&](double* in, double* out) {
    if (precond == "jacobi") {
      LA_CUBLAS_TRY(cublasDdgmm(cb, CUBLAS_SIDE_LEFT, n, 1, in, n, dinv.data(), 1, out, n));
    } else if (precond == "ilu0") {
      LA_CUSPARSE_TRY(cusparseDnVecSetValues(vin, in));
      LA_CUSPARSE_TRY(cusparseDnVecSetValues(vout, out));
      LA_CUSPARSE_TRY(cusparseSpSV_solve(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, lm, vin, vy, CUDA_R_64F,
                                         CUSPARSE_SPSV_ALG_DEFAULT, fwd));
      LA_CUSPARSE_TRY(cusparseSpSV_solve(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, um, vy, vout, CUDA_R_64F,
                                         CUSPARSE_SPSV_ALG_DEFAULT, bwd));
    } else {
      LA_CUBLAS_TRY(cublasDcopy(cb, n, in, 1, out, 1));
    }
  };
  cusparse_spmv<double> av(h, spmv_view(a), cusparse_spmv_alg::csr_alg1, ph.data(), v.data());
  cusparse_spmv<double> as(h, spmv_view(a), cusparse_spmv_alg::csr_alg1, sh.data(), t.data());
  ctx.synchronize();
  res.setup_seconds = std::chrono::duration<double>(clock::now() - t0).count();

  const auto t1 = clock::now();
  LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, sizeof(double) * n, s));
  LA_CUDA_TRY(cudaMemsetAsync(p.data(), 0, sizeof(double) * n, s));
  LA_CUDA_TRY(cudaMemsetAsync(v.data(), 0, sizeof(double) * n, s));
  LA_CUBLAS_TRY(cublasDcopy(cb, n, b.data(), 1, r.data(), 1));
  LA_CUBLAS_TRY(cublasDcopy(cb, n, b.data(), 1, r0.data(), 1));
  double bnorm = 0;
  LA_CUBLAS_TRY(cublasDnrm2(cb, n, b.data(), 1, &bnorm));
  const double stop = rtol * bnorm;
  double rho = 1, rho_old = 1, alpha = 1, omega = 1, rnorm = bnorm;
  while (rnorm > stop && res.iterations < max_iterations) {
    LA_CUBLAS_TRY(cublasDdot(cb, n, r0.data(), 1, r.data(), 1, &rho));
    if (rho == 0) break;
    if (res.iterations > 0) {  // p = r + beta (p - omega v)
      const double beta = (rho / rho_old) * (alpha / omega), mo = -omega;
      LA_CUBLAS_TRY(cublasDaxpy(cb, n, &mo, v.data(), 1, p.data(), 1));
      LA_CUBLAS_TRY(cublasDscal(cb, n, &beta, p.data(), 1));
      LA_CUBLAS_TRY(cublasDaxpy(cb, n, &one, r.data(), 1, p.data(), 1));
    } else {
      LA_CUBLAS_TRY(cublasDcopy(cb, n, r.data(), 1, p.data(), 1));
    }
    precondition(p.data(), ph.data());
    av.run(1.0, 0.0);
    double rv = 0;
    LA_CUBLAS_TRY(cublasDdot(cb, n, r0.data(), 1, v.data(), 1, &rv));
    alpha = rho / rv;
    const double ma = -alpha;
    LA_CUBLAS_TRY(cublasDcopy(cb, n, r.data(), 1, sv.data(), 1));
    LA_CUBLAS_TRY(cublasDaxpy(cb, n, &ma, v.data(), 1, sv.data(), 1));
    LA_CUBLAS_TRY(cublasDaxpy(cb, n, &alpha, ph.data(), 1, x.data(), 1));
    ++res.iterations;
    double snorm = 0;
    LA_CUBLAS_TRY(cublasDnrm2(cb, n, sv.data(), 1, &snorm));
    if (snorm <= stop) {
      rnorm = snorm;
      break;
    }
    precondition(sv.data(), sh.data());
    as.run(1.0, 0.0);
    double ts = 0, tt = 0;
    LA_CUBLAS_TRY(cublasDdot(cb, n, t.data(), 1, sv.data(), 1, &ts));
    LA_CUBLAS_TRY(cublasDdot(cb, n, t.data(), 1, t.data(), 1, &tt));
    omega = tt > 0 ? ts / tt : 0;
    const double mo = -omega;
    LA_CUBLAS_TRY(cublasDaxpy(cb, n, &omega, sh.data(), 1, x.data(), 1));
    LA_CUBLAS_TRY(cublasDcopy(cb, n, sv.data(), 1, r.data(), 1));
    LA_CUBLAS_TRY(cublasDaxpy(cb, n, &mo, t.data(), 1, r.data(), 1));
    LA_CUBLAS_TRY(cublasDnrm2(cb, n, r.data(), 1, &rnorm));
    rho_old = rho;
    if (omega == 0 || !std::isfinite(rnorm)) break;
  }
  ctx.synchronize();
  res.iterate_seconds = std::chrono::duration<double>(clock::now() - t1).count();
  res.residual = bnorm > 0 ? rnorm / bnorm : 0;
  res.converged = rnorm <= stop;
  if (fwd) cusparseSpSV_destroyDescr(fwd);
  if (bwd) cusparseSpSV_destroyDescr(bwd);
  for (auto d : {vin, vy, vout})
    if (d) cusparseDestroyDnVec(d);
  for (auto m : {lm, um})
    if (m) cusparseDestroySpMat(m);
  return res;
}

}  // namespace la
