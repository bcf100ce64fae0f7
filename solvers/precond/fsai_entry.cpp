// FSAI's registry entry, options and host builder (registry.hpp); the algorithm is fsai.hpp
// (host, the oracle) and fsai.cu (GPU).
#include <la/kernels/reference/transpose.hpp>
#include <la/solvers/detail/precond_builders.hpp>
#include <la/solvers/precond/fsai.hpp>
#include <la/solvers/registry.hpp>

namespace la::registry_detail {
namespace {
/// M^-1 = G^T G, applied as t = G r, z = G^T t, each row summed in wider_t.
template <typename T>
struct host_fsai final : host_precond_operator<T> {
  csr_matrix<T, count_t> g, gt;
  mutable std::vector<T> t;
  static wider_t<T> row_dot(const csr_matrix<T, count_t>& m, index_t i, const T* x) {
    wider_t<T> v = 0;
    for (count_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k)
      v += static_cast<wider_t<T>>(m.values()[k]) * x[m.col_idx()[k]];
    return v;
  }
  void apply(const std::vector<T>& r, std::vector<T>& z) const override {
    const index_t n = static_cast<index_t>(r.size());
    t.resize(r.size());
    for (index_t i = 0; i < n; ++i) t[i] = static_cast<T>(row_dot(g, i, r.data()));
    for (index_t i = 0; i < n; ++i) z[i] = static_cast<T>(row_dot(gt, i, t.data()));
  }
};
template <typename T>
std::unique_ptr<host_precond_operator<T>> build_host(const csr_matrix<T, count_t>& a, const precond_options& opt) {
  auto p = std::make_unique<host_fsai<T>>();
  index_t trimmed = 0;
  double flops = 0;
  p->g = fsai_factor(a, opt.fsai, &trimmed, &flops);
  p->gt = reference::transpose(p->g);
  p->rep.detail = std::string("pattern ") + to_string(opt.fsai.pattern) + ", " + std::to_string(p->g.nnz()) +
                  " nonzeros in G" + fsai_budget_note(trimmed, opt.fsai.max_row, flops);
  p->rep.bytes = 2.0 * p->g.nnz() * (sizeof(T) + sizeof(index_t));
  return p;
}

using on = option_scope::on;
constexpr option_scope fsai_or_auto{on::precond, "fsai|auto", "{precond} fsai (or auto)"};
constexpr option_spec options[] = {
    {"fsai-pattern", option_type::choice, "lower", 0, 0, "lower|squared", "P",
     "lower (default: tril(A)) or squared (tril(|A|^2), fewer iterations,\n"
     "more setup and a denser G)",
     fsai_or_auto, {}, "",
     [](cg_options& o, const option_value& v) {
       o.precond_opt.fsai.pattern = v.text == "squared" ? fsai_pattern::lower_squared : fsai_pattern::lower;
     }},
    {"fsai-drop", option_type::real, "0", 0, 1.7976931348623157e308, "", "D",
     "with squared: drop the columns whose |A|^2 entry is below D times\n"
     "the row's largest (default 0: keep all)",
     fsai_or_auto, {"fsai-pattern", "squared", true, "{fsai-drop} applies to {fsai-pattern} squared"}, "",
     [](cg_options& o, const option_value& v) { o.precond_opt.fsai.drop = v.number; }},
    {"fsai-max-row", option_type::integer, "64", 0, 100000, "", "N",
     "the fill budget: at most N entries in a row of G (default 64;\n"
     "0: no cap). A row of p entries costs about p^3/3 flops to set up,\n"
     "so a long row (an arrow matrix's tril(|A|^2)) is cut to the\n"
     "diagonal and its largest entries; the report says how many were",
     fsai_or_auto, {}, "", [](cg_options& o, const option_value& v) { o.precond_opt.fsai.max_row = static_cast<int>(v.number); }},
};
static_assert(options_are_valid(options));
}  // namespace

option_list fsai_option_list() { return {options, sizeof options / sizeof options[0]}; }

preconditioner_entry fsai_entry() {
  constexpr preconditioner_entry e{"fsai", preconditioner::fsai,
                                   "G^T G, G lower triangular with G A G^T close to I\n"
                                   "on the pattern {fsai-pattern}; exists for every\n"
                                   "SPD matrix",
                                   true, false, true, false, true, true, false, true,
                                   precond_form::apart, true, "FSAI", "", nullptr,
                                   LA_HOST_BUILDERS(build_host), LA_DEVICE_BUILDERS(precond_detail::make_fsai)};
  static_assert(entry_is_valid(e));
  return e;
}

}  // namespace la::registry_detail
