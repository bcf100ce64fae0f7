// Smoothed-aggregation AMG's registry entry, options and host builder (registry.hpp); the
// setup is hierarchy.hpp and aggregation.hpp (host, the oracle) and amg.cu (GPU).
#include <la/solvers/amg/hierarchy.hpp>
#include <la/solvers/detail/precond_builders.hpp>
#include <la/solvers/registry.hpp>

namespace la::registry_detail {
namespace {
/// The host hierarchy, in double whatever T is.
template <typename T>
struct host_amg_operator final : host_precond_operator<T> {
  host_amg amg;
  mutable std::vector<double> rd, zd;
  host_amg_operator(const csr_matrix<T, count_t>& a, const amg_options& opt) : amg(a, opt) {
    this->rep.detail = amg.describe();
    this->rep.bytes = amg.bytes();
  }
  void apply(const std::vector<T>& r, std::vector<T>& z) const override {
    rd.assign(r.begin(), r.end());
    amg.apply(rd, zd);
    for (std::size_t i = 0; i < z.size(); ++i) z[i] = static_cast<T>(zd[i]);
  }
};
template <typename T>
std::unique_ptr<host_precond_operator<T>> build_host(const csr_matrix<T, count_t>& a, const precond_options& opt) {
  return std::make_unique<host_amg_operator<T>>(a, opt.amg);
}
/// The F-cycle is not a symmetric operator, which CG needs.
std::string refuses(krylov_method m, const cg_options& opt) {
  if (m != krylov_method::cg || opt.precond_opt.amg.cycle != amg_cycle::f) return {};
  return "the AMG F-cycle is not a symmetric operator, which CG needs: use {amg-cycle} v or w, or "
         "{method} gmres or bicgstab";
}

constexpr option_scope amg_only{option_scope::on::precond, "amg", "{precond} amg"};
constexpr option_spec options[] = {
    {"amg-strength", option_type::real, "0.08", 0, 1, "", "S",
     "amg: strength of connection theta on the finest level, halved a\n"
     "level (default 0.08): j is a strong neighbour of i when |a_ij| >=\n"
     "theta sqrt(|a_ii a_jj|)",
     amg_only, {}, "", [](cg_options& o, const option_value& v) { o.precond_opt.amg.strength = v.number; }},
    {"amg-smoother", option_type::choice, "chebyshev", 0, 0, "chebyshev|l1-jacobi", "S",
     "amg: chebyshev (default: a polynomial in D^-1 A on [0.1, 1] of its\n"
     "largest eigenvalue, estimated) or l1-jacobi (x += D_l1^-1 (b - A x),\n"
     "D_l1 = diag(sum_j |a_ij|): no eigenvalue bound needed)",
     amg_only, {}, "",
     [](cg_options& o, const option_value& v) {
       o.precond_opt.amg.smoother = v.text == "l1-jacobi" ? amg_smoother::l1_jacobi : amg_smoother::chebyshev;
     }},
    {"amg-degree", option_type::integer, "2", 1, 10, "", "K",
     "amg: the Chebyshev degree, or L1-Jacobi sweeps, before and after\n"
     "(default 2)",
     amg_only, {}, "", [](cg_options& o, const option_value& v) { o.precond_opt.amg.smoother_degree = static_cast<int>(v.number); }},
    {"amg-coarse", option_type::integer, "512", 1, amg_coarse_size_max, "", "N",
     "amg: a level of at most N rows is solved densely (default 512,\n"
     "at most 8192; a level that stops coarsening is solved densely up\n"
     "to max(N, 512) rows)",
     amg_only, {}, "", [](cg_options& o, const option_value& v) { o.precond_opt.amg.coarse_size = static_cast<index_t>(v.number); }},
    {"amg-levels", option_type::integer, "25", 1, 100, "", "L", "amg: at most L levels (default 25)", amg_only, {}, "",
     [](cg_options& o, const option_value& v) { o.precond_opt.amg.max_levels = static_cast<int>(v.number); }},
    {"amg-cycle", option_type::choice, "v", 0, 0, "v|w|f", "C",
     "amg: v (default), w (two coarse visits a level) or f (an F-cycle on\n"
     "the coarse level, then a V-cycle; not symmetric: bicgstab and\n"
     "gmres take it, cg refuses it)",
     amg_only, {}, "",
     [](cg_options& o, const option_value& v) {
       o.precond_opt.amg.cycle = v.text == "w" ? amg_cycle::w : v.text == "f" ? amg_cycle::f : amg_cycle::v;
     }},
    {"amg-block-size", option_type::integer, "1", 1, 32, "", "B",
     "amg: unknowns a node, node-major (default 1): strength and\n"
     "aggregation on nodes (the blocks' Frobenius norms), B constant\n"
     "modes (one a component) unless the coordinates or a near-null\n"
     "space give others",
     amg_only, {}, "", [](cg_options& o, const option_value& v) { o.precond_opt.amg.block_size = static_cast<int>(v.number); }},
    {"amg-near-null-space", option_type::choice, "auto", 0, 0, "auto|none", "N",
     "amg: auto (default: the vectors given, else rigid-body modes from\n"
     "the coordinates (a gen:elasticity system carries its own), else\n"
     "the block size's constant modes, else the constant vector) or none\n"
     "(scalar AMG, the constant vector alone: for comparison)",
     amg_only, {}, "", [](cg_options& o, const option_value& v) { o.precond_opt.amg.use_near_null = v.text != "none"; }},
};
static_assert(options_are_valid(options));
}  // namespace

option_list amg_option_list() { return {options, sizeof options / sizeof options[0]}; }

preconditioner_entry amg_entry() {
  constexpr preconditioner_entry e{"amg", preconditioner::amg,
                                   "one V-cycle of smoothed-aggregation algebraic\n"
                                   "multigrid, set up on the GPU: iterations that do\n"
                                   "not grow with the grid on PDE systems",
                                   false, false, false, true, true, true, true, true,
                                   precond_form::apart, false, "AMG", "", refuses,
                                   LA_HOST_BUILDERS(build_host), LA_DEVICE_BUILDERS(precond_detail::make_amg)};
  static_assert(entry_is_valid(e));
  return e;
}

}  // namespace la::registry_detail
