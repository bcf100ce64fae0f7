// The lists of methods, preconditioners and options (registry.hpp): each family's entry
// named once here, in --help's order.
#include <algorithm>
#include <optional>

#include <la/error.hpp>
#include <la/solvers/registry.hpp>

namespace la {
namespace registry_detail {
preconditioner_entry auto_entry() {
  return {"auto", preconditioner::automatic,
          "for CG on the GPU: amg on systems of at least 1M\n"
          "rows with at most 6 entries a row (2D grids) and\n"
          "on any past 12M rows; on the CPU: amg from 4,096\n"
          "rows with at most 6 entries a row and on any past\n"
          "262,144 rows (measured on each side); else fsai on\n"
          "tril(A), which exists for every SPD matrix\n"
          "(bench/RESULTS.md, \"Algebraic multigrid\",\n"
          "\"Preconditioners\", \"Defaults, the host solver\").\n"
          "Where the one it picks does not exist for A,\n"
          "jacobi (none for cg), and the report says why",
          false, false, true, true, true, true, false, true, precond_form::apart, false, "auto"};
}
}  // namespace registry_detail

namespace {
std::vector<method_entry>& method_list() {
  static std::vector<method_entry> list = [] {
    std::size_t n = 0;
    const method_entry* e = registry_detail::method_entries(n);
    std::vector<method_entry> all(e, e + n);
    all.push_back(registry_detail::direct_entry());
    return all;
  }();
  return list;
}
}  // namespace

const std::vector<method_entry>& methods() { return method_list(); }

const method_entry& entry_of(krylov_method m) {
  for (const method_entry& e : methods())
    if (e.kind == m) return e;
  throw invalid_argument("no method is registered as kind " + std::to_string(static_cast<int>(m)));
}

const char* to_string(krylov_method m) noexcept {
  for (const method_entry& e : methods())
    if (e.kind == m) return e.name.data();
  return "unknown";
}

std::optional<krylov_method> parse_method(const std::string& s) {
  if (const method_entry* e = find_method(s)) return e->kind;
  return std::nullopt;
}

namespace {
// The lists, which add_preconditioner extends (before any solve reads them).
std::vector<preconditioner_entry>& precond_list() {
  using namespace registry_detail;
  static std::vector<preconditioner_entry> list = {none_entry(), jacobi_entry(), block_jacobi_entry(),
                                                   fsai_entry(), ic0_entry(),    ilu0_entry(),
                                                   amg_entry(),  inner_entry(), auto_entry()};
  return list;
}
std::vector<option_spec>& option_list_of_all() {
  using namespace registry_detail;
  static std::vector<option_spec> list = [] {
    std::vector<option_spec> all;
    for (option_list l : {general_option_list(), fsai_option_list(), factored_option_list(), block_jacobi_option_list(),
                          amg_option_list(), inner_option_list(), direct_option_list()})
      all.insert(all.end(), l.begin, l.begin + l.size);
    return all;
  }();
  return list;
}
}  // namespace

const std::vector<preconditioner_entry>& preconditioners() { return precond_list(); }
const std::vector<option_spec>& solve_options() { return option_list_of_all(); }

const preconditioner_entry& entry_of(preconditioner p) {
  for (const preconditioner_entry& e : preconditioners())
    if (e.kind == p) return e;
  throw invalid_argument("no preconditioner is registered as kind " + std::to_string(static_cast<int>(p)));
}

precond_form form_of(preconditioner p) { return entry_of(p).form; }

const char* to_string(preconditioner p) noexcept {
  for (const preconditioner_entry& e : preconditioners())
    if (e.kind == p) return e.name.data();
  return "unknown";
}

std::optional<preconditioner> parse_preconditioner(const std::string& s) {
  if (const preconditioner_entry* e = find_preconditioner(s)) return e->kind;
  return std::nullopt;
}

namespace {
/// Appends e to `list` as the next kind past la's own (`last_own`) and its options to the
/// option list, after the checks every registration shares.
template <typename Entry, typename Kind>
Kind append_entry(std::vector<Entry>& list, Entry e, Kind last_own, const char* who, const option_spec* options,
                  std::size_t count) {
  LA_EXPECTS(!e.name.empty() && e.name.data()[e.name.size()] == '\0',
             std::string(who) + ": the entry needs a name (a string literal)");
  for (const Entry& x : list)
    LA_EXPECTS(x.name != e.name, std::string(who) + ": '" + std::string(e.name) + "' is listed already");
  for (std::size_t i = 0; i < count; ++i)
    LA_EXPECTS(!find_option(options[i].name), std::string(who) + ": an option named '" + std::string(options[i].name) +
                                                  "' is listed already");
  int next = static_cast<int>(last_own) + 1;
  for (const Entry& x : list) next = std::max(next, static_cast<int>(x.kind) + 1);
  e.kind = static_cast<Kind>(next);
  list.push_back(e);
  option_list_of_all().insert(option_list_of_all().end(), options, options + count);
  return e.kind;
}
}  // namespace

krylov_method add_method(method_entry e, const option_spec* options, std::size_t count) {
  const method_solvers& s = e.solvers;
  LA_EXPECTS(!e.help.empty() && s.complete(),
             "add_method: '" + std::string(e.name) + "' needs help and host and GPU solvers for float and double");
  return append_entry(method_list(), e, krylov_method::direct, "add_method", options, count);
}

preconditioner add_preconditioner(preconditioner_entry e, const option_spec* options, std::size_t count) {
  LA_EXPECTS(e.form == precond_form::apart && entry_is_valid(e),
             "add_preconditioner: '" + std::string(e.name) +
                 "' needs a title, help, and host and device builders for float and double (form apart)");
  return append_entry(precond_list(), e, preconditioner::automatic, "add_preconditioner", options, count);
}

const method_entry* find_method(std::string_view name) {
  for (const method_entry& e : methods())
    if (e.name == name) return &e;
  return nullptr;
}
const preconditioner_entry* find_preconditioner(std::string_view name) {
  for (const preconditioner_entry& e : preconditioners())
    if (e.name == name) return &e;
  return nullptr;
}
const option_spec* find_option(std::string_view name) {
  for (const option_spec& s : solve_options())
    if (s.name == name) return &s;
  return nullptr;
}

namespace {
bool listed(std::string_view list, std::string_view name) {
  while (!list.empty()) {
    const std::size_t bar = list.find('|');
    if (list.substr(0, bar) == name) return true;
    if (bar == std::string_view::npos) break;
    list.remove_prefix(bar + 1);
  }
  return false;
}
}  // namespace

bool applies(const option_spec& s, std::string_view method, std::string_view precond) {
  switch (s.scope.kind) {
    case option_scope::on::solve: return true;
    case option_scope::on::method: return listed(s.scope.names, method);
    case option_scope::on::precond: return listed(s.scope.names, precond);
  }
  return true;
}

std::vector<std::string> choices_of(const option_spec& s) {
  std::vector<std::string> out;
  if (s.from == option_spec::names::methods)
    for (const method_entry& e : methods()) out.emplace_back(e.name);
  if (s.from == option_spec::names::preconditioners)
    for (const preconditioner_entry& e : preconditioners()) out.emplace_back(e.name);
  std::string_view list = s.choices;
  while (!list.empty()) {
    const std::size_t bar = list.find('|');
    out.emplace_back(list.substr(0, bar));
    if (bar == std::string_view::npos) break;
    list.remove_prefix(bar + 1);
  }
  return out;
}

std::string python_name(const option_spec& s) {
  if (!s.python.empty()) return std::string(s.python);
  std::string n(s.name);
  for (char& c : n)
    if (c == '-') c = '_';
  return n;
}

std::string render_names(std::string_view text, const std::function<std::string(std::string_view)>& spell) {
  return render_names_with_values(text, [&](std::string_view name, std::string_view, std::size_t&) { return spell(name); });
}

std::string render_names_with_values(
    std::string_view text, const std::function<std::string(std::string_view, std::string_view, std::size_t&)>& spell) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t open = text.find('{', i);
    if (open == std::string_view::npos) {
      out.append(text.substr(i));
      break;
    }
    const std::size_t close = text.find('}', open);
    const std::string_view name = close == std::string_view::npos ? std::string_view{} : text.substr(open + 1, close - open - 1);
    out.append(text.substr(i, open - i));
    // A declared option, or `device`: where a solve runs, an option each front end owns
    // (--device, device=) that choose_device's message names.
    if (!name.empty() && (find_option(name) || name == "device")) {
      std::size_t used = 0;
      out += spell(name, text.substr(close + 1), used);
      i = close + 1 + used;
    } else {
      out += '{';
      i = open + 1;
    }
  }
  return out;
}

}  // namespace la
