#include <la/kernels/detail/vendor/cusparse_spgemm.hpp>

namespace la {

template <typename T>
device_csr<T, std::int32_t> cusparse_spgemm(vendor_handles& h, const device_csr<T, std::int32_t>& a,
                                            const device_csr<T, std::int32_t>& b) {
  context& ctx = h.ctx();
  cusparseHandle_t H = h.cusparse();
  const cudaDataType vt = sizeof(T) == 8 ? CUDA_R_64F : CUDA_R_32F;
  const auto i32 = CUSPARSE_INDEX_32I;
  const auto base = CUSPARSE_INDEX_BASE_ZERO;
  cusparseSpMatDescr_t da = nullptr, db = nullptr, dc = nullptr;
  cusparseSpGEMMDescr_t sp = nullptr;
  auto cp = ctx.allocate<std::int32_t>(static_cast<std::size_t>(a.rows()) + 1);
  device_buffer<index_t> ci;
  device_buffer<T> cv;
  const T alpha = 1, beta = 0;
  const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const auto alg = CUSPARSE_SPGEMM_DEFAULT;
  try {
    auto av = a.view();
    auto bv = b.view();
    LA_CUSPARSE_TRY(cusparseCreateCsr(&da, a.rows(), a.cols(), a.nnz(), const_cast<std::int32_t*>(av.row_ptr),
                                      const_cast<index_t*>(av.col_idx), const_cast<T*>(av.values), i32, i32, base, vt));
    LA_CUSPARSE_TRY(cusparseCreateCsr(&db, b.rows(), b.cols(), b.nnz(), const_cast<std::int32_t*>(bv.row_ptr),
                                      const_cast<index_t*>(bv.col_idx), const_cast<T*>(bv.values), i32, i32, base, vt));
    LA_CUSPARSE_TRY(cusparseCreateCsr(&dc, a.rows(), b.cols(), 0, cp.data(), nullptr, nullptr, i32, i32, base, vt));
    LA_CUSPARSE_TRY(cusparseSpGEMM_createDescr(&sp));
    std::size_t b1 = 0, b2 = 0;
    LA_CUSPARSE_TRY(cusparseSpGEMM_workEstimation(H, op, op, &alpha, da, db, &beta, dc, vt, alg, sp, &b1, nullptr));
    auto w1 = ctx.allocate<unsigned char>(b1);
    LA_CUSPARSE_TRY(cusparseSpGEMM_workEstimation(H, op, op, &alpha, da, db, &beta, dc, vt, alg, sp, &b1, w1.data()));
    LA_CUSPARSE_TRY(cusparseSpGEMM_compute(H, op, op, &alpha, da, db, &beta, dc, vt, alg, sp, &b2, nullptr));
    auto w2 = ctx.allocate<unsigned char>(b2);
    LA_CUSPARSE_TRY(cusparseSpGEMM_compute(H, op, op, &alpha, da, db, &beta, dc, vt, alg, sp, &b2, w2.data()));
    std::int64_t rows = 0, cols = 0, nnz = 0;
    LA_CUSPARSE_TRY(cusparseSpMatGetSize(dc, &rows, &cols, &nnz));
    ci = ctx.allocate<index_t>(static_cast<std::size_t>(nnz));
    cv = ctx.allocate<T>(static_cast<std::size_t>(nnz));
    LA_CUSPARSE_TRY(cusparseCsrSetPointers(dc, cp.data(), ci.data(), cv.data()));
    LA_CUSPARSE_TRY(cusparseSpGEMM_copy(H, op, op, &alpha, da, db, &beta, dc, vt, alg, sp));
    ctx.synchronize();
  } catch (...) {
    cusparseSpGEMM_destroyDescr(sp);
    cusparseDestroySpMat(da), cusparseDestroySpMat(db), cusparseDestroySpMat(dc);
    throw;
  }
  LA_CUSPARSE_TRY_NO_THROW(cusparseSpGEMM_destroyDescr(sp));
  LA_CUSPARSE_TRY_NO_THROW(cusparseDestroySpMat(da));
  LA_CUSPARSE_TRY_NO_THROW(cusparseDestroySpMat(db));
  LA_CUSPARSE_TRY_NO_THROW(cusparseDestroySpMat(dc));
  return device_csr<T, std::int32_t>(detail::trusted, a.rows(), b.cols(), std::move(cp), std::move(ci), std::move(cv));
}

template device_csr<float, std::int32_t> cusparse_spgemm(vendor_handles&, const device_csr<float, std::int32_t>&,
                                                         const device_csr<float, std::int32_t>&);
template device_csr<double, std::int32_t> cusparse_spgemm(vendor_handles&, const device_csr<double, std::int32_t>&,
                                                          const device_csr<double, std::int32_t>&);

}  // namespace la
