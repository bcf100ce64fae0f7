// The extra SpMV variants of extra_spmv_variant.hpp: a plain thread-per-row CSR kernel,
// written here from scratch (no la kernel code), registered twice under two sets of
// properties.
#include "extra_spmv_variant.hpp"

#include <la/kernels/spmv/spmv.hpp>

namespace la::test {
namespace {
std::atomic<long long> runs{0};

template <typename T, typename O>
__global__ void rows_kernel(csr_view<const T, O> a, const T* x, T* y, T alpha, T beta) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < a.rows;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    T acc = T(0);
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) acc += a.values[k] * x[a.col_idx[k]];
    y[i] = beta == T(0) ? alpha * acc : alpha * acc + beta * y[i];
  }
}

template <typename T>
void run(const matrix_view<T>& a, void*, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  ++runs;
  if (a.rows == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<long long>((a.rows + 255) / 256, 65535));
  if (a.wide) rows_kernel<<<blocks, 256, 0, s>>>(a.csr64, x, y, alpha, beta);
  else rows_kernel<<<blocks, 256, 0, s>>>(a.csr32, x, y, alpha, beta);
  LA_CHECK_LAUNCH(s);
}

bool csr(const spmv_problem& p) { return p.fmt == format::csr && p.rows >= 0 && p.cols >= 0; }
bool csr_up_to_limit(const spmv_problem& p) { return csr(p) && p.rows <= extra_plain_row_limit; }
bool any_stats(const spmv_stats&) { return true; }
std::size_t no_workspace(const spmv_problem&) { return 0; }
template <typename T>
void no_prepare(const matrix_view<T>&, void*, cudaStream_t) {}

template <typename T>
spmv_variant<T> fused() {
  return {extra_fused, format::csr, true, row_walk::thread, nullptr, nullptr, csr, no_workspace, no_prepare<T>, run<T>};
}
template <typename T>
spmv_variant<T> plain() {
  return {extra_plain, format::csr, true, row_walk::none, nullptr, any_stats, csr_up_to_limit, no_workspace,
          no_prepare<T>, run<T>};
}
}  // namespace

bool add_extra_spmv_variants() {
  static const bool added = [] {
    add_spmv_variant(fused<float>(), fused<double>());
    add_spmv_variant(plain<float>(), plain<double>());
    return true;
  }();
  return added;
}

long long extra_spmv_runs() { return runs.load(); }

}  // namespace la::test
