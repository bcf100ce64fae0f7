// IC(0)'s and ILU(0)'s registry entries and options (registry.hpp); the factorizations are
// factored.hpp (host, the oracle) and factored.cu (GPU), the matching matching.hpp.
#include <cstdlib>
#include <string>

#include <la/error.hpp>
#include <la/solvers/detail/precond_builders.hpp>
#include <la/solvers/precond/factored.hpp>
#include <la/solvers/registry.hpp>

namespace la::registry_detail {
namespace {
/// IC(0) or ILU(0) as host_factors computes and applies them.
template <typename T>
struct host_factored final : host_precond_operator<T> {
  host_factors<T> f;
  host_factored(const csr_matrix<T, count_t>& a, bool ilu, const precond_options& opt) : f(a, ilu, opt) {
    this->rep = f.report();
  }
  void apply(const std::vector<T>& r, std::vector<T>& z) const override { f.apply(r, z); }
};
template <typename T>
std::unique_ptr<host_precond_operator<T>> build_ic0(const csr_matrix<T, count_t>& a, const precond_options& opt) {
  return std::make_unique<host_factored<T>>(a, false, opt);
}
template <typename T>
std::unique_ptr<host_precond_operator<T>> build_ilu0(const csr_matrix<T, count_t>& a, const precond_options& opt) {
  return std::make_unique<host_factored<T>>(a, true, opt);
}

using on = option_scope::on;
constexpr option_scope ic0_or_ilu0{on::precond, "ic0|ilu0", "{precond} ic0 or ilu0"};

void set_trisolve(cg_options& o, const option_value& v) {
  factor_options& f = o.precond_opt.factor;
  const std::string& t = v.text;
  if (t.rfind("jacobi", 0) == 0) {
    f.solve = trisolve::jacobi;
    if (t.size() > 6) {  // jacobi:K
      const std::string k = t.substr(t[6] == ':' ? 7 : 6);
      char* end = nullptr;
      const long steps = t[6] == ':' && !k.empty() ? std::strtol(k.c_str(), &end, 10) : -1;
      if (steps < 1 || steps > 1000 || (end && *end))
        throw invalid_argument("{trisolve} jacobi:K needs K an integer in [1, 1000], got '" + printable(t) + "'");
      f.jacobi_steps = static_cast<int>(steps);
    }
  } else {
    f.solve = t == "exact" ? trisolve::exact : t == "isai" ? trisolve::isai : trisolve::automatic;
  }
}

constexpr option_spec options[] = {
    {"ic-shift", option_type::real, "1", 0, 1.7976931348623157e308, "", "S",
     "ic0: the largest diagonal shift tried, relative to the scaled unit\n"
     "diagonal (default 1; shifts 0, 1e-3, 3e-3, 0.01, ... are tried)",
     {on::precond, "ic0", "{precond} ic0"}, {}, "",
     [](cg_options& o, const option_value& v) { o.precond_opt.max_shift = v.number; }},
    {"factorization", option_type::choice, "auto", 0, 0, "auto|exact|sweeps", "F",
     "ic0, ilu0: how the factors are computed: auto (default: sweeps on\n"
     "the GPU, exact on the CPU and where ilu0's diagonal has zeros or\n"
     "gaps), exact (row by row in dependency order;\n"
     "on the GPU level by level), sweeps (ParIC/ParILU: fixed-point sweeps\n"
     "over all entries at once, deterministic)",
     ic0_or_ilu0, {}, "",
     [](cg_options& o, const option_value& v) {
       o.precond_opt.factor.method = v.text == "exact"    ? factorization::exact
                                     : v.text == "sweeps" ? factorization::sweeps
                                                          : factorization::automatic;
     }},
    {"sweeps", option_type::integer, "0", 1, 1000, "", "K",
     "sweeps: how many (default 3, bench/RESULTS.md \"Incomplete\n"
     "factorizations\")",
     ic0_or_ilu0, {"factorization", "exact", false, "{sweeps} applies to {factorization} sweeps (or auto, which sweeps on the GPU)"},
     "", [](cg_options& o, const option_value& v) { o.precond_opt.factor.sweeps = static_cast<int>(v.number); }},
    {"trisolve", option_type::choice, "auto", 0, 0, "auto|exact|jacobi|jacobi:K|isai", "S",
     "ic0, ilu0: how L and U are applied: auto (default: on the GPU isai\n"
     "for swept factors, exact for exact ones; exact on the CPU), exact\n"
     "(substitution; on the GPU level by level),\n"
     "jacobi[:K] (K Jacobi sweeps on each triangle, default 2), isai\n"
     "(incomplete sparse approximate inverses of L and U on their own\n"
     "patterns: two sparse products). Each is a fixed linear operator,\n"
     "symmetric for ic0, so CG and GMRES take it as they are",
     ic0_or_ilu0, {}, "", set_trisolve},
    {"matching", option_type::choice, "auto", 0, 0, "auto|on|off", "M",
     "ilu0: permute and scale the rows to a heavy, zero-free diagonal\n"
     "(max-product matching) before factoring: auto (default: where the\n"
     "diagonal has missing entries, or stored zeros that leave a zero\n"
     "pivot), on, off. The method still solves A x = b: M^-1 =\n"
     "Dc (LU)^-1 Dr P",
     {on::precond, "ilu0", "{precond} ilu0"}, {}, "",
     [](cg_options& o, const option_value& v) {
       o.precond_opt.factor.matching = v.text == "on"    ? matching_mode::on
                                       : v.text == "off" ? matching_mode::off
                                                         : matching_mode::automatic;
     }},
};
static_assert(options_are_valid(options));
}  // namespace

option_list factored_option_list() { return {options, sizeof options / sizeof options[0]}; }

preconditioner_entry ic0_entry() {
  constexpr preconditioner_entry e{"ic0", preconditioner::ic0,
                                   "incomplete Cholesky on tril(A), with the smallest\n"
                                   "diagonal shift up to {ic-shift} that works",
                                   true, true, true, false, true, true, false, true,
                                   precond_form::apart, false, "IC(0)", "", nullptr,
                                   LA_HOST_BUILDERS(build_ic0), LA_DEVICE_BUILDERS(precond_detail::make_ic0)};
  static_assert(entry_is_valid(e));
  return e;
}

preconditioner_entry ilu0_entry() {
  constexpr preconditioner_entry e{
      "ilu0", preconditioner::ilu0,
      "incomplete LU on A's pattern (of Dr P A Dc where\n"
      "{matching} says), no shift (for a\n"
      "symmetric A, IC(0) without the shift)",
      false, true, true, true, false, true, false, true,
      precond_form::apart, false, "ILU(0)",
      "; ILU(0) of a symmetric positive definite matrix need not be SPD, so CG may break down with it: "
      "use ic0 or fsai with CG, or ilu0 with bicgstab or gmres",
      nullptr, LA_HOST_BUILDERS(build_ilu0), LA_DEVICE_BUILDERS(precond_detail::make_ilu0)};
  static_assert(entry_is_valid(e));
  return e;
}

}  // namespace la::registry_detail
