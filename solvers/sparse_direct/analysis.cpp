// The symbolic analysis and the host oracle of the sparse direct solver (sparse_analysis.hpp).
// Orderings come from METIS (METIS_NodeND) and SuiteSparse's AMD when CMake found them
// (LA_HAVE_METIS, LA_HAVE_AMD, set on this file alone); the rest is la's own:
//  - the elimination tree by Liu's algorithm with path compression, on the lower triangle of
//    the permuted pattern of A + A^T;
//  - its postorder, folded into the permutation, so supernodes are runs of columns;
//  - column counts from the row subtrees (row k of L is the tree's reach of row k of A), in
//    O(nnz(L)) time;
//  - fundamental supernodes (a column joins its only child's supernode when its structure is
//    the child's less the child's diagonal).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include <la/solvers/sparse_analysis.hpp>

#if defined(LA_HAVE_METIS)
#include <metis.h>
#endif
#if defined(LA_HAVE_AMD)
#include <amd.h>
#endif

namespace la {

const char* to_string(fill_ordering o) noexcept {
  switch (o) {
    case fill_ordering::automatic: return "auto";
    case fill_ordering::natural: return "natural";
    case fill_ordering::amd: return "amd";
    case fill_ordering::metis: return "metis";
  }
  return "?";
}

std::optional<fill_ordering> parse_fill_ordering(const std::string& s) {
  for (fill_ordering o : {fill_ordering::automatic, fill_ordering::natural, fill_ordering::amd, fill_ordering::metis})
    if (s == to_string(o)) return o;
  return std::nullopt;
}
const char* to_string(refinement_kind k) noexcept {
  switch (k) {
    case refinement_kind::automatic: return "auto";
    case refinement_kind::classical: return "classical";
    case refinement_kind::gmres: return "gmres";
  }
  return "unknown";
}
std::optional<refinement_kind> parse_refinement(const std::string& s) {
  for (refinement_kind k : {refinement_kind::automatic, refinement_kind::classical, refinement_kind::gmres})
    if (s == to_string(k)) return k;
  return std::nullopt;
}
const char* to_string(sparse_factorization f) noexcept {
  switch (f) {
    case sparse_factorization::automatic: return "auto";
    case sparse_factorization::lu: return "lu";
    case sparse_factorization::spd: return "spd";
  }
  return "unknown";
}

bool ordering_available(fill_ordering o) noexcept {
  switch (o) {
    case fill_ordering::metis:
#if defined(LA_HAVE_METIS)
      return true;
#else
      return false;
#endif
    case fill_ordering::amd:
#if defined(LA_HAVE_AMD)
      return true;
#else
      return false;
#endif
    default: return true;
  }
}

std::string sparse_analysis::summary() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s ordering: nnz(L) %lld, %.3g flops, %.3g MB, %zu supernodes (%.3f s)", to_string(ordering),
                static_cast<long long>(factor_nnz), factor_flops, factor_bytes / 1e6,
                super_begin.empty() ? std::size_t(0) : super_begin.size() - 1, seconds);
  if (no_ordering_library)
    return std::string("WARNING: no fill-reducing ordering (this build found neither METIS nor SuiteSparse AMD: install "
                       "libmetis-dev and libsuitesparse-dev and reconfigure; the factor can be many times larger), ") + buf;
  return buf;
}

