// IC(0) and ILU(0) on the GPU (device_precond.hpp): factored level by level on the device
// (a thread a row), applied as two level-scheduled triangular solves.
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

/// D^1/2 L into the factor's values (T).
template <typename T, typename O>
__global__ void ic0_finish(csr_view<T, O> l, const T* d, const double* v) {
  LA_GRID_STRIDE(i, l.rows) {
    const double s = sqrt(static_cast<double>(d[i]));
    for (O k = l.row_ptr[i]; k < l.row_ptr[i + 1]; ++k) l.values[k] = static_cast<T>(v[k] * s);
  }
}

template <typename T, typename O>
__global__ void lower_diagonal(csr_view<const T, O> low, T* d) {
  LA_GRID_STRIDE(i, low.rows) d[i] = low.values[low.row_ptr[i + 1] - 1];
}

/// One row of a triangular solve by a group of W lanes, the off-diagonal sum strided over
/// the lanes in a fixed order. The diagonal is last (L) or first (U = L^T) in the row, or at
/// diag[i] when the rows hold both triangles (ILU(0)'s L + U: the lower solve then has a unit
/// diagonal).
template <int W, typename T, typename O, bool Lower>
struct solve_row {
  csr_view<const T, O> m;
  const T* b;
  T* x;
  const O* diag = nullptr;
  bool unit = false;
  __device__ void operator()(index_t i, int lane) const {
    T s = T(0);
    O d = 0;
    if (i >= 0) {
      const O first = m.row_ptr[i], last = m.row_ptr[i + 1];
      d = diag ? diag[i] : Lower ? last - 1 : first;
      for (O k = (Lower ? first : d + 1) + lane; k < (Lower ? d : last); k += W) s += m.values[k] * x[m.col_idx[k]];
    }
    s = walk::group_sum<W>(s);
    if (i >= 0 && lane == 0) x[i] = unit ? b[i] - s : (b[i] - s) / m.values[d];
  }
};

/// The lanes a row of a triangular solve, by the mean off-diagonal entries of a triangle's
/// row: a thread for short rows (a level's rows then fit one round of the block), a group
/// when the row's loads are worth spreading.
inline int solve_lanes(double off) { return off <= 3 ? 1 : off <= 12 ? 8 : 32; }

/// The two solves of a factored preconditioner with `lanes` lanes a row.
template <typename Lo, typename Up>
void run_solves(int lanes, const level_plan& forward, const level_plan& backward, const Lo& lo, const Up& up,
                cudaStream_t s) {
  if (lanes <= 1) forward.run<1>(lo.template with<1>(), s), backward.run<1>(up.template with<1>(), s);
  else if (lanes <= 8) forward.run<8>(lo.template with<8>(), s), backward.run<8>(up.template with<8>(), s);
  else forward.run<32>(lo.template with<32>(), s), backward.run<32>(up.template with<32>(), s);
}

/// A solve's arguments, made into solve_row for a lane count.
template <typename T, typename O, bool Lower>
struct solve_args {
  csr_view<const T, O> m;
  const T* b;
  T* x;
  const O* diag;
  bool unit;
  template <int W>
  solve_row<W, T, O, Lower> with() const { return {m, b, x, diag, unit}; }
};


// ---- ILU(0) --------------------------------------------------------------------------------

/// Position of each row's diagonal; the first row without one into *bad.
template <typename T, typename O>
__global__ void find_diagonal(csr_view<const T, O> a, O* diag, unsigned long long* bad) {
  LA_GRID_STRIDE(i, a.rows) {
    O d = -1;
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.col_idx[k] == i) d = k;
    diag[i] = d;
    if (d < 0) atomicMin(bad, static_cast<unsigned long long>(i));
  }
}

template <typename T>
__global__ void widen(const T* in, long long n, double* out) {
  LA_GRID_STRIDE(i, n) out[i] = in[i];
}
template <typename T>
__global__ void narrow_to(const double* in, long long n, T* out) {
  LA_GRID_STRIDE(i, n) out[i] = static_cast<T>(in[i]);
}

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


template <typename T, typename O>
struct ic0_impl final : device_preconditioner<T>::impl {
  device_csr<T, O> l;
  device_csc<T, O> lt;  // L^T, read as CSR: the diagonal first in each row
  level_plan forward, backward;
  mutable device_buffer<T> y;  // L^-1 r
  int lanes = 1;               // per row in the solves

