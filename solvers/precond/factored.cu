// IC(0) and ILU(0) on the GPU (device_precond.hpp), computed and applied as factor_options
// say; precond/factored.hpp's host_factors is the oracle of every choice.
//
//   factorization  sweeps: ParILU/ParIC (factor_rows.hpp), an entry (ILU) or a row (IC) a
//                  thread, each sweep one
//                  kernel reading the previous sweep's values (so the factors are the same
//                  bit for bit run to run); exact: level by level (ilu.cu).
//   storage        L (diagonal last; ILU(0)'s unit diagonal stored as 1) and U (diagonal
//                  first) as two CSR matrices: ILU(0)'s L + U split by one count, scan and
//                  copy; IC(0)'s U = L^T by the device CSR->CSC conversion.
//   trisolve       exact: level-scheduled substitution; jacobi:K: K + 1 kernels a
//                  triangle, each a row product with a group of lanes a row (a fixed sum
//                  order); isai: M_L and M_U computed a thread a row (factor_rows::isai_row),
//                  applied as two registry SpMVs.
//   matching       ILU(0) of Dr P A Dc: the matching on the host (one copy of A), Dr P A Dc
//                  uploaded, and M^-1 r = Dc (L U)^-1 (Dr P r) by a gather and a scaling.
// apply() queues kernels only, so it can be captured into a CUDA graph.
#include <la/detail/instantiate.hpp>
#include <la/solvers/detail/precond_device.cuh>
#include <la/solvers/precond/detail/trisolve_kernels.cuh>