namespace {
/// The symmetric adjacency of A + A^T without the diagonal: sorted, no duplicates.
struct graph {
  std::vector<index_t> ptr, adj;
};
template <typename T, typename O>
graph symmetric_graph(const csr_matrix<T, O>& a) {
  const index_t n = a.rows();
  graph g;
  std::vector<index_t> deg(static_cast<std::size_t>(n) + 1, 0);
  for (index_t i = 0; i < n; ++i)
    for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
      const index_t j = a.col_idx()[k];
      if (j != i) ++deg[i], ++deg[j];
    }
  g.ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for (index_t i = 0; i < n; ++i) g.ptr[i + 1] = g.ptr[i] + deg[i];
  LA_EXPECTS(g.ptr[n] >= 0, "sparse analysis: the symmetrized pattern has more than 2^31 entries");
  g.adj.resize(static_cast<std::size_t>(g.ptr[n]));
  std::vector<index_t> fill(g.ptr.begin(), g.ptr.end() - 1);
  for (index_t i = 0; i < n; ++i)
    for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
      const index_t j = a.col_idx()[k];
      if (j != i) g.adj[fill[i]++] = j, g.adj[fill[j]++] = i;
    }
  // Sort and drop duplicates in place, then close the gaps.
  index_t out = 0;
  for (index_t i = 0; i < n; ++i) {
    const index_t b = g.ptr[i], e = g.ptr[i + 1];
    std::sort(g.adj.begin() + b, g.adj.begin() + e);
    const index_t start = out;
    for (index_t k = b; k < e; ++k)
      if (k == b || g.adj[k] != g.adj[k - 1]) g.adj[out++] = g.adj[k];
    g.ptr[i] = start;
  }
  g.ptr[n] = out;
  g.adj.resize(static_cast<std::size_t>(out));
  return g;
}

