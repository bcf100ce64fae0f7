// The registry of SpMV variants (the only list; each launcher is declared in
// detail/variants.hpp and built from the file CMakeLists.txt names), the format defaults,
// spmv_plan and la::spmv.
#include <memory>
#include <string>

#include <la/kernels/spmv/detail/variants.hpp>
#include <la/detail/instantiate.hpp>

namespace la {

const char* to_string(row_walk w) noexcept {
  switch (w) {
    case row_walk::none: return "none";
    case row_walk::thread: return "thread per row";
    case row_walk::group: return "group of lanes per row";
  }
  return "unknown";
}

namespace {
/// Runs on format F; formats without offsets (COO, ELL, HYB, dense) have no 64-bit form.
template <format F>
bool on(const spmv_problem& p) {
  constexpr bool has_offsets = F == format::csr || F == format::csc || F == format::jds || F == format::sell;
  return p.fmt == F && p.rows >= 0 && p.cols >= 0 && p.nnz >= 0 && (has_offsets || !p.wide);
}
std::size_t no_workspace(const spmv_problem&) { return 0; }
template <typename T>
void no_prepare(const matrix_view<T>&, void*, cudaStream_t) {}
bool always(const spmv_problem&) { return true; }
bool always_candidate(const spmv_stats&) { return true; }

// CSR from sizes alone: the group kernel from a mean row length of 4 up (a group of lanes
// per row), the thread kernel below. select_spmv (select.cu) decides from row statistics.
double mean_row(const spmv_problem& p) { return p.rows ? double(p.nnz) / p.rows : 0; }
bool short_rows(const spmv_problem& p) { return p.rows && mean_row(p) < 4; }
bool not_short_rows(const spmv_problem& p) { return !short_rows(p); }
// tune_spmv times ELL only where its padding is at most 1.5x the entries.
bool ell_pads_little(const spmv_stats& s) { return double(s.rows) * s.longest <= 1.5 * double(s.nnz); }

// The launchers compute complex values as detail::dcomplex (device_complex.cuh); the
// registry of std::complex<R> runs them on the same memory seen as dcomplex<R>.
template <typename T>
using D = detail::device_value_t<T>;
template <typename T>
using launcher = void (*)(const matrix_view<D<T>>&, void*, const D<T>*, D<T>*, D<T>, D<T>, cudaStream_t);
template <typename T, launcher<T> F>
void run_as(const matrix_view<T>& a, void* w, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  if constexpr (std::is_same_v<T, D<T>>) F(a, w, x, y, alpha, beta, s);
  else F(detail::rebind_view<matrix_view<D<T>>>(a), w, detail::device_ptr(x), detail::device_ptr(y), D<T>(alpha), D<T>(beta), s);
}
template <typename T, void (*F)(const matrix_view<D<T>>&, void*, cudaStream_t)>
void prepare_as(const matrix_view<T>& a, void* w, cudaStream_t s) {
  if constexpr (std::is_same_v<T, D<T>>) F(a, w, s);
  else F(detail::rebind_view<matrix_view<D<T>>>(a), w, s);
}

template <typename T>
std::vector<spmv_variant<T>>& registry() {
  using namespace spmv_detail;
  //  name             format         determ.  walk               format default   tune candidate    can_implement
  //                                                                workspace, prepare, run
  static std::vector<spmv_variant<T>> list = {
      {"coo_atomic", format::coo, false, row_walk::none, nullptr, nullptr, on<format::coo>,
       no_workspace, no_prepare<T>, run_as<T, run_coo_atomic<D<T>>>},
      {"coo_segmented", format::coo, false, row_walk::none, always, nullptr, on<format::coo>,
       no_workspace, no_prepare<T>, run_as<T, run_coo_segmented<D<T>>>},
      {"csr_scalar", format::csr, true, row_walk::thread, short_rows, always_candidate, on<format::csr>,
       no_workspace, no_prepare<T>, run_as<T, run_thread_rows<D<T>>>},
      {"csr_vector", format::csr, true, row_walk::group, not_short_rows, always_candidate, on<format::csr>,
       no_workspace, no_prepare<T>, run_as<T, run_csr_vector<D<T>>>},
      {"csr_balanced", format::csr, true, row_walk::none, nullptr, always_candidate, on<format::csr>,
       [](const spmv_problem& p) { return csr_balanced_workspace_bytes(p, sizeof(T)); }, prepare_as<T, prepare_csr_balanced<D<T>>>,
       run_as<T, run_csr_balanced<D<T>>>},
      {"csc_atomic", format::csc, false, row_walk::none, always, nullptr, on<format::csc>,
       no_workspace, no_prepare<T>, run_as<T, run_csc_atomic<D<T>>>},
      {"ell", format::ell, true, row_walk::thread, always, ell_pads_little, on<format::ell>,
       no_workspace, no_prepare<T>, run_as<T, run_thread_rows<D<T>>>},
      {"jds", format::jds, true, row_walk::thread, always, always_candidate, on<format::jds>,
       no_workspace, no_prepare<T>, run_as<T, run_thread_rows<D<T>>>},
      {"hyb", format::hyb, false, row_walk::none, always, always_candidate, on<format::hyb>,
       no_workspace, no_prepare<T>, run_as<T, run_hyb<D<T>>>},
      {"sell", format::sell, true, row_walk::thread, always, always_candidate, on<format::sell>,
       no_workspace, no_prepare<T>, run_as<T, run_thread_rows<D<T>>>},
      {"dense_gemv", format::dense, true, row_walk::none, always, nullptr, on<format::dense>,
       no_workspace, no_prepare<T>, run_as<T, run_dense_gemv<D<T>>>},
  };
  return list;
}
}  // namespace

template <typename T>
const std::vector<spmv_variant<T>>& spmv_variants() {
  return registry<T>();
}

void add_spmv_variant(const spmv_variant<float>& f, const spmv_variant<double>& d) {
  LA_EXPECTS(!f.name.empty() && f.name == d.name, "add_spmv_variant: the float and double forms need one non-empty name");
  const std::string name(f.name);
  LA_EXPECTS(name != "auto", "add_spmv_variant: 'auto' is not a kernel name");
  LA_EXPECTS(f.fmt == d.fmt && f.deterministic == d.deterministic && f.walk == d.walk &&
                 !f.format_default == !d.format_default && !f.auto_candidate == !d.auto_candidate,
             "add_spmv_variant: '" + name + "': the float and double forms differ in format or properties");
  LA_EXPECTS(f.can_implement && d.can_implement && f.workspace_bytes && d.workspace_bytes && f.prepare && d.prepare &&
                 f.run && d.run,
             "add_spmv_variant: '" + name + "' lacks can_implement, workspace_bytes, prepare or run");
  LA_EXPECTS(f.walk != row_walk::group || f.fmt == format::csr,
             "add_spmv_variant: '" + name + "': a group-per-row walk runs on CSR only");
  LA_EXPECTS(f.walk != row_walk::thread || f.fmt == format::csr || f.fmt == format::ell || f.fmt == format::jds ||
                 f.fmt == format::sell,
             "add_spmv_variant: '" + name + "': a thread-per-row walk runs on CSR, ELL, JDS or SELL");
  for (const auto& v : registry<float>())
    LA_EXPECTS(v.name != f.name, "add_spmv_variant: a variant named '" + name + "' exists");
  // The registry refers to the name by string_view: keep the characters alive.
  static std::vector<std::unique_ptr<std::string>> names;
  names.push_back(std::make_unique<std::string>(name));
  spmv_variant<float> fv = f;
  spmv_variant<double> dv = d;
  fv.name = dv.name = *names.back();
  registry<float>().push_back(fv);
  registry<double>().push_back(dv);
}

std::string spmv_variant_names(bool sparse_only) {
  std::string names;
  for (const auto& v : spmv_variants<double>())
    if (!sparse_only || v.fmt != format::dense) names += (names.empty() ? "" : ", ") + std::string(v.name);
  return names;
}

template <typename T>
const spmv_variant<T>& find_spmv(std::string_view name) {
  for (const auto& v : spmv_variants<T>())
    if (v.name == name) return v;
  throw invalid_argument("unknown SpMV kernel '" + std::string(name) + "'; choose auto or one of: " +
                         spmv_variant_names());
}

template <typename T>
const spmv_variant<T>& find_spmv(format fmt, row_walk walk) {
  for (const auto& v : spmv_variants<T>())
    if (v.fmt == fmt && v.walk == walk) return v;
  throw not_supported(std::string("no SpMV kernel on ") + to_string(fmt) + " walks the rows as " + to_string(walk));
}

template <typename T>
const spmv_variant<T>& default_spmv(const spmv_problem& p) {
  for (const auto& v : spmv_variants<T>())
    if (v.fmt == p.fmt && v.format_default && v.format_default(p) && v.can_implement(p)) return v;
  throw not_supported(std::string("no SpMV kernel for format ") + to_string(p.fmt));
}

template <typename T>
spmv_plan<T>::spmv_plan(context& ctx, const matrix_view<T>& a, std::string_view kernel)
    : spmv_plan(ctx, a, kernel == "auto" ? default_spmv<T>(problem_of(a)) : find_spmv<T>(kernel)) {}

template <typename T>
spmv_plan<T>::spmv_plan(context& ctx, const matrix_view<T>& a, const spmv_variant<T>& v) : view_(a), variant_(&v) {
  const spmv_problem p = problem_of(a);
  LA_EXPECTS(v.fmt == a.fmt, "spmv: kernel '" + std::string(v.name) + "' runs on " + to_string(v.fmt) +
                                 ", not on this " + to_string(a.fmt) + " matrix");
  LA_EXPECTS(v.can_implement(p), "spmv: kernel '" + std::string(v.name) + "' cannot run this " + to_string(a.fmt) +
                                     " matrix (" + std::to_string(a.rows) + " x " + std::to_string(a.cols) + ", " +
                                     std::to_string(a.nnz) + " stored entries)");
  workspace_ = ctx.allocate<unsigned char>(v.workspace_bytes(p));
  if (!workspace_.empty()) v.prepare(a, workspace_.data(), ctx.stream());
}

namespace {
template <typename T>
void check_sizes(const matrix_view<T>& a, const device_vector<T>& x, const device_vector<T>& y) {
  LA_EXPECTS(x.size() == a.cols, "spmv: x has " + std::to_string(x.size()) + " elements, the matrix " +
                                     std::to_string(a.cols) + " columns");
  LA_EXPECTS(y.size() == a.rows, "spmv: y has " + std::to_string(y.size()) + " elements, the matrix " +
                                     std::to_string(a.rows) + " rows");
}
}  // namespace

template <typename T>
void spmv_plan<T>::run(context& ctx, const device_vector<T>& x, device_vector<T>& y, T alpha, T beta) const {
  check_sizes(view_, x, y);
  run(x.data(), y.data(), alpha, beta, ctx.stream());
}

template <typename T>
void spmv(context& ctx, const matrix_view<T>& a, const device_vector<T>& x, device_vector<T>& y, T alpha, T beta,
          std::string_view kernel) {
  check_sizes(a, x, y);
  const spmv_problem p = problem_of(a);
  const spmv_variant<T>& v = kernel == "auto" ? default_spmv<T>(p) : find_spmv<T>(kernel);
  LA_EXPECTS(v.workspace_bytes(p) == 0, "spmv: kernel '" + std::string(v.name) +
                                            "' prepares a workspace per matrix: build an la::spmv_plan once and "
                                            "call its run() for each product");
  spmv_plan<T>(ctx, a, v).run(x.data(), y.data(), alpha, beta, ctx.stream());
}

#define LA_INSTANTIATE_T(T)                                                                                \
  template const std::vector<spmv_variant<T>>& spmv_variants<T>();                                         \
  template const spmv_variant<T>& find_spmv<T>(std::string_view);                                          \
  template const spmv_variant<T>& find_spmv<T>(format, row_walk);                                          \
  template const spmv_variant<T>& default_spmv<T>(const spmv_problem&);                                    \
  template class spmv_plan<T>;                                                                             \
  template void spmv<T>(context&, const matrix_view<T>&, const device_vector<T>&, device_vector<T>&, T, T, \
                        std::string_view);
LA_FOR_EACH_VALUE(LA_INSTANTIATE_T)
LA_FOR_EACH_COMPLEX(LA_INSTANTIATE_T)
#undef LA_INSTANTIATE_T

}  // namespace la