  ic0_impl(context& ctx, const device_csr<T, O>& a, double max_shift) {
    LA_EXPECTS(max_shift >= 0 && std::isfinite(max_shift), "ic0: the largest shift must be finite and non-negative");
    const index_t n = a.rows();
    cudaStream_t s = ctx.stream();
    l = device_lower(ctx, a, "ic0");
    {
      // Levels from L's pattern (on the host: one copy of the pattern).
      std::vector<O> rp(static_cast<std::size_t>(n) + 1);
      std::vector<index_t> ci(static_cast<std::size_t>(l.nnz()));
      l.row_ptr().copy_to_host_async(rp.data(), rp.size());
      l.col_idx().copy_to_host_async(ci.data(), ci.size());
      ctx.synchronize();
      forward = level_plan(ctx, levels_of_lower(n, rp.data(), ci.data(), true));
      backward = level_plan(ctx, levels_of_lower(n, rp.data(), ci.data(), false));
    }
    auto d = ctx.allocate<T>(static_cast<std::size_t>(n));
    auto v = ctx.allocate<double>(static_cast<std::size_t>(l.nnz()));
    if (n > 0) {
      lower_diagonal<<<grid_for(n), block_threads, 0, s>>>(std::as_const(l).view(), d.data());
      LA_CHECK_LAUNCH(s);
    }
    int attempts = 0;
    double used = -1;
    unsigned long long row = no_row;
    for (double shift : ic0_shifts(max_shift)) {
      ++attempts;
      if (n == 0) {
        used = shift;
        break;
      }
      ic0_init<<<grid_for(n), block_threads, 0, s>>>(std::as_const(l).view(), d.data(), shift, v.data());
      LA_CHECK_LAUNCH(s);
      auto bad = new_flag(ctx);
      forward.run<1>(ic0_row<O>{l.view().row_ptr, l.view().col_idx, v.data(), bad.data()}, s);
      row = read_flag(ctx, bad);
      if (row == no_row) {
        used = shift;
        break;
      }
    }
    if (used < 0)
      throw invalid_argument(detail::ic0_no_shift_message(static_cast<long long>(row), max_shift));
    if (n > 0) {
      ic0_finish<<<grid_for(n), block_threads, 0, s>>>(l.view(), d.data(), v.data());
      LA_CHECK_LAUNCH(s);
    }
    lt = to_csc(ctx, l);
    y = ctx.allocate<T>(static_cast<std::size_t>(n));
    const double off = n ? double(l.nnz()) / n - 1 : 0;  // off-diagonal entries a row
    lanes = solve_lanes(off);
    ctx.synchronize();
    this->rep.kind = preconditioner::ic0;
    this->rep.shift = used;
    this->rep.detail = "shift " + short_number(used) + " (attempt " + std::to_string(attempts) + "), " +
                       std::to_string(l.nnz()) + " nonzeros in L, " + std::to_string(forward.levels()) + " + " +
                       std::to_string(backward.levels()) + " levels in " +
                       std::to_string(forward.launches() + backward.launches()) + " launches a solve pair, " +
                       std::to_string(lanes) + (lanes == 1 ? " lane" : " lanes") + " a row";
    this->rep.bytes = 2.0 * l.nnz() * (sizeof(T) + sizeof(index_t)) + 2.0 * (n + 1) * sizeof(O) +
                      4.0 * n * sizeof(index_t) + double(n) * sizeof(T);
  }
  void apply(const T* r, T* z, cudaStream_t s) const override {
    if (l.rows() == 0) return;
    T* yp = y.data();
    const auto v = lt.view();
    const csr_view<const T, O> u{lt.cols(), lt.rows(), v.nnz, v.col_ptr, v.row_idx, v.values};
    run_solves(lanes, forward, backward, solve_args<T, O, true>{l.view(), r, yp, nullptr, false},
               solve_args<T, O, false>{u, yp, z, nullptr, false}, s);
  }
};


template <typename T, typename O>
struct ilu0_impl final : device_preconditioner<T>::impl {
  device_csr<T, O> lu;  // L (unit diagonal, not stored) and U on A's pattern
  device_buffer<O> diag;
  level_plan forward, backward;
  mutable device_buffer<T> y;  // L^-1 r
  int lanes = 1;

