// Row partitions of a sparse matrix for several GPUs (or MPI ranks): contiguous row blocks
// balanced by nonzeros, and for each part its local matrix and halo plan.
//
// Part p owns global rows [first_row, first_row + rows). Its local matrix keeps those rows
// with columns renumbered: an owned column c becomes c - first_row, in [0, rows); every
// other column is a halo column, numbered rows + k where k is its place in the sorted list
// `halo` of global column indices. Because parts are contiguous, the halo entries owned by
// part q are one range of that list, [recv_ptr[q], recv_ptr[q + 1]): a receive from q writes
// them in place. The send lists are the other side of the same exchange: part p sends to q
// the owned rows (local indices) send_idx[send_ptr[q] .. send_ptr[q + 1]), in the order q's
// halo lists them. link_sends() derives them from every part's receive lists when all parts
// are in one process; ranks of an MPI job exchange the same lists.
//
// Rows whose columns are all owned (interior) need no halo, so a distributed SpMV can run
// them while the halo is in flight and the boundary rows after. Global indices are 64-bit,
// so a partitioned system may have more than 2^31 rows in all; each part's local indices are
// index_t.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <la/error.hpp>
#include <la/formats/csr.hpp>

namespace la {

using global_index = std::int64_t;

/// Row boundaries (parts + 1 values, 0 first, rows last) of `parts` contiguous blocks whose
/// nonzero counts are as even as whole rows allow: block p ends at the first row whose
/// prefix count reaches (p + 1) / parts of the total. Empty blocks are possible (more parts
/// than rows).
template <typename O>
std::vector<global_index> balanced_row_blocks(const O* row_ptr, global_index rows, int parts) {
  LA_EXPECTS(parts >= 1, "partition: the number of parts must be at least 1");
  LA_EXPECTS(rows >= 0, "partition: negative row count");
  std::vector<global_index> b(static_cast<std::size_t>(parts) + 1, rows);
  b[0] = 0;
  const double total = static_cast<double>(row_ptr[rows] - row_ptr[0]);
  global_index r = 0;
  for (int p = 1; p < parts; ++p) {
    const double target = total * p / parts;
    // The first row boundary at or past the target, and not before the previous boundary.
    while (r < rows && static_cast<double>(row_ptr[r] - row_ptr[0]) < target) ++r;
    // Without nonzeros to balance, split by rows.
    b[p] = total > 0 ? r : rows * p / parts;
    b[p] = std::max(b[p], b[p - 1]);
  }
  return b;
}

/// What part p exchanges with the others.
struct halo_plan {
  int part = 0, parts = 1;
  global_index first_row = 0;
  index_t rows = 0;                    // owned rows
  std::vector<global_index> halo;      // sorted global columns not owned; local index rows + k
  std::vector<index_t> recv_ptr;       // parts + 1: halo[recv_ptr[q] .. recv_ptr[q + 1]) come from q
  std::vector<index_t> send_ptr;       // parts + 1: send_idx ranges per destination
  std::vector<index_t> send_idx;       // owned rows (local) each destination needs, in its order
  index_t halo_size() const { return static_cast<index_t>(halo.size()); }
};

/// Part p of a row partition: its rows with local columns, the halo plan (send lists empty
/// until link_sends), and its interior and boundary rows.
template <typename T, typename O = index_t>
struct matrix_part {
  csr_matrix<T, O> local;               // rows x (rows + halo)
  halo_plan plan;
  std::vector<index_t> interior, boundary;  // local rows without and with halo columns
};

/// Part p of a rectangular matrix: its rows [row_bounds[p], row_bounds[p + 1]) given with
/// global column indices, and the columns owned by part q in [col_bounds[q], col_bounds[q + 1])
/// (the vector the part multiplies is split by col_bounds, its result by row_bounds: an AMG
/// prolongator's rows on one level and its columns on the next). The plan then describes
/// that vector: first_row and rows are the part's owned range of it, the halo its other
/// entries the part reads; the local matrix is (its rows) x (owned + halo). Columns past
/// col_bounds.back() (up to `cols`) are halo no part owns. make_part below is the square
/// case, both bounds one partition.
template <typename T, typename O>
matrix_part<T, O> make_part(int p, const std::vector<global_index>& row_bounds, const std::vector<global_index>& col_bounds,
                            global_index cols, const std::vector<O>& row_ptr, const std::vector<global_index>& col_idx,
                            const std::vector<T>& values) {
  const int parts = static_cast<int>(row_bounds.size()) - 1;
  LA_EXPECTS(p >= 0 && p < parts, "partition: part " + std::to_string(p) + " of " + std::to_string(parts));
  LA_EXPECTS(col_bounds.size() == row_bounds.size(), "partition: the row and column partitions differ in parts (" +
                                                         std::to_string(parts) + " and " +
                                                         std::to_string(static_cast<long long>(col_bounds.size()) - 1) + ")");
  LA_EXPECTS(row_bounds.front() == 0 && std::is_sorted(row_bounds.begin(), row_bounds.end()),
             "partition: the row bounds must rise from 0");
  LA_EXPECTS(col_bounds.front() == 0 && std::is_sorted(col_bounds.begin(), col_bounds.end()) && col_bounds.back() <= cols,
             "partition: the bounds must rise from 0 and stay within the " + std::to_string(cols) + " columns");
  const global_index first = col_bounds[p], last = col_bounds[p + 1];  // owned columns
  const global_index n = row_bounds[p + 1] - row_bounds[p];
  LA_EXPECTS(last - first <= static_cast<global_index>(std::numeric_limits<index_t>::max()),
             "partition: part " + std::to_string(p) + " owns " + std::to_string(last - first) +
                 " columns, more than a part's 32-bit local indices hold; use more parts");
  LA_EXPECTS(n <= static_cast<global_index>(std::numeric_limits<index_t>::max()),
             "partition: part " + std::to_string(p) + " has " + std::to_string(n) +
                 " rows, more than a part's 32-bit local indices hold; use more parts");
  LA_EXPECTS(row_ptr.size() == static_cast<std::size_t>(n) + 1, "partition: part " + std::to_string(p) +
                                                                    ": row_ptr has " + std::to_string(row_ptr.size()) +
                                                                    " entries, expected " + std::to_string(n + 1));
  const global_index owned = last - first;
  matrix_part<T, O> out;
  halo_plan& h = out.plan;
  h.part = p, h.parts = parts, h.first_row = first, h.rows = static_cast<index_t>(owned);
  for (global_index c : col_idx) {
    LA_EXPECTS(c >= 0 && c < cols, "partition: column " + std::to_string(c) + " outside [0, " + std::to_string(cols) + ")");
    if (c < first || c >= last) h.halo.push_back(c);
  }
  std::sort(h.halo.begin(), h.halo.end());
  h.halo.erase(std::unique(h.halo.begin(), h.halo.end()), h.halo.end());
  LA_EXPECTS(owned + static_cast<global_index>(h.halo.size()) <= static_cast<global_index>(std::numeric_limits<index_t>::max()),
             "partition: part " + std::to_string(p) + "'s owned and halo columns exceed 32-bit local indices");
  // Receive ranges: the halo is sorted and the parts contiguous, so each owner's entries are
  // one range, found by the owners' first rows.
  h.recv_ptr.assign(static_cast<std::size_t>(parts) + 1, 0);
  for (int q = 0; q <= parts; ++q)
    h.recv_ptr[q] = static_cast<index_t>(std::lower_bound(h.halo.begin(), h.halo.end(), col_bounds[std::min(q, parts)]) -
                                         h.halo.begin());
  h.send_ptr.assign(static_cast<std::size_t>(parts) + 1, 0);
  // Local columns, each row sorted by its local index (owned first, then halo).
  std::vector<O> ptr{0};
  std::vector<index_t> idx;
  std::vector<T> val;
  idx.reserve(col_idx.size()), val.reserve(values.size());
  std::vector<std::pair<index_t, T>> row;
  for (global_index i = 0; i < n; ++i) {
    row.clear();
    bool halo_row = false;
    for (O k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      const global_index c = col_idx[k];
      index_t local;
      if (c >= first && c < last) {
        local = static_cast<index_t>(c - first);
      } else {
        local = static_cast<index_t>(owned + (std::lower_bound(h.halo.begin(), h.halo.end(), c) - h.halo.begin()));
        halo_row = true;
      }
      row.emplace_back(local, values[k]);
    }
    std::sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [c, v] : row) idx.push_back(c), val.push_back(v);
    ptr.push_back(static_cast<O>(idx.size()));
    (halo_row ? out.boundary : out.interior).push_back(static_cast<index_t>(i));
  }
  out.local = csr_matrix<T, O>(static_cast<index_t>(n), static_cast<index_t>(owned + h.halo_size()), std::move(ptr),
                               std::move(idx), std::move(val));
  return out;
}

