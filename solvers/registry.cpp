// The lists of methods, preconditioners and options (registry.hpp): each family's entry
// named once here, in --help's order.
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
          false, false, true, true, true, true, false, true};
}
}  // namespace registry_detail

const std::vector<method_entry>& methods() {
  static const std::vector<method_entry> list = [] {
    std::size_t n = 0;
    const method_entry* e = registry_detail::method_entries(n);
    return std::vector<method_entry>(e, e + n);
  }();
  return list;
}

const std::vector<preconditioner_entry>& preconditioners() {
  using namespace registry_detail;
  static const std::vector<preconditioner_entry> list = {none_entry(), jacobi_entry(), block_jacobi_entry(), fsai_entry(),
                                                         ic0_entry(),  ilu0_entry(),   amg_entry(),          auto_entry()};
  return list;
}

const std::vector<option_spec>& solve_options() {
  using namespace registry_detail;
  static const std::vector<option_spec> list = [] {
    std::vector<option_spec> all;
    for (option_list l : {general_option_list(), fsai_option_list(), factored_option_list(), block_jacobi_option_list(),
                          amg_option_list()})
      all.insert(all.end(), l.begin, l.begin + l.size);
    return all;
  }();
  return list;
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
    if (!name.empty() && find_option(name)) {
      out += spell(name);
      i = close + 1;
    } else {
      out += '{';
      i = open + 1;
    }
  }
  return out;
}

}  // namespace la
