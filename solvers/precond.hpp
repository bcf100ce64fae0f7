// Preconditioners on the host: the builders that are the oracles for the GPU setup
// (device_precond.hpp), and host_preconditioner, which the host CG backend applies.
//
//   block-Jacobi  supervariable_blocks: runs of consecutive rows with the same column
//                 pattern (the unknowns of one node in a structural model), cut at
//                 max_block rows; each diagonal block inverted by Cholesky (long double).
//   FSAI          fsai_factor (precond/fsai.hpp); M^-1 = G^T G, applied as two products.
//   IC(0)         ic0_factor: incomplete Cholesky on the pattern of tril(A), computed on
//                 the symmetrically scaled matrix D^-1/2 A D^-1/2 + shift I with the shifts
//                 of ic0_shifts tried in order; the factor is stored with the scaling
//                 folded in (D^1/2 L), so M = (D^1/2 L)(D^1/2 L)^T. Or paric0_factor's
//                 sweeps; applied as precond/factored.hpp's host_factors says.
//   AMG           host_amg (amg/hierarchy.hpp): smoothed aggregation, in double.
//   ILU(0)        ilu0_factor: incomplete LU on A's whole pattern (IKJ, no pivoting, no
//                 shift); L (unit diagonal) and U share A's pattern. Or parilu0_factor's
//                 sweeps, on Dr P A Dc where the diagonal has gaps (host_factors).
// level_schedule is the dependency order both triangular solves and the GPU factorization
// run in: row i is on level 1 + the largest level of the rows it depends on.
//
// A preconditioner that does not exist for the matrix (a non-positive diagonal, a block that
// is not positive definite, IC(0) with no shift in range, a zero ILU(0) pivot) is
// la::invalid_argument naming
// the row; the solvers turn it into a breakdown status (cg.hpp's rule).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <la/formats/convert.hpp>
#include <la/formats/csr.hpp>
#include <la/solvers/cg.hpp>
#include <la/solvers/amg/hierarchy.hpp>
#include <la/solvers/precond/block_jacobi.hpp>
#include <la/solvers/precond/factored.hpp>
#include <la/solvers/precond/fsai.hpp>
#include <la/solvers/precond/ilu.hpp>
#include <la/solvers/precond/messages.hpp>
#include <la/solvers/precond_options.hpp>

namespace la {

// ---- the host preconditioner ---------------------------------------------------------------

/// What preconditioner::automatic resolves to for CG, on the host and the GPU alike, from the
/// size and the mean row length: AMG on large systems with short rows (at least 1M rows and
/// at most 6 entries a row, a 2D grid's 5-point stencil), and on any system past 12M rows;
/// else FSAI, which exists for every SPD matrix and applies as two products. Measured on an
/// H100 (bench/RESULTS.md, "Algebraic multigrid"): AMG 2.4x to 18x Jacobi on 2D Poisson from
/// 1M to 16M rows and 1.05x on 3D Poisson 256^3, where FSAI is 1.0x to 1.14x and 0.82x; AMG
/// 0.3x to 0.86x Jacobi on 3D Poisson up to 8M rows and on the structural systems, where its
/// setup and its cycle cost more than the iterations it saves.
///
/// On the host (`gpu` false) AMG pays much earlier, since the host's setup is cheap against its
/// iterations: measured with `la solve --device cpu` on 2 cores (bench/history/defaults-the-host-solver-and-the-sanitiz.md, "Defaults on
/// the host"), AMG beats FSAI on 2D grids from 64^2 rows (8.0 vs 5.7 ms; 400^2: 1.30 vs 0.29 s)
/// and on 3D grids from 64^3 (even there, ahead beyond), and loses on the structural systems
/// (bcsstk26: 25 vs 87 ms) and on 3D grids below 64^3 (32^3: 52 vs 78 ms).
inline preconditioner select_preconditioner(std::int64_t rows, std::int64_t nnz, bool gpu = true) {
  const bool short_rows = rows > 0 && nnz <= 6 * rows;
  if (!gpu) return (rows >= 4096 && short_rows) || rows >= 262144 ? preconditioner::amg : preconditioner::fsai;
  return (rows >= 1000000 && short_rows) || rows >= 12000000 ? preconditioner::amg : preconditioner::fsai;
}

/// M^-1 for the host CG backend, built from CSR (any offset type), applied in wider_t.
template <typename T>
class host_preconditioner {
 public:
  /// Builds M^-1 from A (converted to 64-bit offsets unless it has them).
  template <typename O>
  host_preconditioner(const csr_matrix<T, O>& a, preconditioner kind, const precond_options& opt) {
    if constexpr (std::is_same_v<O, count_t>) build(a, kind, opt);
    else build(to_csr<count_t>(a), kind, opt);
  }