/// Builds part p from its own rows given with global column indices (row_ptr over the part's
/// rows, starting at 0): owned columns renumbered, halo found and sorted, receive ranges by
/// owner. `bounds` is the partition (balanced_row_blocks), of the rows and of the columns.
/// The part's rows need not come from a full matrix on the host: a generator can produce
/// them on their own.
template <typename T, typename O>
matrix_part<T, O> make_part(int p, const std::vector<global_index>& bounds, global_index cols,
                            const std::vector<O>& row_ptr, const std::vector<global_index>& col_idx,
                            const std::vector<T>& values) {
  return make_part<T, O>(p, bounds, bounds, cols, row_ptr, col_idx, values);
}

/// Part p of matrix a (the file read once, on the host), with offsets of type PO (a's by
/// default; 64-bit for a part that travels between ranks in one form).
template <typename T, typename O, typename PO = O>
matrix_part<T, PO> make_part(const csr_matrix<T, O>& a, int p, const std::vector<global_index>& bounds) {
  LA_EXPECTS(bounds.size() >= 2 && bounds.front() == 0 && bounds.back() == a.rows(),
             "partition: the bounds do not cover the matrix's rows");
  const int parts = static_cast<int>(bounds.size()) - 1;
  LA_EXPECTS(p >= 0 && p < parts, "partition: part " + std::to_string(p) + " of " + std::to_string(parts));
  const global_index first = bounds[p], last = bounds[p + 1];
  std::vector<PO> ptr{0};
  std::vector<global_index> cols;
  std::vector<T> vals;
  for (global_index i = first; i < last; ++i) {
    for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) cols.push_back(a.col_idx()[k]), vals.push_back(a.values()[k]);
    ptr.push_back(static_cast<PO>(cols.size()));
  }
  return make_part<T, PO>(p, bounds, a.cols(), ptr, cols, vals);
}