std::vector<index_t> order(const graph& g, index_t n, fill_ordering o) {
  std::vector<index_t> perm(static_cast<std::size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  // No edges (a diagonal A): every order is fill-free, and the libraries refuse empty arrays.
  if (n == 0 || o == fill_ordering::natural || (ordering_available(o) && g.adj.empty())) return perm;
  if (o == fill_ordering::metis) {
#if defined(LA_HAVE_METIS)
    idx_t nv = n;
    std::vector<idx_t> xadj(g.ptr.begin(), g.ptr.end()), adjncy(g.adj.begin(), g.adj.end()), mp(n), ip(n);
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = 7;  // reruns give the same ordering
    const int st = METIS_NodeND(&nv, xadj.data(), adjncy.data(), nullptr, options, mp.data(), ip.data());
    if (st != METIS_OK) throw error("sparse analysis: METIS_NodeND failed (status " + std::to_string(st) + ")");
    for (index_t i = 0; i < n; ++i) perm[i] = static_cast<index_t>(mp[i]);
    return perm;
#endif
  }
  if (o == fill_ordering::amd) {
#if defined(LA_HAVE_AMD)
    double control[AMD_CONTROL], info[AMD_INFO];
    amd_defaults(control);
    std::vector<int> p(static_cast<std::size_t>(n));
    const int st = amd_order(n, g.ptr.data(), g.adj.data(), p.data(), control, info);
    if (st != AMD_OK && st != AMD_OK_BUT_JUMBLED)
      throw error("sparse analysis: AMD failed (status " + std::to_string(st) + ")");
    for (index_t i = 0; i < n; ++i) perm[i] = p[i];
    return perm;
#endif
  }
  throw not_supported(std::string("sparse analysis: this build has no ") + to_string(o) + " ordering: install " +
                      (o == fill_ordering::metis ? "libmetis-dev" : "libsuitesparse-dev") +
                      " and configure la again (or ask for auto or natural)");
}

/// Row k of the permuted lower triangle (columns j < k) for every k: CSR.
graph permuted_lower(const graph& g, const std::vector<index_t>& perm, const std::vector<index_t>& inv) {
  const index_t n = static_cast<index_t>(perm.size());
  graph l;
  l.ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for (index_t k = 0; k < n; ++k) {
    const index_t old = perm[k];
    index_t c = 0;
    for (index_t p = g.ptr[old]; p < g.ptr[old + 1]; ++p) c += inv[g.adj[p]] < k;
    l.ptr[k + 1] = l.ptr[k] + c;
  }
  l.adj.resize(static_cast<std::size_t>(l.ptr[n]));
  for (index_t k = 0; k < n; ++k) {
    index_t o = l.ptr[k];
    const index_t old = perm[k];
    for (index_t p = g.ptr[old]; p < g.ptr[old + 1]; ++p)
      if (const index_t j = inv[g.adj[p]]; j < k) l.adj[o++] = j;
  }
  return l;
}

std::vector<index_t> etree(const graph& lower) {
  const index_t n = static_cast<index_t>(lower.ptr.size()) - 1;
  std::vector<index_t> parent(static_cast<std::size_t>(n), -1), anc(static_cast<std::size_t>(n), -1);
  for (index_t k = 0; k < n; ++k)
    for (index_t p = lower.ptr[k]; p < lower.ptr[k + 1]; ++p)
      for (index_t i = lower.adj[p]; i != -1 && i < k;) {
        const index_t next = anc[i];
        anc[i] = k;  // path compression
        if (next == -1) parent[i] = k;
        i = next;
      }
  return parent;
}

/// The tree's postorder: children before parents, siblings in increasing order.
std::vector<index_t> postorder(const std::vector<index_t>& parent) {
  const index_t n = static_cast<index_t>(parent.size());
  std::vector<index_t> head(static_cast<std::size_t>(n), -1), next(static_cast<std::size_t>(n), -1), post;
  post.reserve(static_cast<std::size_t>(n));
  for (index_t j = n - 1; j >= 0; --j)
    if (parent[j] != -1) next[j] = head[parent[j]], head[parent[j]] = j;
  std::vector<index_t> stack;
  for (index_t r = 0; r < n; ++r) {
    if (parent[r] != -1) continue;
    stack.push_back(r);
    while (!stack.empty()) {
      const index_t p = stack.back();
      const index_t c = head[p];
      if (c == -1) {
        stack.pop_back();
        post.push_back(p);
      } else {
        head[p] = next[c];
        stack.push_back(c);
      }
    }
  }
  return post;
}

/// The column counts of L (the diagonal included) in O(nnz(A) alpha(n)), without forming L:
/// Gilbert, Ng and Peyton's algorithm (1994; the form of Davis's "Direct Methods for Sparse
/// Linear Systems", 4.5). The tree must be postordered (the analysis folds its postorder into
/// the ordering, so a node's descendants are the indices just below it). Row i of L is the
/// row subtree of i: the union of the tree paths from row i's entries up to i. A column j
/// gains 1 for each row subtree it is a leaf of, and the overlap of two consecutive leaves'
/// paths is taken off at their least common ancestor (a disjoint-set forest); summing these
/// deltas up the tree gives the counts. (Walking every row's paths, as before, is O(nnz(L)):
/// 23% of the analysis on a 3D grid.)
std::vector<count_t> column_counts(const graph& lower, const std::vector<index_t>& parent) {
  const index_t n = static_cast<index_t>(parent.size());
  const auto sz = static_cast<std::size_t>(n);
  // Column j's entries below the diagonal (rows i > j), from the rows' lists (a transpose).
  std::vector<index_t> cptr(sz + 1, 0), crow(lower.adj.size());
  for (index_t p = 0; p < lower.ptr[n]; ++p) ++cptr[static_cast<std::size_t>(lower.adj[p]) + 1];
  for (std::size_t j = 0; j < sz; ++j) cptr[j + 1] += cptr[j];
  {
    std::vector<index_t> at(cptr.begin(), cptr.end() - 1);
    for (index_t i = 0; i < n; ++i)
      for (index_t p = lower.ptr[i]; p < lower.ptr[i + 1]; ++p) crow[static_cast<std::size_t>(at[lower.adj[p]]++)] = i;
  }
  // first[j]: j's first descendant (the smallest index in its subtree); a leaf is its own.
  std::vector<index_t> first(sz, -1);
  std::vector<count_t> delta(sz, 0);
  for (index_t k = 0; k < n; ++k) {
    delta[k] = first[k] == -1 ? 1 : 0;  // a leaf of the tree
    for (index_t j = k; j != -1 && first[j] == -1; j = parent[j]) first[j] = k;
  }
  std::vector<index_t> maxfirst(sz, -1), prevleaf(sz, -1), ancestor(sz);
  for (index_t i = 0; i < n; ++i) ancestor[i] = i;
  for (index_t j = 0; j < n; ++j) {
    if (parent[j] != -1) --delta[parent[j]];  // j is not a root
    for (index_t p = cptr[j]; p < cptr[j + 1]; ++p) {
      const index_t i = crow[p];  // a_ij != 0, i > j: is j a leaf of row i's subtree?
      if (first[j] <= maxfirst[i]) continue;  // no: a descendant of j met row i already
      maxfirst[i] = first[j];
      const index_t jprev = prevleaf[i];
      prevleaf[i] = j;
      ++delta[j];
      if (jprev == -1) continue;  // row i's first leaf
      index_t q = jprev;          // the least common ancestor of jprev and j
      while (q != ancestor[q]) q = ancestor[q];
      for (index_t t = jprev; t != q;) {  // path compression
        const index_t up = ancestor[t];
        ancestor[t] = q;
        t = up;
      }
      --delta[q];  // the paths from jprev and from j overlap from q up
    }
    if (parent[j] != -1) ancestor[j] = parent[j];
  }
  for (index_t j = 0; j < n; ++j)
    if (parent[j] != -1) delta[parent[j]] += delta[j];
  return delta;
}

sparse_analysis analyze_with(const graph& g, index_t n, fill_ordering o) {
  sparse_analysis s;
  s.n = n;
  s.ordering = o;
  std::vector<index_t> perm = order(g, n, o), inv(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) inv[perm[i]] = i;
  {  // fold the elimination tree's postorder into the ordering
    const std::vector<index_t> post = postorder(etree(permuted_lower(g, perm, inv)));
    std::vector<index_t> p2(static_cast<std::size_t>(n));
    for (index_t k = 0; k < n; ++k) p2[k] = perm[post[k]];
    perm.swap(p2);
    for (index_t i = 0; i < n; ++i) inv[perm[i]] = i;
  }
  const graph lower = permuted_lower(g, perm, inv);
  s.parent = etree(lower);
  s.col_count = column_counts(lower, s.parent);
  // Fundamental supernodes.
  std::vector<index_t> children(static_cast<std::size_t>(n), 0);
  for (index_t j = 0; j < n; ++j)
    if (s.parent[j] != -1) ++children[s.parent[j]];
  for (index_t j = 0; j < n; ++j)
    if (j == 0 || s.parent[j - 1] != j || children[j] != 1 || s.col_count[j - 1] != s.col_count[j] + 1)
      s.super_begin.push_back(j);
  s.super_begin.push_back(n);
  for (index_t j = 0; j < n; ++j) {
    const double c = static_cast<double>(s.col_count[j]);
    s.factor_nnz += s.col_count[j];
    s.factor_flops += c * c;
  }
  s.factor_bytes = 12.0 * static_cast<double>(s.factor_nnz);
  s.perm = std::move(perm);
  s.inverse = std::move(inv);
  return s;
}
}  // namespace

