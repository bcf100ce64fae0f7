#include <la/kernels/detail/vendor/cusparse_spmv.hpp>

namespace la {
namespace {
template <typename T>
constexpr cudaDataType value_type() {
  return sizeof(T) == 8 ? CUDA_R_64F : CUDA_R_32F;
}
}  // namespace

const char* to_string(cusparse_spmv_alg a) noexcept {
  switch (a) {
    case cusparse_spmv_alg::csr_alg1: return "cusparse_csr_alg1";
    case cusparse_spmv_alg::csr_alg2: return "cusparse_csr_alg2";
    case cusparse_spmv_alg::coo: return "cusparse_coo";
    case cusparse_spmv_alg::csc: return "cusparse_csc";
    case cusparse_spmv_alg::sell: return "cusparse_sell";
  }
  return "?";
}

format format_of(cusparse_spmv_alg a) noexcept {
  switch (a) {
    case cusparse_spmv_alg::coo: return format::coo;
    case cusparse_spmv_alg::csc: return format::csc;
    case cusparse_spmv_alg::sell: return format::sell;
    default: return format::csr;
  }
}

template <typename T>
cusparse_spmv<T>::cusparse_spmv(vendor_handles& h, const matrix_view<T>& a, cusparse_spmv_alg alg, const T* x, T* y,
                                count_t entries)
    : h_(&h) {
  LA_EXPECTS(a.fmt == format_of(alg), std::string(to_string(alg)) + " runs on " + to_string(format_of(alg)) +
                                          ", not on " + to_string(a.fmt));
  if (a.wide) throw not_supported(std::string(to_string(alg)) + ": la's cuSPARSE peers take 32-bit offsets");
  const auto i32 = CUSPARSE_INDEX_32I;
  const auto base = CUSPARSE_INDEX_BASE_ZERO;
  try {
    switch (alg) {
      case cusparse_spmv_alg::csr_alg1:
      case cusparse_spmv_alg::csr_alg2:
        alg_ = alg == cusparse_spmv_alg::csr_alg1 ? CUSPARSE_SPMV_CSR_ALG1 : CUSPARSE_SPMV_CSR_ALG2;
        LA_CUSPARSE_TRY(cusparseCreateCsr(&a_, a.rows, a.cols, a.nnz, const_cast<std::int32_t*>(a.csr32.row_ptr),
                                          const_cast<index_t*>(a.csr32.col_idx), const_cast<T*>(a.csr32.values),
                                          i32, i32, base,
                                          value_type<T>()));
        break;
      case cusparse_spmv_alg::coo:
        alg_ = CUSPARSE_SPMV_COO_ALG1;
        LA_CUSPARSE_TRY(cusparseCreateCoo(&a_, a.rows, a.cols, a.nnz, const_cast<index_t*>(a.coo.row_idx),
                                          const_cast<index_t*>(a.coo.col_idx), const_cast<T*>(a.coo.values), i32,
                                          base, value_type<T>()));
        break;
      case cusparse_spmv_alg::csc:
        alg_ = CUSPARSE_SPMV_ALG_DEFAULT;
        LA_CUSPARSE_TRY(cusparseCreateCsc(&a_, a.rows, a.cols, a.nnz, const_cast<std::int32_t*>(a.csc32.col_ptr),
                                          const_cast<index_t*>(a.csc32.row_idx), const_cast<T*>(a.csc32.values), i32,
                                          i32, base, value_type<T>()));
        break;
      case cusparse_spmv_alg::sell: {
        const auto& s = a.sell32;
        LA_EXPECTS(s.sigma == 1, "cusparse_sell: cuSPARSE's sliced ELL has no row permutation (sigma must be 1)");
        alg_ = CUSPARSE_SPMV_SELL_ALG1;
        LA_EXPECTS(entries >= 0, "cusparse_sell: the matrix's nonzero count is needed (the view holds slots)");
        LA_CUSPARSE_TRY(cusparseCreateSlicedEll(&a_, a.rows, a.cols, entries, a.nnz, s.slice_height,
                                                const_cast<std::int32_t*>(s.slice_ptr), const_cast<index_t*>(s.col_idx),
                                                const_cast<T*>(s.values), i32, i32, base, value_type<T>()));
        break;
      }
    }
    LA_CUSPARSE_TRY(cusparseCreateDnVec(&x_, a.cols, const_cast<T*>(x), value_type<T>()));
    LA_CUSPARSE_TRY(cusparseCreateDnVec(&y_, a.rows, y, value_type<T>()));
    const T one = 1, zero = 0;
    std::size_t bytes = 0;
    LA_CUSPARSE_TRY(cusparseSpMV_bufferSize(h.cusparse(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a_, x_, &zero, y_,
                                            value_type<T>(), alg_, &bytes));
    work_ = h.ctx().allocate<unsigned char>(bytes);
    LA_CUSPARSE_TRY(cusparseSpMV_preprocess(h.cusparse(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a_, x_, &zero, y_,
                                            value_type<T>(), alg_, work_.data()));
  } catch (...) {
    release();
    throw;
  }
}

template <typename T>
void cusparse_spmv<T>::release() noexcept {
  if (y_) LA_CUSPARSE_TRY_NO_THROW(cusparseDestroyDnVec(y_));
  if (x_) LA_CUSPARSE_TRY_NO_THROW(cusparseDestroyDnVec(x_));
  if (a_) LA_CUSPARSE_TRY_NO_THROW(cusparseDestroySpMat(a_));
  y_ = x_ = nullptr;
  a_ = nullptr;
}

template <typename T>
void cusparse_spmv<T>::run(T alpha, T beta) {
  LA_CUSPARSE_TRY(cusparseSpMV(h_->cusparse(), CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a_, x_, &beta, y_,
                               value_type<T>(), alg_, work_.data()));
}

template class cusparse_spmv<float>;
template class cusparse_spmv<double>;

}  // namespace la
