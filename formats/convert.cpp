// COO -> CSR, the conversion every Matrix Market read goes through, on all host threads:
//  1. per thread, a histogram of row lengths over its share of the entries, over the rows
//     that share reaches (entries in row order: about one array of rows for all threads);
//  2. an exclusive scan over rows gives each row's start and, per thread, its cursor in it
//     (thread 0's entries first, so every row keeps input order), in parallel over blocks
//     of rows;
//  3. per thread, a scatter of columns and values straight into the output arrays;
//  4. per thread over rows of about equal entry counts: rows whose columns do not already
//     increase are sorted (insertion sort, stable; std::stable_sort for long rows), equal
//     columns are summed in input order, and the thread's rows are packed to the left;
//  5. only when duplicates were summed: each thread's packed block moves to its final place.
// Every step is O(nnz + rows). The output arrays are the only large allocation: fresh
// pages cost more than the arithmetic here (50M entries: zero-filling 600 MB of new pages
// takes ~0.3 s on the 2-core CI machine; an intermediate (column, value) buffer cost another
// ~0.8 s in faults and copying, and was dropped).
#include <la/formats/convert.hpp>

#include <cstring>
#include <new>
#include <thread>

#include <la/memory.hpp>
#include <la/parallel.hpp>
#include <la/detail/instantiate.hpp>

namespace la::detail {
namespace {

/// Stable sort of a row's (column, value) pairs by column.
template <typename T>
void sort_row(index_t* col, T* val, std::size_t n) {
  if (n > 48) {
    std::vector<std::pair<index_t, T>> row(n);
    for (std::size_t k = 0; k < n; ++k) row[k] = {col[k], val[k]};
    std::stable_sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (std::size_t k = 0; k < n; ++k) col[k] = row[k].first, val[k] = row[k].second;
    return;
  }
  for (std::size_t i = 1; i < n; ++i) {
    const index_t c = col[i];
    const T v = val[i];
    std::size_t j = i;
    for (; j > 0 && col[j - 1] > c; --j) col[j] = col[j - 1], val[j] = val[j - 1];
    col[j] = c;
    val[j] = v;
  }
}

/// Sorts a row if needed and sums equal columns in order; returns the new length.
template <typename T>
std::size_t tidy_row(index_t* col, T* val, std::size_t n) {
  bool increasing = true;
  for (std::size_t k = 1; k < n && increasing; ++k) increasing = col[k] > col[k - 1];
  if (increasing) return n;
  sort_row(col, val, n);
  std::size_t w = 0;
  for (std::size_t k = 1; k < n; ++k) {
    if (col[k] == col[w]) val[w] += val[k];
    else ++w, col[w] = col[k], val[w] = val[k];
  }
  return w + 1;
}

/// Thread t handles the parts [t*P/threads, (t+1)*P/threads) in order in steps 1 and 3;
/// rows are split by entry count in steps 4-5, and evenly in step 2.
template <typename O, typename T, typename C>
csr_matrix<T, O> build(index_t m, index_t n_cols, const std::vector<coo_span<T>>& parts, int threads) {
  const std::size_t rows = static_cast<std::size_t>(m);
  const std::size_t n_parts = parts.size();
  std::vector<std::size_t> part_start(n_parts + 1, 0);
  for (std::size_t p = 0; p < n_parts; ++p) part_start[p + 1] = part_start[p] + parts[p].size;
  const std::size_t nz = part_start.back();
  auto first_part = [&](int t) { return n_parts * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads); };
  auto share = [&](int t) { return part_start[first_part(t)]; };  // first entry of thread t

