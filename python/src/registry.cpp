// The registry's declarations for Python (la/solvers/registry.hpp): la's keywords and choices
// come from them (python/la/__init__.py), and tests/test_registry.py checks the stubs against them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <string>
#include <vector>

#include <la/solvers/registry.hpp>

namespace py = pybind11;

namespace la {
namespace {
bool word_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

/// A library message in Python's words: each option it names as {name} (registry.hpp) as its
/// keyword; keyword='value' where one of the option's values follows, keyword=True for a flag.
std::string python_words(const std::string& text) {
  return render_names_with_values(text, [](std::string_view name, std::string_view rest, std::size_t& used) {
    const option_spec* s = find_option(name);  // null: device, which Python owns
    const std::string kw = s ? python_name(*s) : std::string(name);
    if (s && s->type == option_type::flag) return kw + "=True";
    std::size_t end = 1;
    while (end < rest.size() && word_char(rest[end])) ++end;
    const std::string value = !rest.empty() && rest[0] == ' ' && end > 1 ? std::string(rest.substr(1, end - 1)) : "";
    const std::vector<std::string> values = s ? choices_of(*s) : std::vector<std::string>{"auto", "cpu", "gpu"};
    if (value.empty() || std::find(values.begin(), values.end(), value) == values.end()) return kw;
    used = end;
    return kw + "='" + value + "'";
  });
}
}  // namespace

void bind_registry(py::module_& mod) {
  mod.def("python_words", &python_words,
          "A la message with the options it names ({name}) in Python's spelling: rtol, matching='on', force=True.");
  mod.def(
      "solve_options",
      [] {
        py::list out;
        for (const option_spec& s : solve_options()) {
          const char* type = s.type == option_type::real      ? "real"
                             : s.type == option_type::integer ? "integer"
                             : s.type == option_type::choice  ? "choice"
                                                              : "flag";
          out.append(py::make_tuple(std::string(s.name), python_name(s), type, std::string(s.fallback), choices_of(s),
                                    python_words(std::string(s.help))));
        }
        return out;
      },
      "The registry's options of a solve (la/solvers/registry.hpp): (name, keyword, type, default, choices, help).");
  mod.def(
      "registry_names",
      [] {
        std::vector<std::string> m, p;
        for (const method_entry& e : methods()) m.emplace_back(e.name);
        for (const preconditioner_entry& e : preconditioners()) p.emplace_back(e.name);
        return py::make_tuple(m, p);
      },
      "The registry's method and preconditioner names, in order.");
}
}  // namespace la