namespace la {
namespace precond_detail {
namespace {

// ---- sweeps --------------------------------------------------------------------------------

/// a0 = A's values; the start l_ij = a_ij / a_jj, u_ij = a_ij (as parilu0_factor).
template <typename T, typename O>
__global__ void parilu_start(csr_view<const T, O> a, const O* diag, double* a0, double* old) {
  LA_GRID_STRIDE(i, a.rows) {
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const index_t j = a.col_idx[k];
      const double v = a.values[k];
      a0[k] = v;
      old[k] = j < i ? v / static_cast<double>(a.values[diag[j]]) : v;
    }
  }
}
/// row[k] = the row of entry k. ParILU runs an entry a thread: each entry chases its own chain
/// of dependent searches (measured 1.4x faster than a row a thread on convdiff3d:128, equal on
/// convdiff2d:1024).
template <typename O>
__global__ void row_of_entries(index_t n, const O* rp, index_t* row) {
  LA_GRID_STRIDE(i, n) for (O k = rp[i]; k < rp[i + 1]; ++k) row[k] = static_cast<index_t>(i);
}
template <typename O>
__global__ void parilu_sweep(long long nnz, const index_t* row, const O* rp, const index_t* ci, const O* diag,
                             const double* a0, const double* old, double* out) {
  LA_GRID_STRIDE(k, nnz) factor_rows::parilu_entry(row[k], static_cast<O>(k), rp, ci, diag, a0, old, out);
}
/// The first row with a zero pivot or a non-finite entry into *bad.
template <typename O>
__global__ void check_rows(index_t n, const O* rp, const O* diag, const double* v, unsigned long long* bad) {
  LA_GRID_STRIDE(i, n) {
    bool ok = !diag || v[diag[i]] != 0;
    for (O k = rp[i]; k < rp[i + 1]; ++k) ok = ok && isfinite(v[k]);
    if (!ok) atomicMin(bad, static_cast<unsigned long long>(i));
  }
}
/// The scaled, shifted tril(A) into a0 and the start (sqrt(1 + shift) on the diagonal) into
/// old, as paric0_factor.
template <typename T, typename O>
__global__ void paric_start(csr_view<const T, O> low, const T* d, double shift, double* a0, double* old) {
  LA_GRID_STRIDE(i, low.rows) {
    const double di = d[i];
    for (O k = low.row_ptr[i]; k < low.row_ptr[i + 1]; ++k) {
      const index_t j = low.col_idx[k];
      a0[k] = j == i ? 1 + shift : static_cast<double>(low.values[k]) / sqrt(di * static_cast<double>(d[j]));
      old[k] = j == i ? sqrt(1 + shift) : a0[k];
    }
  }
}
/// ParIC(0) a thread a row (measured 1.1-1.3x faster than an entry a thread: a row's entries
/// merge the same prefix of the row, which one thread reads once).
template <typename O>
__global__ void paric_sweep(index_t n, const O* rp, const index_t* ci, const double* a0, const double* old, double* out,
                            unsigned long long* bad) {
  LA_GRID_STRIDE(i, n) if (!factor_rows::paric_row(static_cast<index_t>(i), rp, ci, a0, old, out))
    atomicMin(bad, static_cast<unsigned long long>(i));
}

/// Rows whose diagonal entry is missing (gaps[0]) or a stored zero (gaps[1]).
template <typename T, typename O>
__global__ void count_gaps(csr_view<const T, O> a, unsigned long long* gaps) {
  LA_GRID_STRIDE(i, a.rows) {
    int state = 0;  // 0 missing, 1 zero, 2 nonzero
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.col_idx[k] == i) state = a.values[k] != T(0) ? 2 : 1;
    if (state < 2) atomicAdd(gaps + state, 1ull);
  }
}

// ---- L + U into L and U --------------------------------------------------------------------

template <typename O>
__global__ void split_counts(index_t n, const O* rp, const O* diag, O* lo, O* up) {
  LA_GRID_STRIDE(i, n) lo[i] = diag[i] - rp[i] + 1, up[i] = rp[i + 1] - diag[i];
}
template <typename T, typename O>
__global__ void split_copy(csr_view<const T, O> lu, const O* diag, csr_view<T, O> lo, csr_view<T, O> up) {
  LA_GRID_STRIDE(i, lu.rows) {
    O o = lo.row_ptr[i];
    for (O k = lu.row_ptr[i]; k < diag[i]; ++k) lo.col_idx[o] = lu.col_idx[k], lo.values[o++] = lu.values[k];
    lo.col_idx[o] = static_cast<index_t>(i), lo.values[o] = T(1);
    o = up.row_ptr[i];
    for (O k = diag[i]; k < lu.row_ptr[i + 1]; ++k) up.col_idx[o] = lu.col_idx[k], up.values[o++] = lu.values[k];
  }
}

template <typename T, typename O>
struct factored_impl final : device_preconditioner<T>::impl {
  device_csr<T, O> lo, up;  // L (diagonal last), U (diagonal first)
  trisolve solve = trisolve::isai;
  int steps = default_jacobi_steps;
  int lanes = 1;
  level_plan forward, backward;                        // exact
  device_buffer<T> m_lo, m_up;                         // isai: M_L, M_U on lo's and up's patterns
  std::optional<spmv_plan<T>> m_lo_plan, m_up_plan;
  device_buffer<index_t> perm;                         // matching
  device_buffer<T> dr, dc;
  mutable device_buffer<T> y, w, t, u;

