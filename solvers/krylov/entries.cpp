// The Krylov methods' registry entries and the options every solve reads (tolerances, the
// iteration limit, the method, the preconditioner), declared once (registry.hpp). Each
// entry's solvers are its method's pair (krylov/solvers.hpp); auto has none: solve_by_method
// resolves it to one of them first.
#include <cstdint>
#include <limits>

#include <la/solvers/krylov/solvers.hpp>
#include <la/solvers/registry.hpp>

namespace la::registry_detail {
namespace {
using on = option_scope::on;
constexpr double max_int64 = static_cast<double>(std::numeric_limits<std::int64_t>::max());

// The general options; {entries} in a help is where the registry's list goes.
constexpr option_spec general[] = {
    {"method", option_type::choice, "auto", 0, 0, "", "M", "auto (default), cg, bicgstab, gmres, fgmres or direct:\n{entries}", {}, {},
     "", [](cg_options& o, const option_value& v) { o.method = find_method(v.text)->kind; }, option_spec::names::methods},
    {"restart", option_type::integer, "30", 1, 500, "", "M", "gmres/fgmres: the basis size m, 1 to 500 (default 30)",
     {on::method, "gmres|fgmres|auto", "{method} gmres or fgmres (or auto, when it picks gmres)"}, {}, "",
     [](cg_options& o, const option_value& v) { o.restart = static_cast<int>(v.number); }},
    {"auto-direct-rows", option_type::integer, "20000", 0, max_int64, "", "N",
     "auto on a double A that does not look SPD and has at most N rows\n"
     "(default 20000; 0: never): the direct method first, the Krylov\n"
     "methods where it does not solve A (singular, a factor that does\n"
     "not fit). Measured, direct was 2-280x faster than the Krylov\n"
     "methods on every real non-symmetric system up to 13,436 rows",
     {on::method, "auto", "{method} auto"}, {}, "",
     [](cg_options& o, const option_value& v) { o.auto_direct_rows = static_cast<std::int64_t>(v.number); }},
    {"auto-direct-flops", option_type::real, "2e5", 0, std::numeric_limits<double>::max(), "", "F",
     "auto on a double A that looks SPD and has at most 5,000 nonzeros:\n"
     "the sparse analysis predicts the factorization's multiply-adds;\n"
     "at most F (default 2e5; 0: never) solve directly first, more run\n"
     "CG. Measured on an H200 machine, auto's CG was 1.3-2.5x behind\n"
     "direct on the SPD systems predicted at 1e3-1e5 and ahead from 4e5",
     {on::method, "auto", "{method} auto"}, {}, "",
     [](cg_options& o, const option_value& v) { o.auto_direct_flops = v.number; }},
    {"force", option_type::flag, "", 0, 0, "", "",
     "allow -o to replace the matrix or right-hand side file, and\n"
     "write-protected outputs; run {method} cg on a non-symmetric matrix",
     {}, {}, "", [](cg_options& o, const option_value& v) { o.force = v.number != 0; }},
    {"tol", option_type::real, "1e-8", 0, std::numeric_limits<double>::max(), "", "T",
     "relative residual tolerance ||r|| <= T ||b|| (default 1e-8)", {}, {}, "rtol",
     [](cg_options& o, const option_value& v) { o.rtol = v.number; }},
    {"atol", option_type::real, "0", 0, std::numeric_limits<double>::max(), "", "T", "absolute residual floor (default 0)",
     {}, {}, "", [](cg_options& o, const option_value& v) { o.atol = v.number; }},
    {"maxit", option_type::integer, "-1", 0, max_int64, "", "N",
     "iteration limit (default 2n for cg; max(2n, 20000) for bicgstab,\n"
     "gmres and fgmres, whose counts on small systems pass 2n)",
     {}, {}, "maxiter", [](cg_options& o, const option_value& v) { o.max_iterations = static_cast<std::int64_t>(v.number); }},
    {"precond", option_type::choice, "auto", 0, 0, "", "P",
     "auto (default), none, jacobi, block-jacobi, fsai, ic0, ilu0 or amg\n"
     "(bicgstab, gmres and fgmres take none, jacobi, ilu0, amg\n"
     "and auto, which there means amg on a nearly symmetric A (pattern\n"
     "symmetric, |a_ij - a_ji| <= 1% of max |a_ij|) of CG's AMG sizes,\n"
     "else ilu0, and jacobi where ILU(0) does not exist; bench/RESULTS.md\n"
     "\"Incomplete factorizations\", \"Algebraic multigrid\"; jacobi\n"
     "takes a zero or missing diagonal entry as 1, as PETSc's):\n"
     "{entries}\n"
     "On the GPU, fsai in double runs inside the persistent kernel; the\n"
     "others between kernels on the graph path.\n"
     "The setup time, memory and the pattern or shift used are printed.",
     {}, {}, "", [](cg_options& o, const option_value& v) { o.precond = find_preconditioner(v.text)->kind; },
     option_spec::names::preconditioners},
};
static_assert(options_are_valid(general));

constexpr method_entry entries[] = {
    {"auto", krylov_method::automatic,
     "checks the values' symmetry and the diagonal's signs\n"
     "(on the GPU when solving there) and says what it\n"
     "picked and why: cg when A looks SPD (symmetric\n"
     "values, positive diagonal), else bicgstab (it\n"
     "solved 4 of the 9 real non-symmetric systems\n"
     "measured where gmres solved 1), except that a double\n"
     "A that does not look SPD, of at most\n"
     "{auto-direct-rows} rows, is solved directly first,\n"
     "and so is a small SPD one whose factorization the\n"
     "analysis predicts at most {auto-direct-flops}.\n"
     "Where auto's\n"
     "bicgstab breaks down, stagnates or diverges, or\n"
     "its cg breaks down (A not positive definite),\n"
     "gmres continues; where that stops short too and the\n"
     "factor fits (double: the sparse factor, up to 1M\n"
     "rows on the GPU, 200,000 on the host; float: A's\n"
     "dense form, 32,768 and 16,384), direct solves it.\n"
     "The report says so",
     false, true, false, true},
    {"cg", krylov_method::cg,
     "refused on a matrix whose values are not symmetric,\n"
     "naming the alternative; {force} runs it anyway",
     true, true, false, true, LA_METHOD_SOLVERS(krylov_detail::cg_on_host, krylov_detail::cg_on_device)},
    {"bicgstab", krylov_method::bicgstab, "two products with A an iteration, short recurrences", false, false, false, true,
     LA_METHOD_SOLVERS(krylov_detail::bicgstab_on_host, krylov_detail::bicgstab_on_device)},
    {"gmres", krylov_method::gmres,
     "restarted GMRES(m), right-preconditioned: the residual\n"
     "it monitors is ||b - Ax||; never grows; breaks down\n"
     "only where A M^-1 is singular (it says so)",
     false, false, false, false, LA_METHOD_SOLVERS(krylov_detail::gmres_on_host, krylov_detail::gmres_on_device)},
    {"fgmres", krylov_method::fgmres,
     "flexible GMRES(m), for preconditioners that change\n"
     "between applications",
     false, false, true, false, LA_METHOD_SOLVERS(krylov_detail::fgmres_on_host, krylov_detail::fgmres_on_device)},
};
}  // namespace

option_list general_option_list() {
  // method and precond first: where the others apply depends on them. restart belongs to
  // gmres and fgmres, declared here beside them.
  return {general, sizeof general / sizeof general[0]};
}
const method_entry* method_entries(std::size_t& n) {
  n = sizeof entries / sizeof entries[0];
  return entries;
}

}  // namespace la::registry_detail
