// The registries of Krylov methods and preconditioners, and the options of a solve: the only
// lists of them. Each method or preconditioner family declares its entry and its options in
// its own file (solvers/krylov/entries.cpp; solvers/precond/*_entry.cpp; solvers/amg/entry.cpp),
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
#include <la/solvers/precond/operator.hpp>
#include <la/vector.hpp>

namespace la {

template <typename T>
class host_matrix_ref;     // host_matrix.hpp
struct device_cg_options;  // device_cg.hpp

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

/// How a Krylov method's backend applies a preconditioner: not at all (M = I, z is r),
/// fused into its own vector kernels as D^-1 (Jacobi: the backend reads A's diagonal), or
/// apart, as the M^-1 the entry's builders make, between the method's kernels.
enum class precond_form { identity, diagonal, apart };

/// A method's solvers, the only way a solve reaches a method (la's own and those added at run
/// time alike): the host one (the oracle), on A in any host format (host_matrix.hpp: la's
/// Krylov methods run on the format itself, others read its CSR), and the GPU one, on CSR,
/// for each value and offset type. `device_cg_options` carries the GPU path and the SpMV
/// kernel chosen for A (a method that has no use for them ignores them).
template <typename T>
using host_method_solver = solve_result (*)(const host_matrix_ref<T>&, const std::vector<T>& b, std::vector<T>& x,
                                            const cg_options&);
template <typename T, typename O>
using device_method_solver = solve_result (*)(context&, const device_csr<T, O>&, const device_vector<T>& b,
                                              device_vector<T>& x, const cg_options&, const device_cg_options&);
struct method_solvers {
  host_method_solver<float> hf = nullptr;
  host_method_solver<double> hd = nullptr;
  device_method_solver<float, std::int32_t> f32 = nullptr;
  device_method_solver<float, std::int64_t> f64 = nullptr;
  device_method_solver<double, std::int32_t> d32 = nullptr;
  device_method_solver<double, std::int64_t> d64 = nullptr;
  template <typename T>
  host_method_solver<T> host() const {
    if constexpr (std::is_same_v<T, float>) return hf;
    else return hd;
  }
  template <typename T, typename O>
  device_method_solver<T, O> device() const {
    return for_types<T, O>(f32, f64, d32, d64);
  }
  constexpr bool complete() const { return hf && hd && f32 && f64 && d32 && d64; }
};
/// The solvers of a method's function templates host<T> and device<T, O>, for its entry.
#define LA_METHOD_SOLVERS(host, device)                                                                   \
  ::la::method_solvers {                                                                                  \
    &host<float>, &host<double>, &device<float, std::int32_t>, &device<float, std::int64_t>,              \
        &device<double, std::int32_t>, &device<double, std::int64_t>                                      \
  }

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
  method_solvers solvers; // how a solve runs it (auto, resolved before a solve, has none)
  bool on_gpu = true;     // solves on the GPU
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
  // How the solvers reach it.
  precond_form form = precond_form::apart;
  bool two_products = false;  // M^-1 = G^T G: a solver may fuse G's and G^T's products into its
                              // own kernels (device_preconditioner::factors)
  std::string_view title;     // its name in a sentence ("ILU(0)")
  std::string_view cg_breakdown_hint;  // added to CG's breakdown message when it is applied
  /// Why it cannot serve `method` with these options ("" when it can), checked before a solve.
  std::string (*refuses)(krylov_method method, const cg_options& opt) = nullptr;
  host_builders host;      // form apart: the host builder, the oracle
  device_builders device;  // form apart: the GPU builder
  /// Its GPU apply only queues kernels, so a method may capture it into a CUDA graph; false
  /// (an inner solve, which reads its stopping test on the host): the methods run it on
  /// their plain path.
  bool capturable = true;
};

/// The only lists (in --help's order).
const std::vector<method_entry>& methods();
const std::vector<preconditioner_entry>& preconditioners();
/// Every option of a solve: the general ones, then each method's and preconditioner's.
const std::vector<option_spec>& solve_options();

/// The entry of a method (la::invalid_argument for a value no entry has).
const method_entry& entry_of(krylov_method m);
/// Adds a method to the list, with its options, before any solve reads the lists: its kind is
/// a new value of la::krylov_method, which solve_host and solve_device run through its
/// solvers, as they run la's own, and the CLI and Python take by its name. `e.name` and the options' strings must
/// outlive the program (string literals); a name already listed is la::invalid_argument.
krylov_method add_method(method_entry e, const option_spec* options = nullptr, std::size_t count = 0);

