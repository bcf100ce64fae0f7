#include <la/kernels/detail/vendor/vendor_pcg.hpp>

#include <chrono>
#include <cmath>

#include <la/kernels/detail/vendor/cusparse_spmv.hpp>

// csric02 is deprecated in cuSPARSE; it is the vendor's only IC(0), so the recipe uses it.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace la {

vendor_pcg_result vendor_pcg_ic0(vendor_handles& h, const device_csr<double, std::int32_t>& a,
                                 const csr_matrix<double, std::int32_t>& lower, const device_vector<double>& b,
                                 device_vector<double>& x, std::int64_t max_iterations, double rtol) {
  using clock = std::chrono::steady_clock;
  context& ctx = h.ctx();
  cudaStream_t s = ctx.stream();
  const int n = a.rows();
  const int lnnz = static_cast<int>(lower.nnz());
  cusparseHandle_t sp = h.cusparse();
  cublasHandle_t cb = h.cublas();
  LA_CUBLAS_TRY(cublasSetPointerMode(cb, CUBLAS_POINTER_MODE_HOST));
  vendor_pcg_result res;
  device_csr<double, std::int32_t> l = to_device(ctx, lower);
  const auto lv = l.view();  // mutable: csric02 factors in place
  double* lval = lv.values;
  std::int32_t* lrow = lv.row_ptr;
  index_t* lcol = lv.col_idx;
  ctx.synchronize();
  const auto t0 = clock::now();

  // Factor: L L^T = A on tril(A)'s pattern, in place.
  cusparseMatDescr_t descr = nullptr;
  csric02Info_t info = nullptr;
  LA_CUSPARSE_TRY(cusparseCreateMatDescr(&descr));
  LA_CUSPARSE_TRY(cusparseSetMatType(descr, CUSPARSE_MATRIX_TYPE_GENERAL));
  LA_CUSPARSE_TRY(cusparseSetMatIndexBase(descr, CUSPARSE_INDEX_BASE_ZERO));
  LA_CUSPARSE_TRY(cusparseCreateCsric02Info(&info));
  int bytes = 0;
  LA_CUSPARSE_TRY(cusparseDcsric02_bufferSize(sp, n, lnnz, descr, lval, lrow, lcol, info, &bytes));
  auto buffer = ctx.allocate<unsigned char>(static_cast<std::size_t>(std::max(bytes, 1)));
  LA_CUSPARSE_TRY(cusparseDcsric02_analysis(sp, n, lnnz, descr, lval, lrow, lcol, info,
                                            CUSPARSE_SOLVE_POLICY_USE_LEVEL, buffer.data()));
  int pivot = -1;
  if (cusparseXcsric02_zeroPivot(sp, info, &pivot) == CUSPARSE_STATUS_ZERO_PIVOT) {
    res.why = "structural zero pivot at row " + std::to_string(pivot + 1);
  } else {
    LA_CUSPARSE_TRY(cusparseDcsric02(sp, n, lnnz, descr, lval, lrow, lcol, info, CUSPARSE_SOLVE_POLICY_USE_LEVEL,
                                     buffer.data()));
    if (cusparseXcsric02_zeroPivot(sp, info, &pivot) == CUSPARSE_STATUS_ZERO_PIVOT)
      res.why = "zero pivot at row " + std::to_string(pivot + 1);
  }
  cusparseDestroyCsric02Info(info);
  cusparseDestroyMatDescr(descr);
  if (res.why.empty()) {
    // A negative pivot is not reported: it leaves NaN in L.
    std::vector<double> hv(static_cast<std::size_t>(lnnz));
    l.values().copy_to_host_async(hv.data(), hv.size());
    ctx.synchronize();
    for (std::size_t k = 0; k < hv.size() && res.why.empty(); ++k)
      if (!std::isfinite(hv[k])) res.why = "a pivot is not positive (NaN in the factor)";
  }
  if (!res.why.empty()) return res;
  res.factored = true;

  // The two triangular solves: analysis once.
  device_vector<double> r(ctx, n), z(ctx, n), y(ctx, n), p(ctx, n), q(ctx, n);
  cusparseSpMatDescr_t lm = nullptr;
  LA_CUSPARSE_TRY(cusparseCreateCsr(&lm, n, n, lnnz, lrow, lcol, lval, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                    CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  cusparseFillMode_t fill = CUSPARSE_FILL_MODE_LOWER;
  cusparseDiagType_t diag = CUSPARSE_DIAG_TYPE_NON_UNIT;
  LA_CUSPARSE_TRY(cusparseSpMatSetAttribute(lm, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof(fill)));
  LA_CUSPARSE_TRY(cusparseSpMatSetAttribute(lm, CUSPARSE_SPMAT_DIAG_TYPE, &diag, sizeof(diag)));
  cusparseDnVecDescr_t vr, vy, vz;
  LA_CUSPARSE_TRY(cusparseCreateDnVec(&vr, n, r.data(), CUDA_R_64F));
  LA_CUSPARSE_TRY(cusparseCreateDnVec(&vy, n, y.data(), CUDA_R_64F));
  LA_CUSPARSE_TRY(cusparseCreateDnVec(&vz, n, z.data(), CUDA_R_64F));
  cusparseSpSVDescr_t fwd, bwd;
  LA_CUSPARSE_TRY(cusparseSpSV_createDescr(&fwd));
  LA_CUSPARSE_TRY(cusparseSpSV_createDescr(&bwd));
  const double one = 1;
  std::size_t fb = 0, bb = 0;
  LA_CUSPARSE_TRY(cusparseSpSV_bufferSize(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, lm, vr, vy, CUDA_R_64F,
                                          CUSPARSE_SPSV_ALG_DEFAULT, fwd, &fb));
  LA_CUSPARSE_TRY(cusparseSpSV_bufferSize(sp, CUSPARSE_OPERATION_TRANSPOSE, &one, lm, vy, vz, CUDA_R_64F,
                                          CUSPARSE_SPSV_ALG_DEFAULT, bwd, &bb));
  auto fbuf = ctx.allocate<unsigned char>(std::max<std::size_t>(fb, 1));
  auto bbuf = ctx.allocate<unsigned char>(std::max<std::size_t>(bb, 1));
  LA_CUSPARSE_TRY(cusparseSpSV_analysis(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, lm, vr, vy, CUDA_R_64F,
                                        CUSPARSE_SPSV_ALG_DEFAULT, fwd, fbuf.data()));
  LA_CUSPARSE_TRY(cusparseSpSV_analysis(sp, CUSPARSE_OPERATION_TRANSPOSE, &one, lm, vy, vz, CUDA_R_64F,
                                        CUSPARSE_SPSV_ALG_DEFAULT, bwd, bbuf.data()));
  auto precondition = [&] {  // z = L^-T L^-1 r
    LA_CUSPARSE_TRY(cusparseSpSV_solve(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, lm, vr, vy, CUDA_R_64F,
                                       CUSPARSE_SPSV_ALG_DEFAULT, fwd));
    LA_CUSPARSE_TRY(cusparseSpSV_solve(sp, CUSPARSE_OPERATION_TRANSPOSE, &one, lm, vy, vz, CUDA_R_64F,
                                       CUSPARSE_SPSV_ALG_DEFAULT, bwd));
  };
  cusparse_spmv<double> spmv(h, spmv_view(a), cusparse_spmv_alg::csr_alg1, p.data(), q.data());
  ctx.synchronize();
  res.setup_seconds = std::chrono::duration<double>(clock::now() - t0).count();

  const auto t1 = clock::now();
  LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, sizeof(double) * n, s));
  LA_CUBLAS_TRY(cublasDcopy(cb, n, b.data(), 1, r.data(), 1));
  double rr = 0, rz = 0, pq = 0;
  LA_CUBLAS_TRY(cublasDdot(cb, n, r.data(), 1, r.data(), 1, &rr));
  const double bnorm = std::sqrt(rr), stop = rtol * bnorm;
  precondition();
  LA_CUBLAS_TRY(cublasDdot(cb, n, r.data(), 1, z.data(), 1, &rz));
  LA_CUBLAS_TRY(cublasDcopy(cb, n, z.data(), 1, p.data(), 1));
  while (std::sqrt(rr) > stop && res.iterations < max_iterations) {
    spmv.run(1.0, 0.0);
    LA_CUBLAS_TRY(cublasDdot(cb, n, p.data(), 1, q.data(), 1, &pq));
    const double alpha = rz / pq, minus_alpha = -alpha;
    LA_CUBLAS_TRY(cublasDaxpy(cb, n, &alpha, p.data(), 1, x.data(), 1));
    LA_CUBLAS_TRY(cublasDaxpy(cb, n, &minus_alpha, q.data(), 1, r.data(), 1));
    LA_CUBLAS_TRY(cublasDdot(cb, n, r.data(), 1, r.data(), 1, &rr));
    ++res.iterations;
    if (std::sqrt(rr) <= stop) break;
    precondition();
    double rz_new = 0;
    LA_CUBLAS_TRY(cublasDdot(cb, n, r.data(), 1, z.data(), 1, &rz_new));
    const double beta = rz_new / rz;
    rz = rz_new;
    LA_CUBLAS_TRY(cublasDscal(cb, n, &beta, p.data(), 1));
    LA_CUBLAS_TRY(cublasDaxpy(cb, n, &one, z.data(), 1, p.data(), 1));
  }
  ctx.synchronize();
  res.iterate_seconds = std::chrono::duration<double>(clock::now() - t1).count();
  res.residual = bnorm > 0 ? std::sqrt(rr) / bnorm : 0;
  cusparseSpSV_destroyDescr(fwd);
  cusparseSpSV_destroyDescr(bwd);
  cusparseDestroyDnVec(vr);
  cusparseDestroyDnVec(vy);
  cusparseDestroyDnVec(vz);
  cusparseDestroySpMat(lm);
  return res;
}

}  // namespace la
