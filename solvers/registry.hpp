// The registries of Krylov methods and preconditioners, and the options of a solve: the only
// lists of them. Each method or preconditioner family declares its entry and its options in
// its own file (solvers/method_entries.cpp; solvers/precond/*_entry.cpp; solvers/amg/entry.cpp),
// each option once: its name, type, default, range or choices, where it applies and its
// help. Front ends read these tables: the CLI's parser and `la solve --help`
// (tools/solve_options.cpp), Python's keywords (python/la/__init__.py, through
// `_la.solve_options()`), and docs/options.md, which `la options` writes and a
// test compares.
//
// Names: an option's declared name is its CLI spelling without the dashes ("amg-smoother");
// Python's keyword is that name with '_' for '-', unless the entry names another (rtol for
// "tol", maxiter for "maxit", as scipy). A message that names an option writes "{name}" and
// each front end renders it in its own spelling (render_names).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <la/solvers/krylov_options.hpp>

namespace la {

enum class option_type { real, integer, choice, flag };

/// What an option reads: the number (real, integer, flag as 0/1) or the choice's text.
struct option_value {
  double number = 0;
  std::string text;
};

/// Where an option applies: to the methods or preconditioners named, '|'-separated (empty:
/// every solve). `shown` is how the refusal words it ("{precond} fsai (or auto)").
struct option_scope {
  enum class on { solve, method, precond } kind = on::solve;
  std::string_view names;
  std::string_view shown;
};

/// Another option this one needs (`required`: other must be `value`) or refuses (other must
/// not be `value`), worded by `message`.
struct option_rule {
  std::string_view other, value;
  bool required = true;
  std::string_view message;
};

struct option_spec {
  std::string_view name;      // declared name: the CLI's spelling without "--"
  option_type type = option_type::real;
  std::string_view fallback;  // the default as the front ends show and read it ("30", "auto")
  double lo = 0, hi = 0;      // real, integer: the range
  std::string_view choices;   // choice: '|'-separated ("v|w|f"), unless from names a registry
  std::string_view metavar;   // the value's placeholder in --help ("M", "P")
  std::string_view help;      // --help's text, lines of at most 68 columns joined by '\n'
  option_scope scope;
  option_rule rule;           // empty other: none
  std::string_view python;    // Python's keyword where it is not the name with '_' for '-'
  /// Stores the value in the options (the only place that names the field).
  void (*set)(cg_options&, const option_value&) = nullptr;
  /// choice: the registry whose entries' names are the choices (method=, precond=), instead of
  /// a list of its own.
  enum class names { listed, methods, preconditioners } from = names::listed;
};

/// What a method or preconditioner takes and what it is, read by the front ends' checks and
/// the tests' sweeps.
struct method_entry {
  std::string_view name;  // stable: the CLI's --method, Python's method=
  krylov_method kind;
  std::string_view help;  // --help's lines (joined by '\n')
  bool symmetric_only;    // needs A symmetric positive definite (cg)
  bool several_gpus;      // runs on a team of GPUs (--gpus, --mpi)
  bool flexible;          // takes an M^-1 that changes between applications
  bool short_recurrence;  // memory independent of the iteration count
};

struct preconditioner_entry {
  std::string_view name;  // stable: the CLI's --precond, Python's precond=
  preconditioner kind;
  std::string_view help;
  // What it accepts.
  bool symmetric_only;    // exists only for SPD A (fsai, ic0)
  bool needs_diagonal;    // needs a nonzero diagonal (or a matching to one)
  bool several_gpus;      // built on each GPU's block of a team
  bool nonsymmetric_methods;  // bicgstab, gmres and fgmres take it
  // What it is.
  bool symmetric_operator;  // M^-1 symmetric (CG's need)
  bool fixed;               // the same M^-1 every application
  bool values_only_resetup; // a new A with the same pattern re-uses the setup's structure
  bool deterministic;       // bit-identical applications run to run
};

/// The only lists (in --help's order).
const std::vector<method_entry>& methods();
const std::vector<preconditioner_entry>& preconditioners();
/// Every option of a solve: the general ones, then each method's and preconditioner's.
const std::vector<option_spec>& solve_options();

const method_entry* find_method(std::string_view name);
const preconditioner_entry* find_preconditioner(std::string_view name);
const option_spec* find_option(std::string_view name);

/// Whether `s` applies to a solve by `method` with `precond` (names as declared).
bool applies(const option_spec& s, std::string_view method, std::string_view precond);
/// The choices of a choice option, in order (a registry's names where the option says so).
std::vector<std::string> choices_of(const option_spec& s);
/// Python's keyword for `s`.
std::string python_name(const option_spec& s);
/// `text` with each "{name}" of a declared option replaced by spell(name).
std::string render_names(std::string_view text, const std::function<std::string(std::string_view)>& spell);

/// Checks a set of entries at compile time: names and help present, defaults inside their
/// range, a setter for each (static_assert(options_are_valid(list)) in each family's file).
template <std::size_t N>
constexpr bool options_are_valid(const option_spec (&list)[N]) {
  for (const option_spec& s : list) {
    if (s.name.empty() || s.help.empty() || s.set == nullptr || (s.fallback.empty() && s.type != option_type::flag))
      return false;
    if ((s.type == option_type::real || s.type == option_type::integer) && !(s.lo <= s.hi)) return false;
    if (s.type == option_type::choice && s.choices.empty() && s.from == option_spec::names::listed) return false;
    if (s.scope.kind != option_scope::on::solve && (s.scope.names.empty() || s.scope.shown.empty())) return false;
  }
  return true;
}

namespace registry_detail {
// Each family's declarations (defined in its own file); registry.cpp lists them once.
struct option_list {
  const option_spec* begin;
  std::size_t size;
};
option_list general_option_list();
option_list factored_option_list();
option_list fsai_option_list();
option_list block_jacobi_option_list();
option_list amg_option_list();
const method_entry* method_entries(std::size_t& n);
preconditioner_entry none_entry();
preconditioner_entry jacobi_entry();
preconditioner_entry block_jacobi_entry();
preconditioner_entry fsai_entry();
preconditioner_entry ic0_entry();
preconditioner_entry ilu0_entry();
preconditioner_entry amg_entry();
preconditioner_entry auto_entry();
}  // namespace registry_detail

}  // namespace la