/// Fills every part's send lists from the others' receive lists (all parts in one
/// process): part p sends to q the rows q's halo lists in p's range, in that order.
template <typename T, typename O>
void link_sends(std::vector<matrix_part<T, O>>& parts) {
  const int P = static_cast<int>(parts.size());
  for (int p = 0; p < P; ++p) {
    halo_plan& h = parts[p].plan;
    LA_EXPECTS(h.parts == P, "partition: part " + std::to_string(p) + " was built for " + std::to_string(h.parts) +
                                 " parts, not " + std::to_string(P));
    h.send_idx.clear();
    h.send_ptr.assign(static_cast<std::size_t>(P) + 1, 0);
    for (int q = 0; q < P; ++q) {
      const halo_plan& other = parts[q].plan;
      for (index_t k = other.recv_ptr[p]; k < other.recv_ptr[p + 1]; ++k)
        h.send_idx.push_back(static_cast<index_t>(other.halo[k] - h.first_row));
      h.send_ptr[q + 1] = static_cast<index_t>(h.send_idx.size());
    }
  }
}

/// Every part of a, balanced by nonzeros, with send lists linked; offsets of type PO (a's by
/// default).
template <typename T, typename O, typename PO = O>
std::vector<matrix_part<T, PO>> partition_rows(const csr_matrix<T, O>& a, int parts) {
  const std::vector<global_index> bounds = balanced_row_blocks(a.row_ptr().data(), a.rows(), parts);
  std::vector<matrix_part<T, PO>> out;
  out.reserve(static_cast<std::size_t>(parts));
  for (int p = 0; p < parts; ++p) out.push_back(make_part<T, O, PO>(a, p, bounds));
  link_sends(out);
  return out;
}

