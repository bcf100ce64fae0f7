// Launchers of la's SpMV variants; registry.cu lists them with their properties. Not
// installed.
#pragma once

#include <la/detail/device_complex.cuh>
#include <la/kernels/spmv/spmv.hpp>

namespace la::spmv_detail {
#define LA_SPMV_LAUNCHER(name) \
  template <typename T>        \
  void name(const matrix_view<T>&, void*, const T*, T*, T, T, cudaStream_t);
LA_SPMV_LAUNCHER(run_coo_atomic)
LA_SPMV_LAUNCHER(run_coo_segmented)
LA_SPMV_LAUNCHER(run_thread_rows)  // csr_scalar, ell, jds, sell
LA_SPMV_LAUNCHER(run_csr_vector)
LA_SPMV_LAUNCHER(run_csr_balanced)
LA_SPMV_LAUNCHER(run_csc_atomic)
LA_SPMV_LAUNCHER(run_dense_gemv)
LA_SPMV_LAUNCHER(run_hyb)
#undef LA_SPMV_LAUNCHER

/// csr_balanced's workspace: its size, and the once-per-matrix preparation.
std::size_t csr_balanced_workspace_bytes(const spmv_problem& p, std::size_t value_bytes);
template <typename T>
void prepare_csr_balanced(const matrix_view<T>&, void* workspace, cudaStream_t);

/// The parts HYB runs: the ELL kernel (y = alpha*ELL*x + beta*y, every row written) and
/// the segmented COO kernel (y += alpha*COO*x, atomics).
template <typename T>
void launch_ell(const ell_view<const T>& a, const T* x, T* y, T alpha, T beta, cudaStream_t s);
template <typename T>
void launch_coo_accumulate(const coo_view<const T>& a, const T* x, T* y, T alpha, cudaStream_t s);

/// Explicit instantiations of a launcher for float and double, and for the complex values
/// as kernels compute with them (detail::dcomplex; registry.cu adapts std::complex to it).
#define LA_SPMV_INSTANTIATE_ONE(name, T) \
  template void name<T>(const matrix_view<T>&, void*, const T*, T*, T, T, cudaStream_t);
#define LA_SPMV_INSTANTIATE(name)                           \
  LA_SPMV_INSTANTIATE_ONE(name, float)                      \
  LA_SPMV_INSTANTIATE_ONE(name, double)                     \
  LA_SPMV_INSTANTIATE_ONE(name, detail::dcomplex<float>)    \
  LA_SPMV_INSTANTIATE_ONE(name, detail::dcomplex<double>)
/// The device value types kernels are built for, as an X-macro.
#define LA_SPMV_FOR_EACH_DEVICE_VALUE(M) M(float) M(double) M(detail::dcomplex<float>) M(detail::dcomplex<double>)
}  // namespace la::spmv_detail
