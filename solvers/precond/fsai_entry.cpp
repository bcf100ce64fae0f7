// FSAI's registry entry and options (registry.hpp); the preconditioner is fsai.hpp (host,
// the oracle) and fsai.cu (GPU).
#include <la/solvers/registry.hpp>

namespace la::registry_detail {
namespace {
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
  return {"fsai", preconditioner::fsai,
          "G^T G, G lower triangular with G A G^T close to I\n"
          "on the pattern {fsai-pattern}; exists for every\n"
          "SPD matrix",
          true, false, true, false, true, true, false, true};
}

}  // namespace la::registry_detail