/// Send lists of a part built on its own (no other part's halo at hand), for a matrix whose
/// pattern is symmetric: part p sends to q its rows that have a column in q's range, in row
/// order, which is the order of q's sorted halo (q's halo from p is exactly those rows).
template <typename T, typename O>
void symmetric_sends(matrix_part<T, O>& part, const std::vector<global_index>& bounds) {
  halo_plan& h = part.plan;
  const int P = static_cast<int>(bounds.size()) - 1;
  LA_EXPECTS(h.parts == P, "partition: the part was built for " + std::to_string(h.parts) + " parts, not " + std::to_string(P));
  h.send_idx.clear();
  h.send_ptr.assign(static_cast<std::size_t>(P) + 1, 0);
  const auto& rp = part.local.row_ptr();
  const auto& ci = part.local.col_idx();
  for (int q = 0; q < P; ++q) {
    if (q != h.part) {
      // Local halo indices of q's columns: [rows + recv_ptr[q], rows + recv_ptr[q + 1]).
      const index_t lo = h.rows + h.recv_ptr[q], hi = h.rows + h.recv_ptr[q + 1];
      for (index_t i = 0; i < h.rows; ++i)
        for (O k = rp[i]; k < rp[i + 1]; ++k)
          if (ci[k] >= lo && ci[k] < hi) {
            h.send_idx.push_back(i);
            break;
          }
    }
    h.send_ptr[q + 1] = static_cast<index_t>(h.send_idx.size());
  }
}

/// Rows of a generated system, with 64-bit global columns: what make_part takes.
template <typename T>
struct generated_rows {
  std::vector<std::int64_t> ptr{0};
  std::vector<global_index> cols;
  std::vector<T> vals;
};

#ifdef __CUDACC__
#define LA_PARTITION_HD __host__ __device__
#else
#define LA_PARTITION_HD
#endif

/// Row r of the 5-point (dims 2) or 7-point (dims 3) Laplacian on an n^dims grid, entry for
/// entry what poisson_2d / poisson_3d store: up to 7 (column, value) pairs in column order
/// into cols and vals; returns how many. The one definition of the stencil for the host's
/// generated parts and the GPU's (solvers/distributed/distributed.hpp).
template <typename T>
LA_PARTITION_HD inline int poisson_row(int dims, global_index n, global_index r, global_index* cols, T* vals) {
  const global_index plane = n * n;
  const global_index j = r % n, i = (r / n) % n, k = dims == 3 ? r / plane : 0;
  int m = 0;
  auto add = [&](global_index c, T v) { cols[m] = c, vals[m] = v, ++m; };
  if (dims == 3 && k > 0) add(r - plane, T(-1));
  if (i > 0) add(r - n, T(-1));
  if (j > 0) add(r - 1, T(-1));
  add(r, T(2 * dims));
  if (j + 1 < n) add(r + 1, T(-1));
  if (i + 1 < n) add(r + n, T(-1));
  if (dims == 3 && k + 1 < n) add(r + plane, T(-1));
  return m;
}

