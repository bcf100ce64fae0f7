// solve_device (device_solve.hpp): the matrix's properties on the device, the method's
// choice (method.hpp's rule, as on the host) and the dispatch to the method's GPU solver.
#include <chrono>
#include <cstring>
#include <string>

#include <la/detail/instantiate.hpp>
#include <la/error.hpp>
#include <la/formats/device_convert.hpp>
#include <la/grid.cuh>
#include <la/solvers/device_solve.hpp>
#include <la/solvers/registry.hpp>

namespace la {
namespace {

/// Counters the property kernel fills (bits of non-negative doubles order as the values).
struct property_counts {
  unsigned long long max_diff, max_abs, min_dominance, pattern_asymmetric;
  unsigned long long positive, negative, zero, dominant;
};

__device__ void max_bits(unsigned long long* slot, double v) {
  if (v > 0) atomicMax(slot, static_cast<unsigned long long>(__double_as_longlong(v)));
}

/// Row i of A against row i of A^T (column i of A, from the device CSC copy): the largest
/// difference, and the row's diagonal and dominance.
template <typename T, typename O>
__global__ void row_properties(csr_view<const T, O> a, const O* tp, const index_t* ti, const T* tv,
                               property_counts* out) {
  LA_GRID_STRIDE(i, a.rows) {
    O x = a.row_ptr[i], y = tp[i];
    const O xe = a.row_ptr[i + 1], ye = tp[i + 1];
    double diff = 0, big = 0, d = 0, off = 0;
    bool asym = false;
    while (x < xe || y < ye) {
      const index_t cx = x < xe ? a.col_idx[x] : max_index, cy = y < ye ? ti[y] : max_index;
      if (cx == cy) {
        const double u = static_cast<double>(a.values[x]), w = static_cast<double>(tv[y]);
        diff = fmax(diff, fabs(u - w));
        big = fmax(big, fabs(u));
        if (cx == i) d = u;
        else off += fabs(u);
        ++x, ++y;
      } else if (cx < cy) {
        const double u = static_cast<double>(a.values[x++]);
        diff = fmax(diff, fabs(u)), big = fmax(big, fabs(u)), off += fabs(u), asym = true;
      } else {
        diff = fmax(diff, fabs(static_cast<double>(tv[y++]))), asym = true;
      }
    }
    max_bits(&out->max_diff, diff);
    max_bits(&out->max_abs, big);
    if (asym) atomicOr(&out->pattern_asymmetric, 1ull);
    atomicAdd(d > 0 ? &out->positive : d < 0 ? &out->negative : &out->zero, 1ull);
    if (fabs(d) >= off) atomicAdd(&out->dominant, 1ull);
    if (off > 0) atomicMin(&out->min_dominance, static_cast<unsigned long long>(__double_as_longlong(fabs(d) / off)));
  }
}

double from_bits(unsigned long long b) {
  double v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

}  // namespace

template <typename T, typename O>
matrix_properties properties_of(context& ctx, const device_csr<T, O>& a) {
  matrix_properties p;
  p.rows = a.rows(), p.cols = a.cols(), p.nnz = static_cast<std::int64_t>(a.nnz());
  if (a.rows() != a.cols()) {
    p.pattern_symmetric = false, p.max_asymmetry = HUGE_VAL;
    return p;
  }
  if (a.rows() == 0) return p;
  const device_csc<T, O> t = to_csc(ctx, a);
  auto counts = ctx.allocate<property_counts>(1);
  property_counts init{};
  const double inf = HUGE_VAL;
  std::memcpy(&init.min_dominance, &inf, sizeof inf);
  LA_CUDA_TRY(cudaMemcpyAsync(counts.data(), &init, sizeof init, cudaMemcpyHostToDevice, ctx.stream()));
  row_properties<<<detail::grid_for(a.rows()), detail::block_threads, 0, ctx.stream()>>>(
      a.view(), t.col_ptr().data(), t.row_idx().data(), t.values().data(), counts.data());
  LA_CHECK_LAUNCH(ctx.stream());
  property_counts c;
  LA_CUDA_TRY(cudaMemcpyAsync(&c, counts.data(), sizeof c, cudaMemcpyDeviceToHost, ctx.stream()));
  ctx.synchronize();
  p.max_abs = from_bits(c.max_abs);
  p.max_asymmetry = p.max_abs > 0 ? from_bits(c.max_diff) / p.max_abs : 0;
  p.pattern_symmetric = c.pattern_asymmetric == 0;
  p.diag_positive = static_cast<index_t>(c.positive), p.diag_negative = static_cast<index_t>(c.negative);
  p.diag_zero = static_cast<index_t>(c.zero), p.dominant_rows = static_cast<index_t>(c.dominant);
  p.min_dominance = from_bits(c.min_dominance);
  return p;
}

template <typename T, typename O>
solve_result run_device_method(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                               const cg_options& o, const device_cg_options& dopt) {
  // Through the method's registry entry, la's own and those added at run time alike.
  const device_method_solver<T, O> f = entry_of(o.method).solvers.device<T, O>();
  LA_EXPECTS(f != nullptr, std::string("{method} ") + to_string(o.method) + " has no GPU solver (auto is resolved first)");
  return f(ctx, a, b, x, o, dopt);
}

template <typename T, typename O>
std::shared_ptr<const sparse_analysis> spd_analysis_of(context& ctx, const device_csr<T, O>& a) {
  return detail::spd_analysis_of(to_host(ctx, a));
}

template <typename T, typename O>
solve_result solve_device(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                          cg_options opt, const device_cg_options& dopt) {
  return detail::solve_by_method(
      a.rows(), a.cols(), std::move(opt), "gpu", [&] { return properties_of(ctx, a); },
      [&](const cg_options& o) { return run_device_method(ctx, a, b, x, o, dopt); },
      [&, x0 = device_vector<T>()](bool restore) mutable {
        // In place: x may be memory the caller owns (a CuPy array), which must stay where it is.
        const std::size_t bytes = static_cast<std::size_t>(x.size()) * sizeof(T);
        if (!restore) {
          if (x.size() == 0) return;  // the solvers start from zeros
          x0 = device_vector<T>(ctx, x.size());
          LA_CUDA_TRY(cudaMemcpyAsync(x0.data(), x.data(), bytes, cudaMemcpyDeviceToDevice, ctx.stream()));
        } else if (x0.size() == x.size() && x.size() > 0) {
          LA_CUDA_TRY(cudaMemcpyAsync(x.data(), x0.data(), bytes, cudaMemcpyDeviceToDevice, ctx.stream()));
        } else if (x.size() > 0) {
          LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, bytes, ctx.stream()));
        }
      },
      [&] { return spd_analysis_of(ctx, a); },
      std::is_same_v<T, double>);
}

#define LA_INSTANTIATE(T, O)                                                                                        \
  template matrix_properties properties_of<T, O>(context&, const device_csr<T, O>&);                               \
  template solve_result solve_device<T, O>(context&, const device_csr<T, O>&, const device_vector<T>&,             \
                                           device_vector<T>&, cg_options, const device_cg_options&);            \
  template solve_result run_device_method<T, O>(context&, const device_csr<T, O>&, const device_vector<T>&,       \
                                                device_vector<T>&, const cg_options&, const device_cg_options&); \
  template std::shared_ptr<const sparse_analysis> spd_analysis_of<T, O>(context&, const device_csr<T, O>&);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace la