  const precond_report& report() const { return rep_; }

  /// z = M^-1 r.
  void apply(const std::vector<T>& r, std::vector<T>& z) const {
    using W = wider_t<T>;
    const index_t n = static_cast<index_t>(r.size());
    switch (rep_.kind) {
      case preconditioner::block_jacobi: {
        std::size_t off = 0;
        for (std::size_t b = 0; b + 1 < starts_.size(); ++b) {
          const index_t s0 = starts_[b], s = starts_[b + 1] - s0;
          for (index_t i = 0; i < s; ++i) {
            W v = 0;
            for (index_t j = 0; j < s; ++j) v += static_cast<W>(inv_[off + i * s + j]) * r[s0 + j];
            z[s0 + i] = static_cast<T>(v);
          }
          off += static_cast<std::size_t>(s) * s;
        }
        break;
      }
      case preconditioner::fsai:  // t = G r, z = G^T t
        t_.resize(r.size());
        for (index_t i = 0; i < n; ++i) t_[i] = static_cast<T>(row_dot(g_, i, r.data()));
        for (index_t i = 0; i < n; ++i) z[i] = static_cast<T>(row_dot(gt_, i, t_.data()));
        break;
      case preconditioner::ic0:
      case preconditioner::ilu0: fac_->apply(r, z); break;
      case preconditioner::amg: {
        rd_.assign(r.begin(), r.end());
        amg_->apply(rd_, zd_);
        for (std::size_t i = 0; i < z.size(); ++i) z[i] = static_cast<T>(zd_[i]);
        break;
      }
      default: break;
    }
  }

 private:
  void build(const csr_matrix<T, count_t>& a, preconditioner kind, const precond_options& opt) {
    if (kind == preconditioner::automatic) kind = select_preconditioner(a.rows(), a.nnz(), false);
    rep_.kind = kind;
    switch (kind) {
      case preconditioner::block_jacobi: {
        starts_ = supervariable_blocks(a, opt.max_block);
        inv_ = block_inverses(a, starts_);
        std::size_t largest = 0;
        for (std::size_t b = 0; b + 1 < starts_.size(); ++b)
          largest = std::max<std::size_t>(largest, starts_[b + 1] - starts_[b]);
        rep_.detail = std::to_string(starts_.size() - 1) + " blocks of up to " + std::to_string(largest) + " rows";
        rep_.bytes = double(inv_.size()) * sizeof(T) + double(starts_.size()) * sizeof(index_t);
        break;
      }
      case preconditioner::fsai: {
        index_t trimmed = 0;
        double flops = 0;
        g_ = fsai_factor(a, opt.fsai, &trimmed, &flops);
        gt_ = reference::transpose(g_);
        rep_.detail = std::string("pattern ") + to_string(opt.fsai.pattern) + ", " + std::to_string(g_.nnz()) +
                      " nonzeros in G" + fsai_budget_note(trimmed, opt.fsai.max_row, flops);
        rep_.bytes = 2.0 * g_.nnz() * (sizeof(T) + sizeof(index_t));
        break;
      }
      case preconditioner::ic0:
      case preconditioner::ilu0:
        fac_.emplace(a, kind == preconditioner::ilu0, opt);
        rep_ = fac_->report();
        break;
      case preconditioner::amg: {
        const auto t0 = std::chrono::steady_clock::now();
        amg_.emplace(a, opt.amg);
        rep_.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        rep_.detail = amg_->describe();
        rep_.bytes = amg_->bytes();
        break;
      }
      default: throw invalid_argument(std::string("host_preconditioner: ") + to_string(kind) + " is built elsewhere");
    }
  }

  static wider_t<T> row_dot(const csr_matrix<T, count_t>& m, index_t i, const T* x) {
    wider_t<T> v = 0;
    for (count_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k)
      v += static_cast<wider_t<T>>(m.values()[k]) * x[m.col_idx()[k]];
    return v;
  }

  precond_report rep_;
  std::vector<index_t> starts_;
  std::vector<T> inv_;
  csr_matrix<T, count_t> g_, gt_;  // FSAI: G and G^T
  std::optional<host_factors<T>> fac_;  // IC(0), ILU(0)
  std::optional<host_amg> amg_;         // AMG (in double)
  mutable std::vector<double> rd_, zd_;
  mutable std::vector<T> t_;
};

}  // namespace la