/// The rows of the Laplacian on an n^dims grid (n^2 or n^3, checked for overflow).
inline global_index poisson_size(int dims, global_index n) {
  LA_EXPECTS(dims == 2 || dims == 3, "poisson: dims is 2 or 3");
  LA_EXPECTS(n >= 0 && n <= (dims == 2 ? 3037000499LL : 2097151LL),
             "poisson: grid side " + std::to_string(n) + " overflows 64-bit row numbers");
  return dims == 2 ? n * n : n * n * n;
}

/// Rows [first, last) of the 5-point (dims 2) or 7-point (dims 3) Laplacian on an n^dims
/// grid (poisson_row), without building the rest: a part of a system larger than one host
/// or GPU can hold is made where it is used.
template <typename T>
generated_rows<T> poisson_rows(int dims, global_index n, global_index first, global_index last) {
  const global_index rows = poisson_size(dims, n);
  LA_EXPECTS(0 <= first && first <= last && last <= rows,
             "poisson_rows: rows [" + std::to_string(first) + ", " + std::to_string(last) + ") outside the " +
                 std::to_string(rows) + " rows");
  generated_rows<T> g;
  g.cols.reserve(static_cast<std::size_t>((last - first) * (2 * dims + 1)));
  g.vals.reserve(g.cols.capacity());
  global_index c[7];
  T v[7];
  for (global_index r = first; r < last; ++r) {
    const int m = poisson_row(dims, n, r, c, v);
    g.cols.insert(g.cols.end(), c, c + m);
    g.vals.insert(g.vals.end(), v, v + m);
    g.ptr.push_back(static_cast<std::int64_t>(g.cols.size()));
  }
  return g;
}

/// The halo plan of part p of the Laplacian (bounds from even_row_blocks or any other split)
/// and its boundary rows, from the stencil alone: what make_part and symmetric_sends give
/// for poisson_rows' part, without the part's rows. The stencil reaches one grid plane (n^2
/// rows in 3D, n in 2D) up and down, so only the rows within a plane of the part's ends are
/// looked at, and the stencil is symmetric, so a column is in the halo when one of its
/// neighbours is owned. `boundary` gets the owned rows with a halo column (local, sorted).
inline halo_plan poisson_plan(int dims, global_index n, const std::vector<global_index>& bounds, int p,
                              std::vector<index_t>* boundary = nullptr) {
  const global_index rows = poisson_size(dims, n);
  const int parts = static_cast<int>(bounds.size()) - 1;
  LA_EXPECTS(p >= 0 && p < parts, "partition: part " + std::to_string(p) + " of " + std::to_string(parts));
  LA_EXPECTS(bounds.front() == 0 && bounds.back() == rows && std::is_sorted(bounds.begin(), bounds.end()),
             "partition: the bounds must rise from 0 to the " + std::to_string(rows) + " rows");
  const global_index first = bounds[p], last = bounds[p + 1], reach = dims == 3 ? n * n : n;
  LA_EXPECTS(last - first <= max_index, "partition: part " + std::to_string(p) + " has " +
                                            std::to_string(last - first) +
                                            " rows, more than a part's 32-bit local indices hold; use more parts");
  halo_plan h;
  h.part = p, h.parts = parts, h.first_row = first, h.rows = static_cast<index_t>(last - first);
  global_index c[7];
  double v[7];
  // Does row r have a neighbour in [lo, hi)?
  auto touches = [&](global_index r, global_index lo, global_index hi) {
    const int m = poisson_row(dims, n, r, c, v);
    for (int k = 0; k < m; ++k)
      if (c[k] != r && c[k] >= lo && c[k] < hi) return true;
    return false;
  };
  // Rows of [lo, hi) within `reach` of either end, each once, in order.
  auto near_ends = [&](global_index lo, global_index hi, auto&& f) {
    for (global_index r = lo; r < std::min(hi, lo + reach); ++r) f(r);
    for (global_index r = std::max(lo + reach, hi - reach); r < hi; ++r) f(r);
  };
  if (first < last) {
    near_ends(std::max<global_index>(0, first - reach), first, [&](global_index r) {
      if (touches(r, first, last)) h.halo.push_back(r);
    });
    near_ends(last, std::min(rows, last + reach), [&](global_index r) {
      if (touches(r, first, last)) h.halo.push_back(r);
    });
  }
  LA_EXPECTS(last - first + static_cast<global_index>(h.halo.size()) <= max_index,
             "partition: part " + std::to_string(p) + "'s owned and halo columns exceed 32-bit local indices");
  h.recv_ptr.assign(static_cast<std::size_t>(parts) + 1, 0);
  for (int q = 0; q <= parts; ++q)
    h.recv_ptr[q] = static_cast<index_t>(std::lower_bound(h.halo.begin(), h.halo.end(), bounds[q]) - h.halo.begin());
  h.send_ptr.assign(static_cast<std::size_t>(parts) + 1, 0);
  for (int q = 0; q < parts; ++q) {
    if (q != p && first < last)
      near_ends(first, last, [&](global_index r) {
        if (touches(r, bounds[q], bounds[q + 1])) h.send_idx.push_back(static_cast<index_t>(r - first));
      });
    h.send_ptr[q + 1] = static_cast<index_t>(h.send_idx.size());
  }
  if (boundary) {
    boundary->clear();
    if (first < last)
      near_ends(first, last, [&](global_index r) {
        if (touches(r, 0, first) || touches(r, last, rows)) boundary->push_back(static_cast<index_t>(r - first));
      });
  }
  return h;
}

