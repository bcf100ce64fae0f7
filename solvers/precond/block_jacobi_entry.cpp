// Block-Jacobi's registry entry and option (registry.hpp); the preconditioner is
// block_jacobi.hpp (host) and block_jacobi.cu (GPU).
#include <la/solvers/registry.hpp>

namespace la::registry_detail {
namespace {
constexpr option_spec options[] = {
    {"block-size", option_type::integer, "32", 1, 32, "", "N", "block-jacobi: the largest block, 1 to 32 rows (default 32)",
     {option_scope::on::precond, "block-jacobi", "{precond} block-jacobi"}, {}, "",
     [](cg_options& o, const option_value& v) { o.precond_opt.max_block = static_cast<int>(v.number); }},
};
static_assert(options_are_valid(options));
}  // namespace

option_list block_jacobi_option_list() { return {options, sizeof options / sizeof options[0]}; }

preconditioner_entry block_jacobi_entry() {
  return {"block-jacobi", preconditioner::block_jacobi,
          "dense inverses of the diagonal blocks of rows that\n"
          "share a pattern (supervariables, up to {block-size})",
          false, true, true, false, true, true, false, true};
}

}  // namespace la::registry_detail
