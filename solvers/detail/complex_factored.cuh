// ILU(0) and IC(0) for the complex Krylov methods on the GPU (issue 69): the factors made by
// the host oracles (complex_ilu0.hpp, complex_ic0.hpp: A copied down once), applied on the
// device by level-scheduled triangular solves, a kernel a level and a thread a row (a row's sum
// in its stored order: reruns are bit-identical; they agree with the oracle's wider sums to
// rounding). Private to la's sources.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <la/context.hpp>
#include <la/detail/device_complex.cuh>
#include <la/grid.cuh>
#include <la/vector.hpp>
#include <la/solvers/detail/complex_ic0.hpp>
#include <la/solvers/detail/complex_ilu0.hpp>

namespace la::complex_device_detail {

/// x_i = (x_i - sum_k v_k x_{ci_k}) inv_d_i for the rows of one level, in place (the rows a
/// row reads are on earlier levels).
template <typename C, typename O>
__global__ void triangle_level(const O* rp, const index_t* ci, const C* v, const C* inv_d, const index_t* rows, index_t count,
                               C* x) {
  LA_GRID_STRIDE(t, count) {
    const index_t i = rows[t];
    C s = x[i];
    for (O k = rp[i]; k < rp[i + 1]; ++k) s -= v[k] * x[ci[k]];
    x[i] = s * inv_d[i];
  }
}

/// out_j = s_j in[p_j] (p, s null: a copy; s null: no scaling).
template <typename C, typename R>
__global__ void gather_scale(index_t n, const index_t* p, const R* s, const C* in, C* out) {
  LA_GRID_STRIDE(j, n) {
    const C v = in[p ? p[j] : j];
    out[j] = s ? C(v.re * s[j], v.im * s[j]) : v;
  }
}

/// A triangular factor on the device: each row's entries off the diagonal (CSR), the
/// reciprocal of its diagonal (1 for a unit one), and the rows in the order of their levels.
template <typename T, typename O>
struct device_triangle {
  using C = detail::device_value_t<T>;
  device_buffer<O> rp;
  device_buffer<index_t> ci, rows;
  device_buffer<T> v, inv_d;
  std::vector<index_t> level_ptr;  // level l's rows: rows[level_ptr[l], level_ptr[l + 1])

  /// From rows of (column, value) off the diagonal and the diagonal's values (unit: all one);
  /// lower: every column below the row's, else above.
  device_triangle(context& ctx, const std::vector<std::vector<std::pair<index_t, T>>>& off, const std::vector<T>& diag, bool lower) {
    const index_t n = static_cast<index_t>(off.size());
    std::vector<O> hp{0};
    std::vector<index_t> hc;
    std::vector<T> hv, hd(static_cast<std::size_t>(n));
    std::vector<index_t> level(static_cast<std::size_t>(n), 0);
    for (index_t i = 0; i < n; ++i) {
      for (const auto& [c, x] : off[i]) hc.push_back(c), hv.push_back(x);
      hp.push_back(static_cast<O>(hc.size()));
      hd[i] = T(1) / diag[i];
    }
    for (index_t t = 0; t < n; ++t) {  // levels in dependency order
      const index_t i = lower ? t : n - 1 - t;
      for (const auto& e : off[i]) level[i] = std::max(level[i], level[e.first] + 1);
    }
    const index_t levels = n ? *std::max_element(level.begin(), level.end()) + 1 : 0;
    level_ptr.assign(static_cast<std::size_t>(levels) + 1, 0);
    for (index_t i = 0; i < n; ++i) ++level_ptr[level[i] + 1];
    for (index_t l = 0; l < levels; ++l) level_ptr[l + 1] += level_ptr[l];
    std::vector<index_t> order(static_cast<std::size_t>(n)), next(level_ptr.begin(), level_ptr.end() - (levels ? 1 : 0));
    for (index_t i = 0; i < n; ++i) order[next[level[i]]++] = i;
    rp = upload_async(ctx, hp), ci = upload_async(ctx, hc), rows = upload_async(ctx, order), v = upload_async(ctx, hv),
    inv_d = upload_async(ctx, hd);
    ctx.synchronize();  // the uploads read these host vectors, which end here
  }
  /// x = T^-1 x in place on s: a launch a level.
  void solve(C* x, cudaStream_t s) const {
    for (std::size_t l = 0; l + 1 < level_ptr.size(); ++l) {
      const index_t count = level_ptr[l + 1] - level_ptr[l];
      triangle_level<C, O><<<detail::grid_for(count), detail::block_threads, 0, s>>>(
          rp.data(), ci.data(), detail::device_ptr(v.data()), detail::device_ptr(inv_d.data()), rows.data() + level_ptr[l], count, x);
      LA_CHECK_LAUNCH(s);
    }
  }
  std::size_t levels() const { return level_ptr.empty() ? 0 : level_ptr.size() - 1; }
  double bytes() const { return double(v.size()) * sizeof(T) + double(ci.size()) * sizeof(index_t) + double(rp.size()) * sizeof(O); }
};

/// M^-1 on the device: ILU(0) (L unit, U; after the matching's Dr P and Dc where it ran) or
/// IC(0) (L, L^H).
template <typename T, typename O>
struct device_factored {
  using C = detail::device_value_t<T>;
  using R = real_of_t<T>;
  preconditioner kind;
  std::string label;  // " + ilu0", " + ilu0 (matched)", " + ic0", " + ic0 (shift s)"
  std::optional<device_triangle<T, O>> lower, upper;
  device_buffer<index_t> perm;
  device_buffer<R> dr, dc;
  bool matched = false;

