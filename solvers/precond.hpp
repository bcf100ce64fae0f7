// Preconditioners on the host: the families' algorithms, which are the oracles for the GPU
// setup (device_precond.hpp), and host_preconditioner, which the host backends apply. Each
// family's registry entry (solvers/precond/*_entry.cpp, amg/entry.cpp) holds the host builder
// that wraps its algorithm below in a host_precond_operator; host_preconditioner reaches a
// family only through that entry.
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
#include <la/solvers/registry.hpp>

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

/// M^-1 for the host backends, built from CSR (any offset type) by the preconditioner's
/// registry entry (its host builder, the oracle: registry.hpp), applied in wider_t.
template <typename T>
class host_preconditioner {
 public:
  /// Builds M^-1 from A (converted to 64-bit offsets unless it has them); automatic resolved
  /// by select_preconditioner's rule for the host.
  template <typename O>
  host_preconditioner(const csr_matrix<T, O>& a, preconditioner kind, const precond_options& opt) {
    if (kind == preconditioner::automatic) kind = select_preconditioner(a.rows(), a.nnz(), false);
    const preconditioner_entry& e = entry_of(kind);
    const host_builder<T> build = e.host.get<T>();
    if (e.form != precond_form::apart || !build)
      throw invalid_argument(std::string("host_preconditioner: ") + to_string(kind) + " is built elsewhere");
    std::unique_ptr<host_precond_operator<T>> op;
    if constexpr (std::is_same_v<O, count_t>) op = build(a, opt);
    else op = build(to_csr<count_t>(a), opt);
    op->rep.kind = kind;
    rep_ = op->rep;
    op_ = std::move(op);
  }

  const precond_report& report() const { return rep_; }
  /// The build's time, as its owner measured it (host_solver).
  void set_setup_seconds(double s) { rep_.setup_seconds = s; }

  /// z = M^-1 r.
  void apply(const std::vector<T>& r, std::vector<T>& z) const { op_->apply(r, z); }

 private:
  std::shared_ptr<const host_precond_operator<T>> op_;  // shared by copies (host_solver's solves)
  precond_report rep_;
};

}  // namespace la
