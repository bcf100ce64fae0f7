// FSAI on the GPU (device_precond.hpp): G's pattern, its rows solved a thread each from
// dense blocks in global scratch, G^T by the device conversion, applied as two products.
#include <la/detail/instantiate.hpp>
#include <la/solvers/detail/precond_device.cuh>

namespace la {
namespace precond_detail {
namespace {

// ---- FSAI ----------------------------------------------------------------------------------

/// Row r of the dense block A[P, P] into m[r * p ..]: row P[r] of A against the sorted
/// pattern P (a merge), zeros where A has no entry.
template <typename T, typename O>
__device__ __forceinline__ void pattern_row(const csr_view<const T, O>& a, const index_t* P, int p, int r, double* m) {
  int c = 0;
  for (O k = a.row_ptr[P[r]]; k < a.row_ptr[P[r] + 1] && c < p; ++k) {
    const index_t col = a.col_idx[k];
    while (c < p && P[c] < col) m[r * p + c++] = 0;
    if (c < p && P[c] == col) m[r * p + c++] = a.values[k];
  }
  while (c < p) m[r * p + c++] = 0;
}

/// Rows [r0, r1) of G: row i's dense block A[P, P] gathered into scratch at off[i] - base,
/// Cholesky, then M y = e_last and g = y / sqrt(y_last): fsai_factor's steps in double.
template <typename T, typename O>
__global__ void fsai_rows(csr_view<const T, O> a, csr_view<T, O> g, index_t r0, index_t r1, const long long* off,
                          long long base, double* scratch, unsigned long long* bad) {
  for (long long i = r0 + detail::global_thread(); i < r1; i += detail::grid_threads()) {
    const O g0 = g.row_ptr[i];
    const int p = static_cast<int>(g.row_ptr[i + 1] - g0);
    const index_t* P = g.col_idx + g0;
    double* m = scratch + (off[i] - base);
    for (int r = 0; r < p; ++r) {
      pattern_row(a, P, p, r, m);
    }
    if (!dense_cholesky(m, p)) {
      atomicMin(bad, static_cast<unsigned long long>(i));
      continue;
    }
    // L^T y = e_last / L_ll: y_last = 1 / L_ll^2 (yl), and y_r for r < p - 1 kept in
    // double in the last column's upper part, m[r * p + (p - 1)], which L does not use.
    const double yl = 1 / (m[(p - 1) * p + (p - 1)] * m[(p - 1) * p + (p - 1)]);
    for (int r = p - 1; r-- > 0;) {
      double s = 0;
      for (int k = r + 1; k < p; ++k) s -= m[k * p + r] * (k == p - 1 ? yl : m[k * p + (p - 1)]);
      m[r * p + (p - 1)] = s / m[r * p + r];
    }
    const double scale = 1 / sqrt(yl);
    for (int r = 0; r < p; ++r) g.values[g0 + r] = static_cast<T>((r == p - 1 ? yl : m[r * p + (p - 1)]) * scale);
  }
}

/// fsai_rows with a warp a row, for long patterns: the gather spread over the block's
/// rows, each Cholesky column's updates over its rows, each dot over its terms (sums in a
/// fixed lane order, so reruns give the same bits). The steps and their order are those of
/// fsai_factor; only the summation order of the dots differs.
template <typename T, typename O>
__global__ void fsai_rows_warp(csr_view<const T, O> a, csr_view<T, O> g, index_t r0, index_t r1, const long long* off,
                               long long base, double* scratch, unsigned long long* bad) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  LA_WARP_STRIDE(w, r1 - r0) {
    const long long i = r0 + w;
    const O g0 = g.row_ptr[i];
    const int p = static_cast<int>(g.row_ptr[i + 1] - g0);
    const index_t* P = g.col_idx + g0;
    double* m = scratch + (off[i] - base);
    for (int r = lane; r < p; r += 32) {
      pattern_row(a, P, p, r, m);
    }
    __syncwarp();
    bool ok = true;
    for (int c = 0; c < p; ++c) {
      double d = 0;
      for (int k = lane; k < c; k += 32) d += m[c * p + k] * m[c * p + k];
      d = m[c * p + c] - warp_total(d);
      if (!(d > 0) || !isfinite(d)) {
        ok = false;
        break;
      }
      d = sqrt(d);
      for (int r = c + 1 + lane; r < p; r += 32) {
        double v = m[r * p + c];
        for (int k = 0; k < c; ++k) v -= m[r * p + k] * m[c * p + k];
        m[r * p + c] = v / d;
      }
      __syncwarp();
      if (lane == 0) m[c * p + c] = d;
      __syncwarp();
    }
    if (!ok) {
      if (lane == 0) atomicMin(bad, static_cast<unsigned long long>(i));
      continue;
    }
    // L^T y = e_last / L_ll, y_r kept in m[r * p + (p - 1)] for r < p - 1 (as fsai_rows).
    const double yl = 1 / (m[(p - 1) * p + (p - 1)] * m[(p - 1) * p + (p - 1)]);
    for (int r = p - 1; r-- > 0;) {
      double v = 0;
      for (int k = r + 1 + lane; k < p; k += 32) v += m[k * p + r] * (k == p - 1 ? yl : m[k * p + (p - 1)]);
      v = warp_total(v);
      if (lane == 0) m[r * p + (p - 1)] = -v / m[r * p + r];
      __syncwarp();
    }
    const double scale = 1 / sqrt(yl);
    for (int r = lane; r < p; r += 32) g.values[g0 + r] = static_cast<T>((r == p - 1 ? yl : m[r * p + (p - 1)]) * scale);
    __syncwarp();
  }
}

template <typename O>
__global__ void square_lengths(const O* ptr, index_t n, long long* out) {
  LA_GRID_STRIDE(i, n) {
    const long long p = ptr[i + 1] - ptr[i];
    out[i] = p * p;
  }
}


template <typename O>
__global__ void row_length_max(const O* rp, index_t n, unsigned long long* most) {
  LA_GRID_STRIDE(i, n) atomicMax(most, static_cast<unsigned long long>(rp[i + 1] - rp[i]));
}

template <typename T, typename O>
struct fsai_impl final : device_preconditioner<T>::impl {
  device_csr<T, O> g;
  device_csc<T, O> gt;  // G^T, read as CSR through transposed_view
  std::optional<spmv_plan<T>> g_plan, gt_plan;
  mutable device_buffer<T> t;  // G r
  index_t trimmed = 0;          // rows the fill budget cut (host-built patterns)
  double flops = 0;             // the setup's estimated cost (host-built patterns)