  /// Built from A by the host oracle; "" or why the factorization does not exist (the host's words).
  std::string build(context& ctx, const csr_matrix<T, O>& a, preconditioner p, double max_shift) {
    using Row = std::vector<std::pair<index_t, T>>;
    kind = p;
    const index_t n = a.rows();
    std::vector<Row> lo(static_cast<std::size_t>(n)), up(static_cast<std::size_t>(n));
    std::vector<T> dl(static_cast<std::size_t>(n), T(1)), du(static_cast<std::size_t>(n));
    if (p == preconditioner::ilu0) {
      complex_krylov_detail::ilu0_factors<T, O> f;
      if (std::string why = f.build(a); !why.empty()) return "ILU(0) does not exist for this A: " + why + " (use precond jacobi or none)";
      const auto& rp = f.lu.row_ptr();
      for (index_t i = 0; i < n; ++i)
        for (O k = rp[i]; k < rp[i + 1]; ++k) {
          const index_t j = f.lu.col_idx()[k];
          const T x = f.lu.values()[k];
          if (j < i) lo[i].push_back({j, x});
          else if (j > i) up[i].push_back({j, x});
          else du[i] = x;
        }
      matched = f.matched();
      if (matched) {
        std::vector<R> hr(f.dr.begin(), f.dr.end()), hc(f.dc.begin(), f.dc.end());
        perm = upload_async(ctx, f.perm), dr = upload_async(ctx, hr), dc = upload_async(ctx, hc);
        ctx.synchronize();  // as the triangles' uploads: hr, hc and f end with this block
      }
      label = matched ? " + ilu0 (matched)" : " + ilu0";
    } else {
      complex_krylov_detail::ic0_factors<T, O> f;
      if (std::string why = f.build(a, max_shift); !why.empty()) return "IC(0) does not exist for this A: " + why + " (use precond jacobi or ilu0)";
      const auto& rp = f.l.row_ptr();
      for (index_t i = 0; i < n; ++i)
        for (O k = rp[i]; k < rp[i + 1]; ++k) {
          const index_t j = f.l.col_idx()[k];
          const T x = f.l.values()[k];
          if (j < i) lo[i].push_back({j, x}), up[j].push_back({i, std::conj(x)});  // L^H's row j holds conj(l_ij)
          else dl[i] = du[i] = x;
        }
      label = f.shift > 0 ? " + ic0 (shift " + short_number(f.shift) + ")" : std::string(" + ic0");
    }
    lower.emplace(ctx, lo, dl, true);
    upper.emplace(ctx, up, du, false);
    return {};
  }
  /// out = M^-1 in (out its own buffer of n values).
  void apply(const C* in, C* out, index_t n, cudaStream_t s) const {
    if (n == 0) return;
    const unsigned g = detail::grid_for(n);
    gather_scale<C, R><<<g, detail::block_threads, 0, s>>>(n, matched ? perm.data() : nullptr, matched ? dr.data() : nullptr, in, out);
    LA_CHECK_LAUNCH(s);
    lower->solve(out, s);
    upper->solve(out, s);
    if (matched) {
      gather_scale<C, R><<<g, detail::block_threads, 0, s>>>(n, nullptr, dc.data(), out, out);
      LA_CHECK_LAUNCH(s);
    }
  }
  double bytes() const { return lower->bytes() + upper->bytes(); }
};

}  // namespace la::complex_device_detail