/// An order for walking `count` consecutive rows whose farthest neighbours sit `plane` rows
/// away (a 3D grid's plane of n^2 rows): the plane cut into tiles of `tile` rows, and each
/// tile walked through every plane before the next tile starts. A row and its neighbours a
/// plane away are then walked `tile` rows apart instead of `plane`, so what one reads for
/// the other is still in L2; in the natural order that reuse spans two planes of every
/// array's traffic, which outgrows L2 on large grids (bench/history/cg-on-several-gpus.md, "The interior rows
/// swept through the grid's planes", and tuning note D2).
/// Slot k (0 <= k < slots()) is row row(k) of the range, or -1: the last plane's slots past
/// `count`. Every row comes once. plane 0 is the natural order (row(k) = k). Make it with
/// plane_sweep::of, which checks and clamps the sizes.
struct plane_sweep {
  long long count = 0, plane = 0, tile = 0, planes = 0;

  static plane_sweep of(long long count, long long plane, long long tile) {
    LA_EXPECTS(count >= 0 && plane >= 0 && tile >= 0, "plane_sweep: negative size");
    plane_sweep s;
    s.count = count;
    if (plane <= 0 || tile <= 0 || plane >= count) return s;  // one plane or none: natural
    s.plane = plane, s.tile = std::min(tile, plane), s.planes = (count + plane - 1) / plane;
    return s;
  }
  LA_PARTITION_HD long long slots() const { return plane > 0 ? planes * plane : count; }
  LA_PARTITION_HD long long row(long long k) const {
    if (plane <= 0) return k;
    const long long span = planes * tile, t = k / span, rem = k - t * span;
    const long long width = tile < plane - t * tile ? tile : plane - t * tile;  // the last tile's rest
    const long long z = rem / width, r = z * plane + t * tile + (rem - z * width);
    return r < count ? r : -1;
  }
};

/// Row bounds for a generated Laplacian split `parts` ways by rows (its rows differ in
/// length only on the grid's faces, so rows balance the nonzeros to within a face).
inline std::vector<global_index> even_row_blocks(global_index rows, int parts) {
  LA_EXPECTS(parts >= 1, "partition: the number of parts must be at least 1");
  std::vector<global_index> b(static_cast<std::size_t>(parts) + 1);
  for (int p = 0; p <= parts; ++p) b[p] = rows / parts * p + std::min<global_index>(rows % parts, p);
  return b;
}

}  // namespace la