/// The entry of a preconditioner (la::invalid_argument for a value no entry has).
const preconditioner_entry& entry_of(preconditioner p);
/// How a backend applies `p` (automatic: apart, resolved by the builder).
precond_form form_of(preconditioner p);

/// Adds a preconditioner to the list (an embedding program's, or a test's), with its options,
/// before any solve reads the lists: its kind is a new value of la::preconditioner, which the
/// solvers, the CLI and Python then take by its name. `e.name` and the options' strings must
/// outlive the program (string literals). Its form must be apart, with host and device
/// builders; a name already listed is la::invalid_argument.
preconditioner add_preconditioner(preconditioner_entry e, const option_spec* options = nullptr, std::size_t count = 0);

const method_entry* find_method(std::string_view name);
const preconditioner_entry* find_preconditioner(std::string_view name);
const option_spec* find_option(std::string_view name);

/// One option of a solve as a front end was given it: its declared name and its value as
/// text (ignored for a flag, which is on when given).
struct given_option {
  std::string name, value;
};
/// The options of a solve from those given (the rest at their defaults), each read and checked
/// as declared: a value that is not of its type or is out of its range, a choice not listed,
/// an option that does not apply to the method and preconditioner asked for, or a rule broken,
/// is la::invalid_argument naming the options as {name} (render_names), in the words
/// `la solve` shows them with. Solver-level checks (a method that refuses the matrix) come later.
cg_options read_solve_options(const std::vector<given_option>& given);
/// A finite number in [lo, hi] (or an integer) read from all of `text`; otherwise
/// la::invalid_argument "<what> needs ..." saying what is wrong and the range.
double read_real(const std::string& text, double lo, double hi, const std::string& what);
long long read_integer(const std::string& text, long long lo, long long hi, const std::string& what);

/// Whether `s` applies to a solve by `method` with `precond` (names as declared).
bool applies(const option_spec& s, std::string_view method, std::string_view precond);
/// The choices of a choice option, in order (a registry's names where the option says so).
std::vector<std::string> choices_of(const option_spec& s);
/// Python's keyword for `s`.
std::string python_name(const option_spec& s);
/// `text` with each "{name}" of a declared option (or of `device`, which the front ends own)
/// replaced by spell(name). Library messages (solve_result::message, la::error's what()) name
/// options this way; the CLI renders "--name", Python "name=", a C++ caller may show them as
/// they are or render them in its own words.
std::string render_names(std::string_view text, const std::function<std::string(std::string_view)>& spell);
/// As render_names, for a spelling that takes the word after a marker too ("{matching} on" as
/// matching='on'): spell(name, rest, used) gets the text after the marker and sets `used` to
/// how many of its characters the spelling replaced.
std::string render_names_with_values(
    std::string_view text, const std::function<std::string(std::string_view name, std::string_view rest, std::size_t& used)>& spell);

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

/// Checks an entry at compile time (static_assert(entry_is_valid(e)) in each family's file):
/// a name and help; a form apart has both builders for every type (auto's are its pick's), the
/// fused forms none; what only SPD matrices have is not offered to the other methods.
constexpr bool entry_is_valid(const preconditioner_entry& e) {
  if (e.name.empty() || e.help.empty() || e.title.empty()) return false;
  const bool all = e.host.f && e.host.d && e.device.f32 && e.device.f64 && e.device.d32 && e.device.d64;
  const bool any = e.host.f || e.host.d || e.device.f32 || e.device.f64 || e.device.d32 || e.device.d64;
  if (e.form == precond_form::apart && !all && e.kind != preconditioner::automatic) return false;
  if (e.form != precond_form::apart && (any || e.two_products)) return false;
  if (e.symmetric_only && e.nonsymmetric_methods) return false;
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
option_list direct_option_list();
preconditioner_entry none_entry();
preconditioner_entry jacobi_entry();
preconditioner_entry block_jacobi_entry();
preconditioner_entry fsai_entry();
preconditioner_entry ic0_entry();
preconditioner_entry ilu0_entry();
preconditioner_entry amg_entry();
const method_entry* method_entries(std::size_t& n);  // solvers/krylov/entries.cpp
method_entry direct_entry();  // solvers/direct/method.cpp
preconditioner_entry inner_entry();
option_list inner_option_list();
preconditioner_entry auto_entry();
}  // namespace registry_detail

}  // namespace la