  factored_impl(context& ctx, const device_csr<T, O>& a_in, bool ilu, const precond_options& opt) {
    const factor_options& fo = opt.factor;
    const auto t_start = std::chrono::steady_clock::now();
    LA_EXPECTS(fo.sweeps >= 0 && fo.jacobi_steps >= 0, "ilu0/ic0: sweeps and jacobi steps must be non-negative");
    LA_EXPECTS(ilu || fo.matching != matching_mode::on, "ic0: {matching} applies to ilu0 (a permuted SPD matrix is not symmetric)");
    factorization f = fo.method == factorization::automatic ? select_factorization(true) : fo.method;
    steps = fo.jacobi_steps > 0 ? fo.jacobi_steps : default_jacobi_steps;
    const int sweeps = fo.sweeps > 0 ? fo.sweeps : default_sweeps;
    cudaStream_t s = ctx.stream();
    const index_t n = a_in.rows();
    std::string note;
    double shift = 0;
    int attempts = 1;
    if (ilu) {
      // The diagonal's missing entries and stored zeros decide the route (route_ilu).
      auto gaps = ctx.allocate<unsigned long long>(2);
      LA_CUDA_TRY(cudaMemsetAsync(gaps.data(), 0, 2 * sizeof(unsigned long long), s));
      if (n > 0) {
        count_gaps<<<grid_for(n), block_threads, 0, s>>>(a_in.view(), gaps.data());
        LA_CHECK_LAUNCH(s);
      }
      unsigned long long g[2] = {0, 0};
      gaps.copy_to_host_async(g, 2);
      ctx.synchronize();
      const ilu_route route = route_ilu(fo, f, static_cast<long long>(g[0]), static_cast<long long>(g[1]));
      bool match = route.match_now;
      if (!match) {
        try {
          factor_ilu(ctx, a_in, route.first, sweeps);
          f = route.first;
        } catch (const invalid_argument&) {
          if (!route.match_on_failure) throw;
          match = true;
        }
      }
      if (match) {
        const auto t0 = std::chrono::steady_clock::now();
        const csr_matrix<T, O> h = to_host(ctx, a_in);
        const diagonal_matching m = [&] {
          try {
            return max_product_matching(h, ilu_matching_budget(h.nnz()));
          } catch (const invalid_argument& e) {  // in the preconditioner's words
            throw invalid_argument(std::string("ilu0: ") + e.what() + "; use {matching} off or another preconditioner");
          }
        }();
        const device_csr<T, O> matched = to_device(ctx, matched_matrix(h, m));
        std::vector<T> hr, hc;
        matching_scales(m, hr, hc);
        perm = ctx.allocate<index_t>(static_cast<std::size_t>(n));
        perm.copy_from_host_async(m.perm.data(), m.perm.size());
        dr = ctx.allocate<T>(hr.size()), dc = ctx.allocate<T>(hc.size());
        dr.copy_from_host_async(hr.data(), hr.size());
        dc.copy_from_host_async(hc.data(), hc.size());
        t = ctx.allocate<T>(static_cast<std::size_t>(n)), u = ctx.allocate<T>(static_cast<std::size_t>(n));
        ctx.synchronize();
        note = detail::matching_detail(static_cast<long long>(g[0] + g[1]),
                                       std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        if (fo.method == factorization::automatic) f = select_factorization(true, true);
        factor_ilu(ctx, matched, f, sweeps);
      }
    } else {
      lo = device_lower(ctx, a_in, "ic0");
      if (f == factorization::exact) {
        shift = exact_ic0(ctx, lo, opt.max_shift, &attempts);
      } else {
        LA_EXPECTS(opt.max_shift >= 0 && std::isfinite(opt.max_shift), "ic0: the largest shift must be finite and non-negative");
        shift = paric(ctx, opt.max_shift, sweeps, &attempts);
      }
      up = transposed(ctx, lo);
    }
    ctx.synchronize();
    this->rep.factor_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    solve = fo.solve == trisolve::automatic ? select_trisolve(true, f) : fo.solve;
    y = ctx.allocate<T>(static_cast<std::size_t>(n));
    prepare_solve(ctx, n, ilu);
    if (fo.solve == trisolve::automatic && solve == trisolve::isai && n > 0) {
      // ISAI or Jacobi by one probe each: e = ||v - A M^-1 v|| / ||v|| for a fixed smooth v;
      // ISAI (0.8 SpMVs an apply against Jacobi's 2.5) unless its e is over twice Jacobi's
      // (1138_bus: 52 against 12, and 1113 iterations against 219; on the grids 1.2x).
      w = ctx.allocate<T>(static_cast<std::size_t>(n));
      const double e_isai = probe(ctx, a_in);
      solve = trisolve::jacobi;
      const double e_jacobi = probe(ctx, a_in);
      solve = e_isai <= isai_probe_factor * e_jacobi ? trisolve::isai : trisolve::jacobi;
      if (solve == trisolve::jacobi) m_lo_plan.reset(), m_up_plan.reset(), m_lo = {}, m_up = {};
      else w = {};
      note += "; trisolve by probe ||v - A M^-1 v|| / ||v||: isai " + short_number(e_isai) + ", jacobi:" +
              std::to_string(steps) + " " + short_number(e_jacobi);
    }
    ctx.synchronize();
    this->rep.shift = shift;
    this->rep.detail = detail::factor_detail(ilu, f, sweeps, solve, steps, shift, attempts, ilu ? lo.nnz() + up.nnz() - n : lo.nnz()) + note;
    if (kept > 0)
      this->rep.detail += "; " + std::to_string(kept) + " ISAI rows past " + std::to_string(factor_rows::isai_max_row) +
                          " entries kept the diagonal only";
    const double pattern = (lo.nnz() + up.nnz()) * double(sizeof(index_t)) + 2.0 * (n + 1) * sizeof(O);
    this->rep.bytes = pattern + (lo.nnz() + up.nnz()) * double(sizeof(T)) * (solve == trisolve::isai ? 2 : 1) +
                      double(n) * sizeof(T) * (solve == trisolve::jacobi ? 2 : 1) + (perm.size() ? 5.0 * n * sizeof(T) : 0);
  }

  unsigned long long kept = 0;

  /// ||v - A M^-1 v|| / ||v|| for v_i = sin(0.7 i) + 0.3, with the current trisolve; the sums
  /// in a fixed order (block partials summed on the host), so the choice is the same every run.
  double probe(context& ctx, const device_csr<T, O>& a) {
    cudaStream_t s = ctx.stream();
    const index_t n = a.rows();
    auto v = ctx.allocate<T>(static_cast<std::size_t>(n)), z = ctx.allocate<T>(static_cast<std::size_t>(n)),
         av = ctx.allocate<T>(static_cast<std::size_t>(n));
    const int blocks = static_cast<int>(std::min<long long>(1024, (n + block_threads - 1) / block_threads));
    auto parts = ctx.allocate<double>(2 * static_cast<std::size_t>(blocks));
    probe_vector<<<grid_for(n), block_threads, 0, s>>>(n, v.data());
    LA_CHECK_LAUNCH(s);
    apply(v.data(), z.data(), s);
    spmv_plan<T> plan(ctx, spmv_view(a));
    plan.run(z.data(), av.data(), T(1), T(0), s);
    probe_sums<<<blocks, block_threads, 0, s>>>(n, v.data(), av.data(), parts.data());
    LA_CHECK_LAUNCH(s);
    std::vector<double> h(2 * static_cast<std::size_t>(blocks));
    parts.copy_to_host_async(h.data(), h.size());
    ctx.synchronize();
    double e = 0, vv = 0;
    for (int b = 0; b < blocks; ++b) e += h[2 * b], vv += h[2 * b + 1];
    return std::isfinite(e) ? std::sqrt(e / vv) : std::numeric_limits<double>::infinity();
  }

  /// ILU(0) of a into lo and up, by f.
  void factor_ilu(context& ctx, const device_csr<T, O>& a, factorization f, int sweeps) {
    cudaStream_t s = ctx.stream();
    const index_t n = a.rows();
    const device_buffer<O> diag = device_diagonal_positions(ctx, a);
    const count_t nnz = a.nnz();
    device_buffer<T> vals = ctx.allocate<T>(static_cast<std::size_t>(nnz));
    if (f == factorization::exact) {
      device_csr<T, O> lu(detail::trusted, n, n, copy_of(ctx, a.row_ptr()), copy_of(ctx, a.col_idx()),
                          copy_of(ctx, a.values()));
      exact_ilu0(ctx, lu, diag.data());
      vals = std::move(lu.values());  // lu is done with; its factored values are the result
    } else if (nnz > 0) {
      auto a0 = ctx.allocate<double>(static_cast<std::size_t>(nnz));
      auto v0 = ctx.allocate<double>(static_cast<std::size_t>(nnz)), v1 = ctx.allocate<double>(static_cast<std::size_t>(nnz));
      const auto av = a.view();
      auto row = ctx.allocate<index_t>(static_cast<std::size_t>(nnz));
      row_of_entries<<<grid_for(n), block_threads, 0, s>>>(n, av.row_ptr, row.data());
      LA_CHECK_LAUNCH(s);
      parilu_start<<<grid_for(n), block_threads, 0, s>>>(av, diag.data(), a0.data(), v0.data());
      LA_CHECK_LAUNCH(s);
      for (int k = 0; k < sweeps; ++k) {
        parilu_sweep<<<grid_for(nnz), block_threads, 0, s>>>(nnz, row.data(), av.row_ptr, av.col_idx, diag.data(), a0.data(),
                                                             v0.data(), v1.data());
        LA_CHECK_LAUNCH(s);
        std::swap(v0, v1);
      }
      auto bad = new_flag(ctx);
      check_rows<<<grid_for(n), block_threads, 0, s>>>(n, av.row_ptr, diag.data(), v0.data(), bad.data());
      LA_CHECK_LAUNCH(s);
      if (const unsigned long long row = read_flag(ctx, bad); row != no_row) {
        double p = 0;
        O at = 0;
        LA_CUDA_TRY(cudaMemcpyAsync(&at, diag.data() + row, sizeof(O), cudaMemcpyDeviceToHost, s));
        ctx.synchronize();
        LA_CUDA_TRY(cudaMemcpyAsync(&p, v0.data() + at, sizeof(double), cudaMemcpyDeviceToHost, s));
        ctx.synchronize();
        throw invalid_argument(detail::ilu0_pivot_message(static_cast<long long>(row), p));
      }
      narrow_to<<<grid_for(nnz), block_threads, 0, s>>>(v0.data(), nnz, vals.data());
      LA_CHECK_LAUNCH(s);
    }
    split(ctx, a, vals.data(), diag.data());
  }

  /// ParIC(0) into lo (tril(A) in): the shifts in turn until every pivot of every sweep is
  /// positive; the shift used returned.
  double paric(context& ctx, double max_shift, int sweeps, int* attempts) {
    cudaStream_t s = ctx.stream();
    const index_t n = lo.rows();
    const count_t nnz = lo.nnz();
    auto d = ctx.allocate<T>(static_cast<std::size_t>(n));
    auto a0 = ctx.allocate<double>(static_cast<std::size_t>(nnz));
    auto v0 = ctx.allocate<double>(static_cast<std::size_t>(nnz)), v1 = ctx.allocate<double>(static_cast<std::size_t>(nnz));
    if (n > 0) {
      lower_diagonal<<<grid_for(n), block_threads, 0, s>>>(std::as_const(lo).view(), d.data());
      LA_CHECK_LAUNCH(s);
    }
    const auto lv = std::as_const(lo).view();
    *attempts = 0;
    unsigned long long row = no_row;
    for (double shift : ic0_shifts(max_shift)) {
      ++*attempts;
      if (n == 0) return shift;
      paric_start<<<grid_for(n), block_threads, 0, s>>>(lv, d.data(), shift, a0.data(), v0.data());
      LA_CHECK_LAUNCH(s);
      auto bad = new_flag(ctx);
      for (int k = 0; k < sweeps; ++k) {
        paric_sweep<<<grid_for(n), block_threads, 0, s>>>(n, lv.row_ptr, lv.col_idx, a0.data(), v0.data(), v1.data(),
                                                          bad.data());
        LA_CHECK_LAUNCH(s);
        std::swap(v0, v1);
      }
      check_rows<O><<<grid_for(n), block_threads, 0, s>>>(n, lv.row_ptr, nullptr, v0.data(), bad.data());
      LA_CHECK_LAUNCH(s);
      row = read_flag(ctx, bad);
      if (row == no_row) {
        unscale_lower<<<grid_for(n), block_threads, 0, s>>>(lo.view(), d.data(), v0.data());
        LA_CHECK_LAUNCH(s);
        return shift;
      }
    }
    throw invalid_argument(detail::ic0_no_shift_message(static_cast<long long>(row), max_shift));
  }

  /// L + U (A's pattern, values vals) into lo and up.
  void split(context& ctx, const device_csr<T, O>& a, const T* vals, const O* diag) {
    cudaStream_t s = ctx.stream();
    const index_t n = a.rows();
    auto lp = ctx.allocate<O>(static_cast<std::size_t>(n) + 1), upp = ctx.allocate<O>(static_cast<std::size_t>(n) + 1);
    if (n > 0) {
      split_counts<<<grid_for(n), block_threads, 0, s>>>(n, a.view().row_ptr, diag, lp.data() + 1, upp.data() + 1);
      LA_CHECK_LAUNCH(s);
    }
    const O nl = detail::scan_counts(ctx, lp.data(), n), nu = detail::scan_counts(ctx, upp.data(), n);
    lo = device_csr<T, O>(detail::trusted, n, n, std::move(lp), ctx.allocate<index_t>(static_cast<std::size_t>(nl)),
                          ctx.allocate<T>(static_cast<std::size_t>(nl)));
    up = device_csr<T, O>(detail::trusted, n, n, std::move(upp), ctx.allocate<index_t>(static_cast<std::size_t>(nu)),
                          ctx.allocate<T>(static_cast<std::size_t>(nu)));
    if (n > 0) {
      const auto av = a.view();
      const csr_view<const T, O> lu{av.rows, av.cols, av.nnz, av.row_ptr, av.col_idx, vals};
      split_copy<<<grid_for(n), block_threads, 0, s>>>(lu, diag, lo.view(), up.view());
      LA_CHECK_LAUNCH(s);
    }
  }

  tri<T, O> lower(const T* v) const {
    const auto c = lo.view();
    return {c.row_ptr, c.col_idx, v ? v : c.values, nullptr, true, false};
  }
  tri<T, O> upper(const T* v) const {
    const auto c = up.view();
    return {c.row_ptr, c.col_idx, v ? v : c.values, nullptr, false, false};
  }

  void prepare_solve(context& ctx, index_t n, bool ilu) {
    cudaStream_t s = ctx.stream();
    const double off = n ? double(lo.nnz() + up.nnz()) / (2.0 * n) - 1 : 0;  // off-diagonal entries a row
    lanes = row_lanes(off);
    if (solve == trisolve::exact) {
      std::vector<O> rp(static_cast<std::size_t>(n) + 1);
      std::vector<index_t> ci;
      auto pattern = [&](const device_csr<T, O>& m) {
        ci.resize(static_cast<std::size_t>(m.nnz()));
        m.row_ptr().copy_to_host_async(rp.data(), rp.size());
        m.col_idx().copy_to_host_async(ci.data(), ci.size());
        ctx.synchronize();
      };
      pattern(lo);
      forward = level_plan(ctx, levels_of_lower(n, rp.data(), ci.data()));
      pattern(up);
      backward = level_plan(ctx, levels_of_upper(n, rp.data(), ci.data()));
    } else if (solve == trisolve::jacobi) {
      w = ctx.allocate<T>(static_cast<std::size_t>(n));
    } else {
      m_lo = ctx.allocate<T>(static_cast<std::size_t>(lo.nnz()));
      m_up = ctx.allocate<T>(static_cast<std::size_t>(up.nnz()));
      auto count = ctx.allocate<unsigned long long>(1);
      LA_CUDA_TRY(cudaMemsetAsync(count.data(), 0, sizeof(unsigned long long), s));
      if (n > 0) {
        isai_rows<<<grid_for(n), block_threads, 0, s>>>(lower(nullptr), n, m_lo.data(), count.data());
        LA_CHECK_LAUNCH(s);
        if (ilu) {
          isai_rows<<<grid_for(n), block_threads, 0, s>>>(upper(nullptr), n, m_up.data(), count.data());
          LA_CHECK_LAUNCH(s);
        }
      }
      if (!ilu) {  // M_U = M_L^T, so M^-1 = M_L^T M_L is symmetric
        const device_csr<T, O> ml(detail::trusted, n, n, copy_of(ctx, lo.row_ptr()),
                                  copy_of(ctx, lo.col_idx()), copy_of(ctx, m_lo));
        auto [p, i, v] = std::move(to_csc(ctx, ml)).release();
        m_up = std::move(v);
      }
      kept = read_flag(ctx, count);
      m_lo_plan.emplace(ctx, view_with_values(lo, m_lo.data()));
      m_up_plan.emplace(ctx, view_with_values(up, m_up.data()));
    }
  }

  /// x = t^-1 b by Jacobi sweeps (ping-pong between x and w, ending in x).
  void jacobi(const tri<T, O>& tr, const T* b, T* x, cudaStream_t s) const {
    const index_t n = lo.rows();
    T* bufs[2] = {x, w.data()};
    int cur = steps % 2;  // x0 where the last sweep's output is x
    diagonal_solve<<<grid_for(n), block_threads, 0, s>>>(tr, n, b, bufs[cur]);
    LA_CHECK_LAUNCH(s);
    for (int k = 0; k < steps; ++k) {
      const T* in = bufs[cur];
      T* out = bufs[1 - cur];
      const long long threads = static_cast<long long>(n) * lanes;
      if (lanes <= 1) jacobi_sweep<1><<<grid_for(threads), block_threads, 0, s>>>(tr, n, b, in, out);
      else if (lanes <= 8) jacobi_sweep<8><<<grid_for(threads), block_threads, 0, s>>>(tr, n, b, in, out);
      else jacobi_sweep<32><<<grid_for(threads), block_threads, 0, s>>>(tr, n, b, in, out);
      LA_CHECK_LAUNCH(s);
      cur = 1 - cur;
    }
  }

  void apply(const T* r, T* z, cudaStream_t s) const override {
    const index_t n = lo.rows();
    if (n == 0) return;
    const T* in = r;
    T* out = z;
    if (perm.size()) {
      permute_scale<<<grid_for(n), block_threads, 0, s>>>(n, perm.data(), dr.data(), r, t.data());
      LA_CHECK_LAUNCH(s);
      in = t.data(), out = u.data();
    }
    T* yp = y.data();
    switch (solve) {
      case trisolve::exact: {
        const tri<T, O> l = lower(nullptr), uu = upper(nullptr);
        if (lanes <= 1) forward.run<1>(solve_row<1, T, O>{l, in, yp}, s), backward.run<1>(solve_row<1, T, O>{uu, yp, out}, s);
        else if (lanes <= 8) forward.run<8>(solve_row<8, T, O>{l, in, yp}, s), backward.run<8>(solve_row<8, T, O>{uu, yp, out}, s);
        else forward.run<32>(solve_row<32, T, O>{l, in, yp}, s), backward.run<32>(solve_row<32, T, O>{uu, yp, out}, s);
        break;
      }
      case trisolve::jacobi:
        jacobi(lower(nullptr), in, yp, s);
        jacobi(upper(nullptr), yp, out, s);
        break;
      default:
        m_lo_plan->run(in, yp, T(1), T(0), s);
        m_up_plan->run(yp, out, T(1), T(0), s);
    }
    if (perm.size()) {
      scale_into<<<grid_for(n), block_threads, 0, s>>>(n, dc.data(), out, z);
      LA_CHECK_LAUNCH(s);
    }
  }
};

}  // namespace

template <typename T, typename O>
impl_ptr<T> make_ic0(context& ctx, const device_csr<T, O>& a, const precond_options& opt) {
  return std::make_unique<factored_impl<T, O>>(ctx, a, false, opt);
}
template <typename T, typename O>
impl_ptr<T> make_ilu0(context& ctx, const device_csr<T, O>& a, const precond_options& opt) {
  return std::make_unique<factored_impl<T, O>>(ctx, a, true, opt);
}
#define LA_INSTANTIATE(T, O)                                                                               \
  template impl_ptr<T> make_ic0<T, O>(context&, const device_csr<T, O>&, const precond_options&); \
  template impl_ptr<T> make_ilu0<T, O>(context&, const device_csr<T, O>&, const precond_options&);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace precond_detail
}  // namespace la