  // 1. histograms; meanwhile a helper thread allocates the output arrays (zero-filling fresh
  // pages is kernel work that overlaps with the histograms' memory latency).
  std::vector<index_t> col;
  std::vector<T> val;
  bool allocated = false;
  std::thread alloc([&] {
    try {
      col = std::vector<index_t>(nz);
      val = std::vector<T>(nz);
      allocated = true;
    } catch (...) {  // reported below, on the calling thread
    }
  });
  // Each thread counts only the rows its entries reach, [lo, hi): input in row order (la's
  // own files, most generators) gives nearly disjoint ranges, so the counters take about one
  // array of rows in all rather than one per thread (16 threads x 10M rows: 640 MB zeroed).
  std::vector<std::size_t> lo(static_cast<std::size_t>(threads), 0), hi(static_cast<std::size_t>(threads), 0);
  std::vector<std::vector<C>> cursor(static_cast<std::size_t>(threads));
  try {
    parallel_for(threads, [&](int t) {
      std::size_t a = rows, b = 0;
      for (std::size_t p = first_part(t); p < first_part(t + 1); ++p) {
        const index_t* ri = parts[p].row_idx;
        for (std::size_t k = 0, e = parts[p].size; k < e; ++k) {
          const auto r = static_cast<std::size_t>(ri[k]);
          a = r < a ? r : a;
          b = r + 1 > b ? r + 1 : b;
        }
      }
      if (a >= b) a = b = 0;  // no entries
      lo[t] = a, hi[t] = b;
      std::vector<C>& c = cursor[t];
      c.assign(b - a, 0);
      for (std::size_t p = first_part(t); p < first_part(t + 1); ++p) {
        const index_t* ri = parts[p].row_idx;
        for (std::size_t k = 0, e = parts[p].size; k < e; ++k) ++c[static_cast<std::size_t>(ri[k]) - a];
      }
    });
  } catch (...) {
    alloc.join();
    throw;
  }
  alloc.join();
  if (!allocated) throw std::bad_alloc();
  // 2. row starts; cursors become each thread's first slot in each row. In parallel over
  // blocks of rows: each block's row lengths and total, a scan over the blocks, then each
  // block's rows.
  std::vector<C> start(rows + 1, 0);
  auto block_row = [&](int b) { return rows * static_cast<std::size_t>(b) / static_cast<std::size_t>(threads); };
  auto for_rows = [&](std::size_t r0, std::size_t r1, auto&& f) {
    for (int t = 0; t < threads; ++t) {
      const std::size_t a = std::max(r0, lo[t]), e = std::min(r1, hi[t]);
      if (a < e) f(t, a, e);
    }
  };
  std::vector<C> block_total(static_cast<std::size_t>(threads) + 1, 0);
  parallel_for(threads, [&](int b) {  // each block's row lengths (into start[r]) and total
    const std::size_t r0 = block_row(b), r1 = block_row(b + 1);
    for_rows(r0, r1, [&](int t, std::size_t a, std::size_t e) {
      const C* c = cursor[t].data();
      for (std::size_t r = a; r < e; ++r) start[r] += c[r - lo[t]];
    });
    C sum = 0;
    for (std::size_t r = r0; r < r1; ++r) sum += start[r];
    block_total[b + 1] = sum;
  });
  for (int b = 0; b < threads; ++b) block_total[b + 1] += block_total[b];
  parallel_for(threads, [&](int b) {
    // Each block writes only start[r] of its own rows: the row's length becomes its start,
    // then (while the threads take their cursors, in thread order so that every row keeps
    // input order) its running end, then its start again.
    const std::size_t r0 = block_row(b), r1 = block_row(b + 1);
    C s = block_total[b];
    for (std::size_t r = r0; r < r1; ++r) {
      const C n = start[r];
      start[r] = s;
      s += n;
    }
    for_rows(r0, r1, [&](int t, std::size_t a, std::size_t e) {
      C* c = cursor[t].data();
      for (std::size_t r = a; r < e; ++r) {
        const C n = c[r - lo[t]];
        c[r - lo[t]] = start[r];
        start[r] += n;
      }
    });
    s = block_total[b];
    for (std::size_t r = r0; r < r1; ++r) {
      const C end = start[r];
      start[r] = s;
      s = end;
    }
  });
  start[rows] = block_total[threads];
  // 3. scatter into the output arrays
  parallel_for(threads, [&](int t) {
    C* c = cursor[t].data();
    const std::size_t first = lo[t];  // c[i] counts row first + i
    for (std::size_t p = first_part(t); p < first_part(t + 1); ++p) {
      const index_t* ri = parts[p].row_idx;
      const index_t* ci = parts[p].col_idx;
      const T* v = parts[p].values;
      for (std::size_t k = 0, e = parts[p].size; k < e; ++k) {
        const C d = c[static_cast<std::size_t>(ri[k]) - first]++;
        col[d] = ci[k];
        val[d] = v[k];
      }
    }
  });
  // 4. rows split by entry count; sort where needed, sum duplicates, pack each block left
  std::vector<std::size_t> first_row(static_cast<std::size_t>(threads) + 1, rows);
  for (int t = 1; t < threads; ++t)
    first_row[t] = static_cast<std::size_t>(
        std::lower_bound(start.begin(), start.end() - 1, static_cast<C>(share(t))) - start.begin());
  first_row[0] = 0;
  cursor = {};  // the counters are spent: their memory is freed before the lengths are allocated
  std::vector<C> len(rows);  // new row lengths
  std::vector<std::size_t> packed(static_cast<std::size_t>(threads), 0);
  parallel_for(threads, [&](int t) {
    std::size_t w = static_cast<std::size_t>(start[first_row[t]]);
    for (std::size_t r = first_row[t]; r < first_row[t + 1]; ++r) {
      const std::size_t b = static_cast<std::size_t>(start[r]);
      const std::size_t n = tidy_row(col.data() + b, val.data() + b, static_cast<std::size_t>(start[r + 1]) - b);
      if (w != b) {
        std::memmove(col.data() + w, col.data() + b, n * sizeof(index_t));
        std::memmove(val.data() + w, val.data() + b, n * sizeof(T));
      }
      len[r] = static_cast<C>(n);
      w += n;
    }
    packed[t] = w - static_cast<std::size_t>(start[first_row[t]]);
  });
  // 5. row pointers; blocks after the first move left by the duplicates before them
  std::vector<O> row_ptr(rows + 1, 0);
  std::int64_t total = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    total += len[r];
    row_ptr[r + 1] = static_cast<O>(total);  // checked below; total only grows
  }
  checked_offset<O>(total, "CSR nonzeros");
  if (static_cast<std::size_t>(total) != nz) {
    for (int t = 1; t < threads; ++t) {
      const std::size_t from = static_cast<std::size_t>(start[first_row[t]]);
      const std::size_t to = static_cast<std::size_t>(row_ptr[first_row[t]]);
      std::memmove(col.data() + to, col.data() + from, packed[t] * sizeof(index_t));
      std::memmove(val.data() + to, val.data() + from, packed[t] * sizeof(T));
    }
    col.resize(static_cast<std::size_t>(total));
    val.resize(static_cast<std::size_t>(total));
  }
  return {trusted, m, n_cols, std::move(row_ptr), std::move(col), std::move(val)};
}

}  // namespace

