// The exact IC(0) and ILU(0) factorizations on the GPU (factorization::exact, the oracle of
// the sweeps in factored.cu): level by level on the device, a thread a row, in the order
// and with the steps of the host's ic0_attempt and ilu0_factor (in double).
#include <la/detail/instantiate.hpp>
#include <la/solvers/detail/precond_device.cuh>

namespace la {
namespace precond_detail {
namespace {

// ---- IC(0) ---------------------------------------------------------------------------------

/// The scaled, shifted lower triangle: v_ij = a_ij / sqrt(d_i d_j), 1 + shift on the diagonal.
template <typename T, typename O>
__global__ void ic0_init(csr_view<const T, O> low, const T* d, double shift, double* v) {
  LA_GRID_STRIDE(i, low.rows) {
    const double di = d[i];
    for (O k = low.row_ptr[i]; k < low.row_ptr[i + 1]; ++k) {
      const index_t j = low.col_idx[k];
      v[k] = j == i ? 1 + shift : static_cast<double>(low.values[k]) / sqrt(di * static_cast<double>(d[j]));
    }
  }
}

/// Row i of the IC(0) factor in place (its dependencies are on earlier levels): the same
/// steps, in the same order, as ic0_attempt (precond.hpp), in double.
template <typename O>
struct ic0_row {
  const O* rp;
  const index_t* ci;
  double* v;
  unsigned long long* bad;
  __device__ void operator()(index_t i, int) const {
    if (i < 0) return;
    const O diag = rp[i + 1] - 1;
    for (O k = rp[i]; k < diag; ++k) {
      const index_t j = ci[k];
      double s = v[k];
      O a = rp[i], b = rp[j];
      const O bend = rp[j + 1] - 1;
      while (a < k && b < bend) {
        const index_t ca = ci[a], cb = ci[b];
        if (ca == cb) s -= v[a++] * v[b++];
        else if (ca < cb) ++a;
        else ++b;
      }
      v[k] = s / v[bend];
    }
    double s = v[diag];
    for (O k = rp[i]; k < diag; ++k) s -= v[k] * v[k];
    if (!(s > 0) || !isfinite(s)) atomicMin(bad, static_cast<unsigned long long>(i)), s = 1;  // keep going: a flag decides
    v[diag] = sqrt(s);
  }
};

// ---- ILU(0) --------------------------------------------------------------------------------

/// Row i of ILU(0) in place (its dependencies are on earlier levels): ilu0_factor's steps
/// in double.
template <typename O>
struct ilu0_row {
  const O* rp;
  const index_t* ci;
  const O* diag;
  double* v;
  unsigned long long* bad;
  __device__ void operator()(index_t i, int) const {
    if (i < 0) return;
    const O end = rp[i + 1];
    for (O k = rp[i]; k < diag[i]; ++k) {
      const index_t j = ci[k];
      const double l = v[k] / v[diag[j]];
      v[k] = l;
      O a = k + 1, b = diag[j] + 1;
      const O bend = rp[j + 1];
      while (a < end && b < bend) {
        const index_t ca = ci[a], cb = ci[b];
        if (ca == cb) v[a++] -= l * v[b++];
        else if (ca < cb) ++a;
        else ++b;
      }
    }
    const double d = v[diag[i]];
    if (!(d != 0) || !isfinite(d)) atomicMin(bad, static_cast<unsigned long long>(i));
  }
};


}  // namespace

template <typename T, typename O>
double exact_ic0(context& ctx, device_csr<T, O>& l, double max_shift, int* attempts) {
  LA_EXPECTS(max_shift >= 0 && std::isfinite(max_shift), "ic0: the largest shift must be finite and non-negative");
  const index_t n = l.rows();
  cudaStream_t s = ctx.stream();
  level_plan forward;
  {
    // Levels from L's pattern (on the host: one copy of the pattern).
    std::vector<O> rp(static_cast<std::size_t>(n) + 1);
    std::vector<index_t> ci(static_cast<std::size_t>(l.nnz()));
    l.row_ptr().copy_to_host_async(rp.data(), rp.size());
    l.col_idx().copy_to_host_async(ci.data(), ci.size());
    ctx.synchronize();
    forward = level_plan(ctx, levels_of_lower(n, rp.data(), ci.data()));
  }
  auto d = ctx.allocate<T>(static_cast<std::size_t>(n));
  auto v = ctx.allocate<double>(static_cast<std::size_t>(l.nnz()));
  if (n > 0) {
    lower_diagonal<<<grid_for(n), block_threads, 0, s>>>(std::as_const(l).view(), d.data());
    LA_CHECK_LAUNCH(s);
  }
  *attempts = 0;
  unsigned long long row = no_row;
  for (double shift : ic0_shifts(max_shift)) {
    ++*attempts;
    if (n == 0) return shift;
    ic0_init<<<grid_for(n), block_threads, 0, s>>>(std::as_const(l).view(), d.data(), shift, v.data());
    LA_CHECK_LAUNCH(s);
    auto bad = new_flag(ctx);
    forward.run<1>(ic0_row<O>{l.view().row_ptr, l.view().col_idx, v.data(), bad.data()}, s);
    row = read_flag(ctx, bad);
    if (row == no_row) {
      unscale_lower<<<grid_for(n), block_threads, 0, s>>>(l.view(), d.data(), v.data());
      LA_CHECK_LAUNCH(s);
      ctx.synchronize();
      return shift;
    }
  }
  throw invalid_argument(detail::ic0_no_shift_message(static_cast<long long>(row), max_shift));
}
#define LA_INSTANTIATE(T, O) template double exact_ic0<T, O>(context&, device_csr<T, O>&, double, int*);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

template <typename T, typename O>
void exact_ilu0(context& ctx, device_csr<T, O>& lu, const O* diag) {
  const index_t n = lu.rows();
  const count_t nnz = lu.nnz();
  if (nnz == 0) return;
  cudaStream_t s = ctx.stream();
  level_plan forward;
  {
    std::vector<O> rp(static_cast<std::size_t>(n) + 1);
    std::vector<index_t> ci(static_cast<std::size_t>(nnz));
    lu.row_ptr().copy_to_host_async(rp.data(), rp.size());
    lu.col_idx().copy_to_host_async(ci.data(), ci.size());
    ctx.synchronize();
    forward = level_plan(ctx, levels_of_lower(n, rp.data(), ci.data()));
  }
  auto v = ctx.allocate<double>(static_cast<std::size_t>(nnz));
  widen<<<grid_for(nnz), block_threads, 0, s>>>(lu.values().data(), nnz, v.data());
  LA_CHECK_LAUNCH(s);
  auto bad = new_flag(ctx);
  forward.run<1>(ilu0_row<O>{lu.view().row_ptr, lu.view().col_idx, diag, v.data(), bad.data()}, s);
  if (const unsigned long long row = read_flag(ctx, bad); row != no_row)
    throw invalid_argument(detail::ilu0_pivot_message(static_cast<long long>(row), 0));
  narrow_to<<<grid_for(nnz), block_threads, 0, s>>>(v.data(), nnz, lu.values().data());
  LA_CHECK_LAUNCH(s);
  ctx.synchronize();
}
#define LA_INSTANTIATE(T, O) template void exact_ilu0<T, O>(context&, device_csr<T, O>&, const O*);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace precond_detail
}  // namespace la