  ilu0_impl(context& ctx, const device_csr<T, O>& a) {
    const index_t n = a.rows();
    const count_t nnz = a.nnz();
    cudaStream_t s = ctx.stream();
    diag = ctx.allocate<O>(static_cast<std::size_t>(n));
    auto bad = new_flag(ctx);
    if (n > 0) {
      find_diagonal<<<grid_for(n), block_threads, 0, s>>>(a.view(), diag.data(), bad.data());
      LA_CHECK_LAUNCH(s);
    }
    if (const unsigned long long row = read_flag(ctx, bad); row != no_row)
      throw invalid_argument("ilu0: A(" + std::to_string(row + 1) + "," + std::to_string(row + 1) +
                             ") is not stored, so ILU(0) has no pivot there");
    {
      std::vector<O> rp(static_cast<std::size_t>(n) + 1);
      std::vector<index_t> ci(static_cast<std::size_t>(nnz));
      a.row_ptr().copy_to_host_async(rp.data(), rp.size());
      a.col_idx().copy_to_host_async(ci.data(), ci.size());
      ctx.synchronize();
      forward = level_plan(ctx, levels_of_lower(n, rp.data(), ci.data(), true));
      backward = level_plan(ctx, levels_of_upper(n, rp.data(), ci.data()));
    }
    auto v = ctx.allocate<double>(static_cast<std::size_t>(nnz));
    auto ptr = ctx.allocate<O>(static_cast<std::size_t>(n) + 1);
    auto idx = ctx.allocate<index_t>(static_cast<std::size_t>(nnz));
    LA_CUDA_TRY(cudaMemcpyAsync(ptr.data(), a.row_ptr().data(), ptr.size() * sizeof(O), cudaMemcpyDeviceToDevice, s));
    LA_CUDA_TRY(cudaMemcpyAsync(idx.data(), a.col_idx().data(), idx.size() * sizeof(index_t), cudaMemcpyDeviceToDevice, s));
    auto vals = ctx.allocate<T>(static_cast<std::size_t>(nnz));
    if (nnz > 0) {
      widen<<<grid_for(nnz), block_threads, 0, s>>>(a.values().data(), nnz, v.data());
      LA_CHECK_LAUNCH(s);
      auto bad2 = new_flag(ctx);
      forward.run<1>(ilu0_row<O>{a.view().row_ptr, a.view().col_idx, diag.data(), v.data(), bad2.data()}, s);
      if (const unsigned long long row = read_flag(ctx, bad2); row != no_row)
        throw invalid_argument("ilu0: the pivot of row " + std::to_string(row + 1) +
                               " is zero or not finite, so ILU(0) does not exist for this matrix");
      narrow_to<<<grid_for(nnz), block_threads, 0, s>>>(v.data(), nnz, vals.data());
      LA_CHECK_LAUNCH(s);
    }
    lu = device_csr<T, O>(detail::trusted, n, n, std::move(ptr), std::move(idx), std::move(vals));
    y = ctx.allocate<T>(static_cast<std::size_t>(n));
    lanes = solve_lanes(n ? (double(nnz) / n - 1) / 2 : 0);
    ctx.synchronize();
    this->rep.kind = preconditioner::ilu0;
    this->rep.detail = std::to_string(nnz) + " nonzeros in L + U, " + std::to_string(forward.levels()) + " + " +
                       std::to_string(backward.levels()) + " levels";
    this->rep.bytes = double(nnz) * (sizeof(T) + sizeof(index_t)) + (n + 1.0) * sizeof(O) + double(n) * (sizeof(O) + sizeof(T)) +
                      4.0 * n * sizeof(index_t);
  }
  void apply(const T* r, T* z, cudaStream_t s) const override {
    if (lu.rows() == 0) return;
    T* yp = y.data();
    run_solves(lanes, forward, backward, solve_args<T, O, true>{lu.view(), r, yp, diag.data(), true},
               solve_args<T, O, false>{lu.view(), yp, z, diag.data(), false}, s);
  }
};


}  // namespace

template <typename T, typename O>
impl_ptr<T> make_ic0(context& ctx, const device_csr<T, O>& a, double max_shift) {
  return std::make_unique<ic0_impl<T, O>>(ctx, a, max_shift);
}
#define LA_INSTANTIATE(T, O) template impl_ptr<T> make_ic0<T, O>(context&, const device_csr<T, O>&, double);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

template <typename T, typename O>
impl_ptr<T> make_ilu0(context& ctx, const device_csr<T, O>& a) {
  return std::make_unique<ilu0_impl<T, O>>(ctx, a);
}
#define LA_INSTANTIATE(T, O) template impl_ptr<T> make_ilu0<T, O>(context&, const device_csr<T, O>&);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace precond_detail
}  // namespace la
