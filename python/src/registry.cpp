// The registry's declarations for Python (la/solvers/registry.hpp): la's keywords and choices
// come from them (python/la/__init__.py), and tests/test_registry.py checks the stubs against them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

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
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t open = text.find('{', i);
    if (open == std::string::npos) {
      out.append(text, i, std::string::npos);
      break;
    }
    const std::size_t close = text.find('}', open);
    const std::string name = close == std::string::npos ? std::string() : text.substr(open + 1, close - open - 1);
    const option_spec* s = name.empty() ? nullptr : find_option(name);
    if (!s && name != "device") {  // not a marker: a brace of the text
      out.append(text, i, open + 1 - i);
      i = open + 1;
      continue;
    }
    out.append(text, i, open - i);
    const std::string kw = s ? python_name(*s) : name;
    i = close + 1;
    if (s && s->type == option_type::flag) {
      out += kw + "=True";
      continue;
    }
    std::size_t end = i + 1;
    while (end < text.size() && word_char(text[end])) ++end;
    const std::string value = i < text.size() && text[i] == ' ' && end > i + 1 ? text.substr(i + 1, end - i - 1) : "";
    const std::vector<std::string> values = s ? choices_of(*s) : std::vector<std::string>{"auto", "cpu", "gpu"};
    bool listed = false;
    for (const std::string& c : values) listed = listed || c == value;
    if (listed) {
      out += kw + "='" + value + "'";
      i = end;
    } else {
      out += kw;
    }
  }
  return out;
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
