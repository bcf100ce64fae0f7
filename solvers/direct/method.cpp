// The direct method (`--method direct`, method='direct'). double: the sparse direct solver's
// multifrontal LU (sparse_direct_solver.hpp; no pivoting where A looks SPD, static pivoting
// after a max-product matching otherwise), on the GPU or on the host's threads
// (sparse_direct/detail/fronts.hpp); float: on the host the up-looking sparse Cholesky or LU
// (sparse_analysis.hpp), on the GPU A's dense form (la::dense_solver). Where the sparse LU
// cannot start or misses after refinement, A's dense form by LU with partial pivoting
// (dense_host.hpp, dense_device.cu) where it fits. Refined with residuals of the sparse A in
// wider precision, reported with the backward error and (but for the GPU's sparse LU) a
// condition estimate. Exit 0 means ||b - A x|| met the tolerance, as for every method; a
// singular A is a breakdown naming the column.
#include <string>
#include <vector>

#include <la/solvers/direct/device_direct.hpp>
#include <la/solvers/direct/host_direct.hpp>
#include <la/solvers/device_cg.hpp>
#include <la/solvers/host_matrix.hpp>
#include <la/solvers/method.hpp>
#include <la/solvers/registry.hpp>

namespace la {
namespace {
// The method's solvers: one setup (host_direct, device_direct: the chain and its checks) and
// one column.
template <typename T>
solve_result direct_host(const host_matrix_ref<T>& a, const std::vector<T>& b, std::vector<T>& x, const cg_options& o) {
  host_direct<T> d(a.csr(), o);
  return d.solve(b, x);
}

template <typename T, typename O>
solve_result direct_device(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                           const cg_options& o, const device_cg_options&) {
  device_direct<T, O> d(ctx, a, o);
  return d.solve(b, x);
}
}  // namespace

namespace registry_detail {
namespace {
using on = option_scope::on;
// What auto's direct-first rules and its fallback read too: the scope is direct or auto.
constexpr option_scope direct_or_auto{on::method, "direct|auto", "{method} direct (or auto)"};
constexpr option_spec options[] = {
    {"ordering", option_type::choice, "auto", 0, 0, "auto|amd|metis|natural", "O",
     "the direct method's fill-reducing ordering: auto (default: AMD,\n"
     "and METIS too where AMD's factor would take longer than METIS's\n"
     "run; the smaller factor kept), amd, metis or natural (none). A\n"
     "build without METIS or AMD refuses those and says so",
     direct_or_auto, {}, "",
     [](cg_options& o, const option_value& v) { o.direct.ordering = *parse_fill_ordering(v.text); }},
    {"refinement", option_type::choice, "auto", 0, 0, "auto|classical|gmres", "R",
     "the direct method's iterative refinement: auto (default: classical,\n"
     "then GMRES-based from the best x where classical stalls), classical\n"
     "or gmres. It stops at a backward error near 1e-16 and a relative\n"
     "residual below a thousandth of {tol}",
     direct_or_auto, {}, "",
     [](cg_options& o, const option_value& v) { o.direct.refinement = *parse_refinement(v.text); }},
    {"host-factorization", option_type::choice, "auto", 0, 0, "auto|la|suitesparse", "F",
     "what factors A on the host (double): auto (default: SuiteSparse's\n"
     "CHOLMOD where A looks SPD, UMFPACK else, where this build found\n"
     "them; 2.2-2.7x la's own on 2D and 3D grids on 2 cores), la (la's\n"
     "multifrontal fronts on the host's threads, the GPU's oracle) or\n"
     "suitesparse. The report names what factored A",
     direct_or_auto, {}, "",
     [](cg_options& o, const option_value& v) {
       o.direct.host_factor = v.text == "la" ? host_factorization::la
                              : v.text == "suitesparse" ? host_factorization::suitesparse
                                                        : host_factorization::automatic;
     }},
    {"condition", option_type::choice, "auto", 0, 0, "auto|yes|no", "C",
     "the direct method's 1-norm condition estimate (Hager and Higham, up\n"
     "to 11 solves with the factors): auto (default: where those solves\n"
     "take at most a tenth of the setup's time), yes or no. The report\n"
     "gives it, or says why not",
     direct_or_auto, {}, "",
     [](cg_options& o, const option_value& v) {
       o.direct.condition = v.text == "yes" ? condition_estimate::yes : v.text == "no" ? condition_estimate::no : condition_estimate::automatic;
     }},
    {"max-refinement", option_type::integer, "10", 0, 100, "", "N",
     "the direct method's refinement steps at most, per kind (default 10;\n"
     "0: the factors' solve as it is, checked all the same)",
     direct_or_auto, {}, "",
     [](cg_options& o, const option_value& v) { o.direct.max_refinement = static_cast<int>(v.number); }},
};
static_assert(options_are_valid(options));
}  // namespace

option_list direct_option_list() { return {options, sizeof options / sizeof options[0]}; }

method_entry direct_entry() {
  return {"direct", krylov_method::direct,
          "A sparse factorization (METIS/AMD ordering): on\n"
          "the GPU a supernodal multifrontal LU (static\n"
          "pivoting after a max-product matching; none for\n"
          "SPD), fronts on the fp64 Tensor Core GEMM; on the\n"
          "host the same on its threads (float: up-looking\n"
          "sparse Cholesky or LU). Refined to a backward\n"
          "error near 1e-16; where it misses and A's dense\n"
          "form fits, dense LU with partial pivoting. A\n"
          "singular A is named by its column",
          false, false, false, true, LA_METHOD_SOLVERS(direct_host, direct_device), true};
}
}  // namespace registry_detail

}  // namespace la
