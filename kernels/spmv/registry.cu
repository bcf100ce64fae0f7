// The registry of SpMV variants (each is also declared in variants.hpp and listed in
// CMakeLists.txt; the CG solver's fused forms live in solvers/device_cg.cu), the default
// choice, the views, and la::spmv.
#include <string>

#include <la/kernels/spmv/detail/common.cuh>
#include <la/kernels/spmv/detail/variants.hpp>
#include <la/detail/instantiate.hpp>

namespace la {
namespace {
template <format F>
bool on(const spmv_problem& p) {
  return p.fmt == F && p.rows >= 0 && p.cols >= 0;
}
std::size_t no_plan(const spmv_problem&) { return 0; }
template <typename T>
void no_prepare(const matrix_view<T>&, void*, cudaStream_t) {}
}  // namespace

template <typename T>
const std::vector<spmv_variant<T>>& spmv_variants() {
  using namespace spmv_detail;
  static const std::vector<spmv_variant<T>> list = {
      {"coo_atomic", format::coo, false, on<format::coo>, no_plan, no_prepare<T>, run_coo_atomic<T>},
      {"coo_segmented", format::coo, false, on<format::coo>, no_plan, no_prepare<T>, run_coo_segmented<T>},
      {"csr_scalar", format::csr, true, on<format::csr>, no_plan, no_prepare<T>, run_csr_scalar<T>},
      {"csr_vector", format::csr, true, on<format::csr>, no_plan, no_prepare<T>, run_csr_vector<T>},
      {"csr_balanced", format::csr, true, on<format::csr>,
       [](const spmv_problem& p) { return csr_balanced_plan_bytes(p, sizeof(T)); }, prepare_csr_balanced<T>,
       run_csr_balanced<T>},
      {"csc_atomic", format::csc, false, on<format::csc>, no_plan, no_prepare<T>, run_csc_atomic<T>},
      {"ell", format::ell, true, on<format::ell>, no_plan, no_prepare<T>, run_ell<T>},
      {"jds", format::jds, true, on<format::jds>, no_plan, no_prepare<T>, run_jds<T>},
      {"hyb", format::hyb, false, on<format::hyb>, no_plan, no_prepare<T>, run_hyb<T>},
      {"sell", format::sell, true, on<format::sell>, no_plan, no_prepare<T>, run_sell<T>},
      {"dense_gemv", format::dense, true, on<format::dense>, no_plan, no_prepare<T>, run_dense_gemv<T>},
  };
  return list;
}

template <typename T>
const spmv_variant<T>& find_spmv(std::string_view name) {
  for (const auto& v : spmv_variants<T>())
    if (v.name == name) return v;
  std::string names;
  for (const auto& v : spmv_variants<T>()) names += (names.empty() ? "" : ", ") + std::string(v.name);
  throw invalid_argument("unknown SpMV kernel '" + std::string(name) + "'; choose auto or one of: " + names);
}

template <typename T>
const spmv_variant<T>& default_spmv(const spmv_problem& p) {
  // CSR from sizes alone: the vector kernel from a mean row length of 4 up (a group of lanes
  // per row), the scalar one below. select_spmv (select.cu) decides from row statistics.
  if (p.fmt == format::csr) return find_spmv<T>(p.rows && double(p.nnz) / p.rows >= 4 ? "csr_vector" : "csr_scalar");
  for (const auto& v : spmv_variants<T>())
    if (v.fmt == p.fmt && v.can_implement(p)) return v;
  throw not_supported(std::string("no SpMV kernel for format ") + to_string(p.fmt));
}

template <typename T, typename O>
matrix_view<T> spmv_view(const device_csr<T, O>& a) {
  matrix_view<T> m{format::csr, sizeof(O) == 8, a.rows(), a.cols(), a.nnz()};
  if constexpr (sizeof(O) == 8) m.csr64 = a.view();
  else m.csr32 = a.view();
  return m;
}
template <typename T, typename O>
matrix_view<T> spmv_view(const device_csc<T, O>& a) {
  matrix_view<T> m{format::csc, sizeof(O) == 8, a.rows(), a.cols(), a.nnz()};
  if constexpr (sizeof(O) == 8) m.csc64 = a.view();
  else m.csc32 = a.view();
  return m;
}
template <typename T>
matrix_view<T> spmv_view(const device_coo<T>& a) {
  matrix_view<T> m{format::coo, false, a.rows(), a.cols(), a.nnz()};
  m.coo = a.view();
  return m;
}
template <typename T>
matrix_view<T> spmv_view(const device_ell<T>& a) {
  matrix_view<T> m{format::ell, false, a.rows(), a.cols(), static_cast<count_t>(a.slots())};
  m.ell = a.view();
  return m;
}
template <typename T, typename O>
matrix_view<T> spmv_view(const device_jds<T, O>& a) {
  matrix_view<T> m{format::jds, sizeof(O) == 8, a.rows(), a.cols(), a.nnz()};
  if constexpr (sizeof(O) == 8) m.jds64 = a.view();
  else m.jds32 = a.view();
  return m;
}
template <typename T>
matrix_view<T> spmv_view(const device_dense<T>& a) {
  matrix_view<T> m{format::dense, false, a.rows(), a.cols(), static_cast<count_t>(a.rows()) * a.cols()};
  m.dense = a.view();
  return m;
}

template <typename T>
matrix_view<T> spmv_view(const device_hyb<T>& a) {
  matrix_view<T> m{format::hyb, false, a.rows(), a.cols(), a.stored()};
  m.hyb = a.view();
  return m;
}
template <typename T, typename O>
matrix_view<T> spmv_view(const device_sell<T, O>& a) {
  matrix_view<T> m{format::sell, sizeof(O) == 8, a.rows(), a.cols(), a.slots()};
  if constexpr (sizeof(O) == 8) m.sell64 = a.view();
  else m.sell32 = a.view();
  return m;
}

template <typename T>
void spmv(context& ctx, const matrix_view<T>& a, const device_vector<T>& x, device_vector<T>& y, T alpha, T beta,
          std::string_view kernel) {
  LA_EXPECTS(x.size() == a.cols, "spmv: x has " + std::to_string(x.size()) + " elements, the matrix " +
                                     std::to_string(a.cols) + " columns");
  LA_EXPECTS(y.size() == a.rows, "spmv: y has " + std::to_string(y.size()) + " elements, the matrix " +
                                     std::to_string(a.rows) + " rows");
  const spmv_problem p = problem_of(a);
  const spmv_variant<T>& v = kernel == "auto" ? default_spmv<T>(p) : find_spmv<T>(kernel);
  LA_EXPECTS(v.fmt == a.fmt && v.can_implement(p), "spmv: kernel '" + std::string(v.name) + "' runs on " +
                                                       to_string(v.fmt) + ", not on this " + to_string(a.fmt) +
                                                       " matrix");
  void* plan = nullptr;
  if (const std::size_t bytes = v.plan_bytes(p)) {
    plan = ctx.scratch(bytes);
    v.prepare(a, plan, ctx.stream());
  }
  v.run(a, plan, x.data(), y.data(), alpha, beta, ctx.stream());
}

#define LA_INSTANTIATE_T(T)                                                                                    \
  template const std::vector<spmv_variant<T>>& spmv_variants<T>();                                             \
  template const spmv_variant<T>& find_spmv<T>(std::string_view);                                              \
  template const spmv_variant<T>& default_spmv<T>(const spmv_problem&);                                        \
  template matrix_view<T> spmv_view<T>(const device_coo<T>&);                                                  \
  template matrix_view<T> spmv_view<T>(const device_ell<T>&);                                                  \
  template matrix_view<T> spmv_view<T>(const device_dense<T>&);                                                \
  template matrix_view<T> spmv_view<T>(const device_hyb<T>&);                                                  \
  template void spmv<T>(context&, const matrix_view<T>&, const device_vector<T>&, device_vector<T>&, T, T,     \
                        std::string_view);
#define LA_INSTANTIATE_TO(T, O)                                                 \
  template matrix_view<T> spmv_view<T, O>(const device_csr<T, O>&);             \
  template matrix_view<T> spmv_view<T, O>(const device_csc<T, O>&);             \
  template matrix_view<T> spmv_view<T, O>(const device_jds<T, O>&);             \
  template matrix_view<T> spmv_view<T, O>(const device_sell<T, O>&);
LA_FOR_EACH_VALUE(LA_INSTANTIATE_T)
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE_TO)
#undef LA_INSTANTIATE_T
#undef LA_INSTANTIATE_TO

}  // namespace la
