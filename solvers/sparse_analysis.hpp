// The symbolic analysis of a sparse direct solve (issue 57's first step), on the host: a
// fill-reducing ordering from the libraries made for it (METIS nested dissection, SuiteSparse's
// AMD; natural where neither was found at build time), the elimination tree of the permuted
// symmetric pattern, its postorder, the factor's column counts, the fundamental supernodes, and
// the predicted factor size and work, all before any numeric work. The numeric oracle below
// (sparse_cholesky_host) is the plain up-looking factorization the GPU's supernodal one will be
// compared with.
//
//   la::sparse_analysis s = la::analyze_pattern(a);          // a: csr_matrix, square
//   s.factor_nnz, s.factor_flops, s.ordering                  // reported before factoring
//   la::sparse_cholesky<double> l = la::sparse_cholesky_host(a, s);
//   if (l.ok()) l.solve(b);                                   // b overwritten with x
//
// The pattern used is that of A + A^T (a non-symmetric A's symmetrized pattern, as the static-
// pivoting LU of the issue will use); the values are not read by the analysis.
#pragma once

#include <string>
#include <vector>

#include <la/formats/csr.hpp>
#include <la/solvers/direct_options.hpp>
#include <la/types.hpp>

namespace la {

// fill_ordering and to_string(fill_ordering): direct_options.hpp.
/// Whether this build holds the library for o (natural and automatic always).
bool ordering_available(fill_ordering o) noexcept;

struct sparse_analysis {
  index_t n = 0;
  fill_ordering ordering = fill_ordering::natural;  // the one used
  /// new -> old: row (and column) i of P A P^T is row perm[i] of A; the elimination tree's
  /// postorder is folded in, so every supernode is a run of consecutive columns.
  std::vector<index_t> perm;
  std::vector<index_t> inverse;     // old -> new
  std::vector<index_t> parent;      // elimination tree of the permuted pattern (-1: a root); parent[j] > j
  std::vector<count_t> col_count;   // nonzeros in column j of L, the diagonal included
  std::vector<index_t> super_begin; // supernode s: columns [super_begin[s], super_begin[s + 1])
  count_t factor_nnz = 0;           // sum of col_count: nnz(L)
  double factor_flops = 0;          // sum of col_count^2: Cholesky's multiply-adds, about
  double factor_bytes = 0;          // L's values (8 bytes) and row indices (4 bytes)
  double seconds = 0;
  /// automatic asked, and this build has neither METIS nor AMD: natural taken (summary() says so).
  bool no_ordering_library = false;
  std::string summary() const;      // one line for a person
};

/// Throws la::invalid_argument for a matrix that is not square, and la::not_supported for an
/// ordering this build does not hold (naming the Debian package).
/// flop_rate: the factorization's expected speed (flop/s), for automatic's choice (the GPU's
/// multifrontal runs at about 2e11 on grids; the host oracle at about 1e9).
template <typename T, typename O>
sparse_analysis analyze_pattern(const csr_matrix<T, O>& a, fill_ordering o = fill_ordering::automatic, double flop_rate = 2e11);

/// Row k of the permuted A (P A P^T), on and left of the diagonal: scatter(j, a_kj) for each
/// stored entry (j in the permuted numbering), and its reach in the elimination tree written to
/// stack[top, n), descendants before ancestors; returns top. mark (n entries) holds k where a
/// column was reached (start it at -1); path is scratch. The up-looking factorizations' first step.
template <typename T, typename O, typename Scatter>
index_t row_reach(const csr_matrix<T, O>& a, const sparse_analysis& s, index_t k, std::vector<index_t>& mark,
                  std::vector<index_t>& stack, std::vector<index_t>& path, Scatter&& scatter) {
  const index_t old = s.perm[k];
  index_t top = s.n;
  mark[k] = k;
  for (O p = a.row_ptr()[old]; p < a.row_ptr()[old + 1]; ++p) {
    const index_t j = s.inverse[a.col_idx()[p]];
    if (j > k) continue;
    scatter(j, a.values()[p]);
    path.clear();
    for (index_t i = j; mark[i] != k; i = s.parent[i]) path.push_back(i), mark[i] = k;
    while (!path.empty()) stack[--top] = path.back(), path.pop_back();
  }
  return top;
}

/// L with A = L L^T in the analysis's ordering, column-compressed (rows sorted in each column,
/// the diagonal first); ok() false with bad_column (1-based, in A's own numbering) where a
/// pivot is not positive.
template <typename T>
struct sparse_cholesky {
  const sparse_analysis* analysis = nullptr;
  std::vector<count_t> col_ptr;
  std::vector<index_t> row_idx;
  std::vector<T> values;
  index_t bad_column = 0;
  bool ok() const noexcept { return bad_column == 0; }
  /// b (n entries, A's numbering) overwritten with A^-1 b.
  void solve(T* b) const;
};

/// The oracle: up-looking sparse Cholesky (row k of L from the elimination tree's reach of row
/// k of A), sums in wider_t. Reads the lower triangle of A as given (A is taken as symmetric).
template <typename T, typename O>
sparse_cholesky<T> sparse_cholesky_host(const csr_matrix<T, O>& a, const sparse_analysis& s);

/// A = Dr^-1 P^T Q^T (L U) Q Dc^-1: LU with static pivoting, as SuperLU_DIST's: a
/// maximum-product matching and its scalings put a heavy diagonal on Dr P A Dc (entries at
/// most 1, the matched ones 1: matching/matching.hpp), the analysis orders the symmetrized
/// pattern of that matrix (Q), and the factorization runs without pivoting on the Cholesky
/// structure of Q (M + M^T) Q^T; a pivot smaller than sqrt(eps) is set to +-sqrt(eps) and
/// counted (the caller refines). L is unit lower (by columns, below the diagonal), U is kept
/// by rows (its strict upper part) with its diagonal apart.
template <typename T>
struct sparse_lu {
  sparse_analysis analysis;  // of the matched matrix
  std::vector<index_t> row_perm;               // the matching's: row row_perm[j] of A is row j of P A
  std::vector<double> row_scale, col_scale;    // Dr (by A's rows), Dc (by A's columns)
  std::vector<count_t> l_ptr, u_ptr;           // n + 1 each
  std::vector<index_t> l_idx, u_idx;           // L's rows (by column), U's columns (by row)
  std::vector<T> l_val, u_val, u_diag;
  index_t perturbed = 0;                       // pivots set to +-sqrt(eps)
  index_t singular_column = 0;                 // structurally singular: a column (1-based) no row matches
  bool ok() const noexcept { return singular_column == 0; }
  /// b (n entries, A's numbering) overwritten with the factors' solution of A x = b.
  void solve(T* b) const;
};

/// The matching, the analysis (ordering o) and the numeric LU of the host oracle, sums in
/// wider_t. A structurally singular A is ok() false naming the column.
/// match = false skips the matching (the rows as they are, no scaling): for a zero-free
/// diagonal where the matching's search gives up (a dense row's paths).
template <typename T, typename O>
sparse_lu<T> sparse_lu_host(const csr_matrix<T, O>& a, fill_ordering o = fill_ordering::automatic, bool match = true);

}  // namespace la