  static index_t longest_row(context& ctx, const device_csr<T, O>& m) {
    if (m.rows() == 0) return 0;
    auto most = ctx.allocate<unsigned long long>(1);
    LA_CUDA_TRY(cudaMemsetAsync(most.data(), 0, sizeof(unsigned long long), ctx.stream()));
    row_length_max<<<grid_for(m.rows()), block_threads, 0, ctx.stream()>>>(m.view().row_ptr, m.rows(), most.data());
    LA_CHECK_LAUNCH(ctx.stream());
    unsigned long long h = 0;
    LA_CUDA_TRY(cudaMemcpyAsync(&h, most.data(), sizeof h, cudaMemcpyDeviceToHost, ctx.stream()));
    ctx.synchronize();
    return static_cast<index_t>(h);
  }

  /// Scratch for the gathered blocks: a quarter of the free device memory, at most 2 GiB
  /// (one batch for a 16M-row 3D Laplacian's tril(A)); rows are batched past it.
  static double scratch_budget() {
    std::size_t free_bytes = 0, total_bytes = 0;
    LA_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
    return std::max(64.0 * (1 << 20), std::min(2048.0 * (1 << 20), 0.25 * double(free_bytes)));
  }

  fsai_impl(context& ctx, const device_csr<T, O>& a, const fsai_options& opt, double scratch_bytes) {
    LA_EXPECTS(opt.drop >= 0 && std::isfinite(opt.drop), "fsai: drop must be finite and non-negative");
    LA_EXPECTS(opt.max_row >= 0, "fsai: the fill budget (entries a row) must be 0 (none) or positive");
    const index_t n = a.rows();
    cudaStream_t s = ctx.stream();
    // G's pattern: tril(A) on the device (device_lower also checks the diagonal), or the host
    // builder's (fsai_pattern_of) for tril(|A|^2) and for tril(A) rows past the fill budget,
    // which it trims as fsai_factor does.
    g = device_lower(ctx, a, "fsai");
    if (opt.pattern != fsai_pattern::lower || (opt.max_row > 0 && longest_row(ctx, g) > opt.max_row)) {
      const fsai_sparsity<O> sp = fsai_pattern_of(to_host(ctx, a), opt);
      trimmed = sp.trimmed, flops = sp.flops;
      auto ptr = ctx.allocate<O>(sp.ptr.size());
      ptr.copy_from_host_async(sp.ptr.data(), sp.ptr.size());
      auto idx = ctx.allocate<index_t>(sp.idx.size());
      idx.copy_from_host_async(sp.idx.data(), sp.idx.size());
      g = device_csr<T, O>(detail::trusted, n, n, std::move(ptr), std::move(idx), ctx.allocate<T>(sp.idx.size()));
      ctx.synchronize();
    }
    // A thread a row for short patterns (2D and 3D Laplacians: 3 and 4 entries), a warp a
    // row when the dense solves are worth spreading.
    const bool warp_rows = n > 0 && double(g.nnz()) / n > 6;
    // Scratch offsets: p_i^2 doubles per row, prefix-summed.
    auto off = ctx.allocate<long long>(static_cast<std::size_t>(n) + 1);
    if (n > 0) {
      square_lengths<<<grid_for(n), block_threads, 0, s>>>(g.view().row_ptr, n, off.data() + 1);
      LA_CHECK_LAUNCH(s);
    }
    const long long total = detail::scan_counts(ctx, off.data(), n);
    // Batches of rows whose scratch fits the budget (one batch unless the patterns are long).
    std::vector<index_t> cuts{0};
    LA_EXPECTS(scratch_bytes >= 0 && std::isfinite(scratch_bytes), "fsai: the scratch size must be finite and non-negative");
    const double budget = scratch_bytes > 0 ? scratch_bytes : scratch_budget();
    if (double(total) * sizeof(double) > budget) {
      std::vector<long long> h(static_cast<std::size_t>(n) + 1);
      off.copy_to_host_async(h.data(), h.size());
      ctx.synchronize();
      const long long per = static_cast<long long>(budget / sizeof(double));
      for (index_t i = 0; i < n; ++i)
        if (h[i + 1] - h[cuts.back()] > per && i > cuts.back()) cuts.push_back(i);
    }
    cuts.push_back(n);
    long long most = 0;
    {
      std::vector<long long> at(cuts.size());
      for (std::size_t k = 0; k < cuts.size(); ++k)
        LA_CUDA_TRY(cudaMemcpyAsync(&at[k], off.data() + cuts[k], sizeof(long long), cudaMemcpyDeviceToHost, s));
      ctx.synchronize();
      for (std::size_t k = 0; k + 1 < cuts.size(); ++k) most = std::max(most, at[k + 1] - at[k]);
      auto scratch = ctx.allocate<double>(static_cast<std::size_t>(std::max<long long>(most, 1)));
      auto bad = new_flag(ctx);
      for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
        if (cuts[k + 1] == cuts[k]) continue;
        if (warp_rows)
          fsai_rows_warp<<<grid_for(32LL * (cuts[k + 1] - cuts[k])), block_threads, 0, s>>>(
              a.view(), g.view(), cuts[k], cuts[k + 1], off.data(), at[k], scratch.data(), bad.data());
        else
          fsai_rows<<<grid_for(cuts[k + 1] - cuts[k]), block_threads, 0, s>>>(
              a.view(), g.view(), cuts[k], cuts[k + 1], off.data(), at[k], scratch.data(), bad.data());
        LA_CHECK_LAUNCH(s);
      }
      const unsigned long long row = read_flag(ctx, bad);
      if (row != no_row)
        throw invalid_argument("fsai: row " + std::to_string(row + 1) +
                               ": the block of A on its pattern is not positive definite, so the matrix is not "
                               "symmetric positive definite");
    }
    gt = to_csc(ctx, g);
    g_plan.emplace(ctx, spmv_view(g));
    gt_plan.emplace(ctx, transposed_view(gt));
    t = ctx.allocate<T>(static_cast<std::size_t>(n));
    this->rep.detail = std::string("pattern ") + to_string(opt.pattern) + ", " + std::to_string(g.nnz()) +
                       " nonzeros in G, " + std::to_string(cuts.size() - 1) + " setup batch" +
                       (cuts.size() > 2 ? "es" : "") + (warp_rows ? ", a warp a row" : ", a thread a row") +
                       fsai_budget_note(trimmed, opt.max_row, flops);
    this->rep.bytes = 2.0 * g.nnz() * (sizeof(T) + sizeof(index_t)) + 2.0 * (n + 1) * sizeof(O) + double(n) * sizeof(T);
  }
  bool factors(matrix_view<T>& gv, matrix_view<T>& gtv) const override {
    gv = spmv_view(g), gtv = transposed_view(gt);
    return true;
  }
  void apply(const T* r, T* z, cudaStream_t s) const override {
    if (g.rows() == 0) return;
    g_plan->run(r, t.data(), T(1), T(0), s);
    gt_plan->run(t.data(), z, T(1), T(0), s);
  }
};


}  // namespace

template <typename T, typename O>
impl_ptr<T> make_fsai(context& ctx, const device_csr<T, O>& a, const precond_options& opt) {
  return std::make_unique<fsai_impl<T, O>>(ctx, a, opt.fsai, opt.fsai_scratch_bytes);
}
#define LA_INSTANTIATE(T, O) template impl_ptr<T> make_fsai<T, O>(context&, const device_csr<T, O>&, const precond_options&);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace precond_detail
}  // namespace la
