// Row statistics, the selection rule, tuning, and spmv_operator (see select.hpp).
#include <la/kernels/spmv/select.hpp>

#include <cmath>
#include <cstdio>

#include <la/event_timer.hpp>
#include <la/kernels/spmv/detail/common.cuh>
#include <la/detail/instantiate.hpp>

namespace la {
namespace {

struct device_stats {
  unsigned long long empty, sell_slots;
  int longest;
  double sum_sq;
};

/// One thread per slice of 32 rows: its longest row (SELL-32 slots), empty rows, squares.
template <typename O>
__global__ void stats_kernel(const O* ptr, index_t rows, device_stats* out) {
  LA_GRID_STRIDE(s, (static_cast<long long>(rows) + 31) / 32) {
    int w = 0;
    unsigned long long empty = 0;
    double sq = 0;
    for (long long i = s * 32; i < s * 32 + 32 && i < rows; ++i) {
      const int len = static_cast<int>(ptr[i + 1] - ptr[i]);
      w = max(w, len);
      empty += len == 0;
      sq += double(len) * len;
    }
    atomicMax(&out->longest, w);
    atomicAdd(&out->empty, empty);
    atomicAdd(&out->sell_slots, 32ull * static_cast<unsigned long long>(w));
    atomicAdd(&out->sum_sq, sq);
  }
}

void finish_stats(spmv_stats& s, double sum_sq) {
  s.mean = s.rows ? double(s.nnz) / s.rows : 0;
  s.stddev = s.rows ? std::sqrt(std::max(0.0, sum_sq / s.rows - s.mean * s.mean)) : 0;
}

template <typename M>
std::size_t bytes_of(const M& m) {
  std::size_t bytes = 0;
  std::apply([&](const auto&... a) { ((bytes += a.size() * sizeof(*a.data())), ...); }, m.arrays());
  return bytes;
}
}  // namespace

template <typename T, typename O>
spmv_stats row_stats(const csr_matrix<T, O>& a) {
  spmv_stats s{a.rows(), a.cols(), a.nnz()};
  double sum_sq = 0;
  for (index_t i = 0; i < a.rows(); ++i) {
    const index_t len = detail::row_length(a, i);
    s.longest = std::max(s.longest, len);
    s.empty_rows += len == 0;
    sum_sq += double(len) * len;
  }
  s.sell_slots = detail::unsorted_sell_slots(a, 32);
  finish_stats(s, sum_sq);
  return s;
}

template <typename T, typename O>
spmv_stats row_stats(context& ctx, const device_csr<T, O>& a) {
  spmv_stats s{a.rows(), a.cols(), a.nnz()};
  auto d = ctx.allocate<device_stats>(1);
  LA_CUDA_TRY(cudaMemsetAsync(d.data(), 0, sizeof(device_stats), ctx.stream()));
  if (a.rows() > 0) {
    stats_kernel<<<detail::grid_for((a.rows() + 31) / 32), detail::block_threads, 0, ctx.stream()>>>(
        a.view().row_ptr, a.rows(), d.data());
    LA_CHECK_LAUNCH(ctx.stream());
  }
  device_stats h{};
  d.copy_to_host_async(&h, 1);
  ctx.synchronize();
  s.longest = h.longest;
  s.empty_rows = static_cast<index_t>(h.empty);
  s.sell_slots = static_cast<count_t>(h.sell_slots);
  finish_stats(s, h.sum_sq);
  return s;
}

namespace {
/// A choice of format and row walk, with the registry's kernel for them.
spmv_choice pick(format f, row_walk w, std::string why, sell_options o = {}) {
  spmv_choice c;
  c.fmt = f;
  c.kernel = std::string(find_spmv<double>(f, w).name);
  c.sell = o;
  c.why = std::move(why);
  return c;
}
}  // namespace

spmv_choice select_spmv(const spmv_stats& s) {
  char buf[160];
  // The thresholds below come from `la bench spmv` / bench/spmv_bench (bench/history/tuning-notes-the-code-cites.md,
  // note T5, which has the figures for each case).
  if (s.rows == 0 || s.nnz == 0) return pick(format::csr, row_walk::thread, "no entries");
  // A few rows far longer than the rest (power-law graphs, dense rows). Thread- or
  // warp-per-row kernels leave one warp walking the longest row; HYB (ELL for the common
  // part, the long rows' overflow as COO with one atomic per run) was the fastest la kernel
  // there. Not deterministic (atomics); tune_spmv or a named kernel gives csr_balanced where
  // bit-identical results matter.
  if (s.longest > 4096 && s.longest > 64 * s.mean) {
    std::snprintf(buf, sizeof buf, "longest row %d > 64 x mean %.1f", s.longest, s.mean);
    return pick(format::hyb, row_walk::none, buf);
  }
  // Small matrices (launch-bound, under 100k rows): a group of lanes per row was the
  // fastest on every small real matrix.
  if (s.rows < 100000) {
    std::snprintf(buf, sizeof buf, "%d rows (small: launch-bound)", s.rows);
    return pick(format::csr, row_walk::group, buf);
  }
  // Short rows of nearly equal length (stencils): a thread per row over CSR streams the
  // rows at copy bandwidth.
  if (s.padding() <= 1.2 && s.mean <= 8) {
    std::snprintf(buf, sizeof buf, "short even rows (mean %.1f, SELL-32 pads %.2fx)", s.mean, s.padding());
    return pick(format::csr, row_walk::thread, buf);
  }
  // Longer rows of equal length (uniform random, 16 per row): column-major ELL without
  // padding.
  if (double(s.rows) * s.longest <= 1.05 * double(s.nnz)) {
    std::snprintf(buf, sizeof buf, "equal rows (ELL pads %.2fx)", double(s.rows) * s.longest / double(s.nnz));
    return pick(format::ell, row_walk::thread, buf);
  }
  // Nearly equal rows: SELL-32 without sorting pads little and reads no row pointers and no
  // permutation.
  if (s.padding() <= 1.2) {
    std::snprintf(buf, sizeof buf, "SELL-32 pads %.2fx without sorting", s.padding());
    return pick(format::sell, row_walk::thread, buf, {32, 1});
  }
  std::snprintf(buf, sizeof buf, "uneven rows (SELL-32 pads %.2fx unsorted): sorted windows", s.padding());
  return pick(format::sell, row_walk::thread, buf, {32, 0});
}

spmv_choice select_spmv_complex(const spmv_stats& s) {
  spmv_choice c = select_spmv(s);
  if (c.fmt == format::hyb) {
    c.fmt = format::csr;
    c.kernel = "csr_balanced";
    c.why += "; complex values: csr_balanced (no atomics: bit-identical reruns)";
  } else if (c.fmt == format::csr && s.rows >= 100000 && find_spmv<double>(format::csr, row_walk::thread).name == c.kernel) {
    c = pick(format::sell, row_walk::thread, c.why + "; complex values: SELL-32 unsorted (coalesced 16-byte values)", {32, 1});
  }
  return c;
}

spmv_choice select_spmv(const spmv_stats& s, format fmt) {
  spmv_choice rule = select_spmv(s);
  if (rule.fmt == fmt) {
    rule.why = std::string("format ") + to_string(fmt) + " asked for; the rule's kernel for it (" + rule.why + ")";
    return rule;
  }
  spmv_choice c;
  c.fmt = fmt;
  // The sizes the format's default sees (stored entries: the CSR count; padding is not
  // known without converting, and no format's default depends on it).
  c.kernel = std::string(default_spmv<double>({fmt, false, s.rows, s.cols, s.nnz}).name);
  c.why = std::string("format ") + to_string(fmt) + " asked for; its default kernel";
  return c;
}

std::vector<spmv_choice> spmv_candidates(const spmv_stats& s) {
  std::vector<spmv_choice> c;
  for (const auto& v : spmv_variants<double>()) {
    if (!v.auto_candidate || !v.auto_candidate(s)) continue;
    const spmv_choice one{v.fmt, std::string(v.name), {}, -1, "candidate"};
    if (v.fmt != format::sell) {
      c.push_back(one);
      continue;
    }
    // SELL's sorting window is a format parameter: sorted windows always, unsorted slices
    // as well when they pad by more than 20%.
    c.push_back({v.fmt, one.kernel, {32, 0}, -1, "candidate"});
    if (s.padding() > 1.2) c.push_back({v.fmt, one.kernel, {32, 1}, -1, "candidate"});
  }
  return c;
}

template <typename T>
template <typename O>
spmv_operator<T>::spmv_operator(context& ctx, const device_csr<T, O>& a, const spmv_choice& choice) : choice_(choice) {
  auto own = [&](auto m) {
    auto p = std::make_shared<decltype(m)>(std::move(m));
    owned_bytes_ = bytes_of(*p);
    owned_ = p;
    return spmv_view(*p);
  };
  matrix_view<T> view;
  switch (choice.fmt) {
    case format::csr: view = spmv_view(a); break;
    case format::coo: view = own(to_coo(ctx, a)); break;
    case format::csc: view = own(to_csc(ctx, a)); break;
    case format::ell: view = own(to_ell(ctx, a)); break;
    case format::jds: view = own(to_jds(ctx, a)); break;
    case format::hyb: view = own(to_hyb(ctx, a, choice.hyb_width)); break;
    case format::sell: view = own(to_sell(ctx, a, choice.sell)); break;
    case format::dense: view = own(to_dense(ctx, a)); break;
  }
  plan_.emplace(ctx, view, choice.kernel.empty() ? std::string_view("auto") : std::string_view(choice.kernel));
  choice_.kernel = std::string(plan_->variant().name);
}

template <typename T, typename O>
spmv_choice tune_spmv(context& ctx, const device_csr<T, O>& a, int reps) {
  const spmv_stats s = row_stats(ctx, a);
  auto x = ctx.allocate<T>(static_cast<std::size_t>(a.cols()));
  auto y = ctx.allocate<T>(static_cast<std::size_t>(a.rows()));
  LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, x.size() * sizeof(T), ctx.stream()));
  spmv_choice best;
  double best_ms = INFINITY;
  const std::vector<spmv_choice> candidates = spmv_candidates(s);
  for (const spmv_choice& c : candidates) {
    const spmv_operator<T> op(ctx, a, c);
    const double ms = median_ms(ctx.stream(), reps, [&] { op.apply(x.data(), y.data(), T(1), T(0), ctx.stream()); });
    if (ms < best_ms) best_ms = ms, best = c;
  }
  char buf[96];
  std::snprintf(buf, sizeof buf, "tuned: fastest of %zu candidates, %.4f ms", candidates.size(), best_ms);
  best.why = buf;
  return best;
}

template class spmv_operator<float>;
template class spmv_operator<double>;
template class spmv_operator<std::complex<float>>;
template class spmv_operator<std::complex<double>>;
#define LA_INSTANTIATE(T, O)                                                                          \
  template spmv_stats row_stats<T, O>(const csr_matrix<T, O>&);                                       \
  template spmv_stats row_stats<T, O>(context&, const device_csr<T, O>&);                             \
  template spmv_operator<T>::spmv_operator(context&, const device_csr<T, O>&, const spmv_choice&);    \
  template spmv_choice tune_spmv<T, O>(context&, const device_csr<T, O>&, int);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
LA_FOR_EACH_COMPLEX_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace la