template <typename O, typename T>
csr_matrix<T, O> spans_to_csr(index_t rows, index_t cols, const std::vector<coo_span<T>>& parts) {
  std::size_t nz = 0;
  for (const auto& p : parts) nz += p.size;
  if (parts.empty()) return spans_to_csr<O, T>(rows, cols, {coo_span<T>{nullptr, nullptr, nullptr, 0}});
  const int threads = csr_build_threads(rows, static_cast<std::int64_t>(nz), static_cast<int>(parts.size()));
  check_host_memory(csr_build_bytes(rows, static_cast<std::int64_t>(nz), threads, sizeof(O), sizeof(T)),
                    "converting a " + std::to_string(rows) + " x " + std::to_string(cols) + " matrix with " +
                        std::to_string(nz) + " entries to CSR");
  if (nz <= static_cast<std::size_t>(max_index)) return build<O, T, std::int32_t>(rows, cols, parts, threads);
  return build<O, T, std::int64_t>(rows, cols, parts, threads);
}

template <typename O, typename T>
csr_matrix<T, O> coo_to_csr(const coo_matrix<T>& a) {
  const std::size_t nz = a.values().size();
  // Threads pay off from about a million entries (spawning costs tens of microseconds).
  const int threads = nz >= (std::size_t(1) << 20) ? thread_count() : 1;
  std::vector<coo_span<T>> parts;
  for (int t = 0; t < threads; ++t) {
    const std::size_t b = nz / threads * t + std::min<std::size_t>(t, nz % threads);
    const std::size_t e = nz / threads * (t + 1) + std::min<std::size_t>(t + 1, nz % threads);
    parts.push_back({a.row_idx().data() + b, a.col_idx().data() + b, a.values().data() + b, e - b});
  }
  return spans_to_csr<O, T>(a.rows(), a.cols(), parts);
}

#define LA_INSTANTIATE(T, O)                                                                             \
  template csr_matrix<T, O> coo_to_csr<O, T>(const coo_matrix<T>&);                                      \
  template csr_matrix<T, O> spans_to_csr<O, T>(index_t, index_t, const std::vector<coo_span<T>>&);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
LA_FOR_EACH_COMPLEX_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace la::detail