template <typename T, typename O>
sparse_analysis analyze_pattern(const csr_matrix<T, O>& a, fill_ordering o, double flop_rate) {
  const auto t0 = std::chrono::steady_clock::now();
  LA_EXPECTS(a.rows() == a.cols(), "sparse analysis: A is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                                       "; a direct solve needs a square matrix");
  const graph g = symmetric_graph(a);
  sparse_analysis best;
  if (o != fill_ordering::automatic) {
    best = analyze_with(g, a.rows(), o);
  } else {
    // auto: AMD first (fast: 0.4 s on a 1M-row 2D grid where METIS takes 4 s, 2 cores);
    // METIS too only where the factorization AMD's ordering predicts would take longer, at
    // flop_rate, than METIS's own run (about 3 us a row): the fill METIS saves is then worth
    // its time. The smaller predicted factor is kept; natural where neither library is built.
    const bool amd = ordering_available(fill_ordering::amd), metis = ordering_available(fill_ordering::metis);
    if (amd) best = analyze_with(g, a.rows(), fill_ordering::amd);
    if (metis && (!amd || best.factor_flops / flop_rate > 3e-6 * double(a.rows()))) {
      sparse_analysis m = analyze_with(g, a.rows(), fill_ordering::metis);
      if (!amd || m.factor_nnz < best.factor_nnz) best = std::move(m);
    }
    if (!amd && !metis) {
      best = analyze_with(g, a.rows(), fill_ordering::natural);
      best.no_ordering_library = true;
    }
  }
  best.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return best;
}

template <typename T, typename O>
sparse_cholesky<T> sparse_cholesky_host(const csr_matrix<T, O>& a, const sparse_analysis& s) {
  using W = wider_t<T>;
  const index_t n = s.n;
  LA_EXPECTS(a.rows() == n && a.cols() == n, "sparse_cholesky_host: A does not match its analysis");
  sparse_cholesky<T> l;
  l.analysis = &s;
  l.col_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for (index_t j = 0; j < n; ++j) l.col_ptr[j + 1] = l.col_ptr[j] + s.col_count[j];
  l.row_idx.assign(static_cast<std::size_t>(l.col_ptr[n]), 0);
  l.values.assign(static_cast<std::size_t>(l.col_ptr[n]), T(0));
  std::vector<count_t> next(l.col_ptr.begin(), l.col_ptr.end() - 1);  // each column's next free slot
  std::vector<W> x(static_cast<std::size_t>(n), W(0));
  std::vector<index_t> mark(static_cast<std::size_t>(n), -1), stack(static_cast<std::size_t>(n)), path;
  for (index_t k = 0; k < n; ++k) {
    // Row k of the permuted A, on and left of the diagonal, scattered; its reach in the tree.
    index_t top = row_reach(a, s, k, mark, stack, path, [&](index_t j, const T& v) { x[j] += static_cast<W>(v); });
    // stack[top..n): descendants before ancestors.
    W d = x[k];
    x[k] = 0;
    for (; top < n; ++top) {
      const index_t i = stack[top];
      const W lki = x[i] / static_cast<W>(l.values[l.col_ptr[i]]);
      x[i] = 0;
      for (count_t p = l.col_ptr[i] + 1; p < next[i]; ++p) x[l.row_idx[p]] -= static_cast<W>(l.values[p]) * lki;
      d -= lki * lki;
      const count_t p = next[i]++;
      l.row_idx[p] = k;
      l.values[p] = static_cast<T>(lki);
    }
    if (!(d > 0)) {
      l.bad_column = s.perm[k] + 1;
      return l;
    }
    const count_t p = next[k]++;
    l.row_idx[p] = k;
    l.values[p] = static_cast<T>(std::sqrt(d));
  }
  return l;
}

template <typename T>
void sparse_cholesky<T>::solve(T* b) const {
  using W = wider_t<T>;
  const sparse_analysis& s = *analysis;
  const index_t n = s.n;
  std::vector<W> x(static_cast<std::size_t>(n));
  for (index_t k = 0; k < n; ++k) x[k] = b[s.perm[k]];
  for (index_t j = 0; j < n; ++j) {  // L y = P b
    x[j] /= values[col_ptr[j]];
    for (count_t p = col_ptr[j] + 1; p < col_ptr[j + 1]; ++p) x[row_idx[p]] -= static_cast<W>(values[p]) * x[j];
  }
  for (index_t j = n - 1; j >= 0; --j) {  // L^T z = y
    for (count_t p = col_ptr[j] + 1; p < col_ptr[j + 1]; ++p) x[j] -= static_cast<W>(values[p]) * x[row_idx[p]];
    x[j] /= values[col_ptr[j]];
  }
  for (index_t k = 0; k < n; ++k) b[s.perm[k]] = static_cast<T>(x[k]);
}

#define LA_SPARSE_ANALYSIS(T, O)                                                                          \
  template sparse_analysis analyze_pattern<T, O>(const csr_matrix<T, O>&, fill_ordering, double);                 \
  template sparse_cholesky<T> sparse_cholesky_host<T, O>(const csr_matrix<T, O>&, const sparse_analysis&);
LA_SPARSE_ANALYSIS(float, std::int32_t)
LA_SPARSE_ANALYSIS(double, std::int32_t)
LA_SPARSE_ANALYSIS(float, std::int64_t)
LA_SPARSE_ANALYSIS(double, std::int64_t)
template sparse_analysis analyze_pattern<std::complex<double>, std::int32_t>(const csr_matrix<std::complex<double>, std::int32_t>&,
                                                                           fill_ordering, double);
template sparse_analysis analyze_pattern<std::complex<double>, std::int64_t>(const csr_matrix<std::complex<double>, std::int64_t>&,
                                                                           fill_ordering, double);
template struct sparse_cholesky<float>;
template struct sparse_cholesky<double>;

}  // namespace la
