// Reading a solve's options (registry.hpp's read_solve_options): each option given by its
// declared name and its value as text, checked as declared, for every front end alike. The
// CLI gives them from its flags (tools/solve_options.hpp), Python from its keywords
// (python/src/module.cpp); each renders the refusals' {name} markers in its own spelling.
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <system_error>

#include <la/error.hpp>
#include <la/solvers/registry.hpp>

namespace la {

namespace {
std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}
}  // namespace

double read_real(const std::string& v, double lo, double hi, const std::string& what) {
  const std::string range = "a finite number in [" + num(lo) + ", " + num(hi) + "]";
  double x = 0;
  const char* b = v.data() + (v.size() > 1 && v[0] == '+' && v[1] != '-' ? 1 : 0);
  const auto [p, ec] = std::from_chars(b, v.data() + v.size(), x);
  if (v.empty() || p != v.data() + v.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
    throw invalid_argument(what + " needs " + range + ", got '" + printable(v) + "'");
  if (std::isnan(x)) throw invalid_argument(what + " is not a number (" + printable(v) + "); it needs " + range);
  if (ec == std::errc::result_out_of_range && std::fabs(std::strtod(v.c_str(), nullptr)) < 1)
    throw invalid_argument(what + " = " + printable(v) +
                           " underflows: it is nonzero but smaller than the smallest double "
                           "(about 4.9e-324); use 0 or a larger value");
  if (std::isinf(x) || ec == std::errc::result_out_of_range)
    throw invalid_argument(what + " = " + printable(v) + " is not finite; it needs " + range);
  if (x < lo || x > hi) throw invalid_argument(what + " = " + printable(v) + " is out of range; it needs " + range);
  return x;
}

long long read_integer(const std::string& v, long long lo, long long hi, const std::string& what) {
  long long x = 0;
  const char* b = v.data() + (v.size() > 1 && v[0] == '+' && v[1] != '-' ? 1 : 0);
  const auto [p, ec] = std::from_chars(b, v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || p != v.data() + v.size() || x < lo || x > hi)
    throw invalid_argument(what + " needs an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" +
                           printable(v) + "'");
  return x;
}

namespace {
const given_option* find_given(const std::vector<given_option>& given, std::string_view name) {
  const given_option* last = nullptr;  // the last one given wins, as on a command line
  for (const given_option& g : given)
    if (g.name == name) last = &g;
  return last;
}

/// A choice option's value: one of its choices, or for a choice "X:K", any value starting with
/// X (the setter checks K).
std::string read_choice(const option_spec& s, const std::string& v) {
  const std::vector<std::string> list = choices_of(s);
  for (const std::string& c : list) {
    const std::size_t colon = c.find(':');
    if (colon != std::string::npos && v.rfind(c.substr(0, colon), 0) == 0) return v;
  }
  for (const std::string& c : list)
    if (v == c) return v;
  std::string all;
  for (const std::string& c : list) all += (all.empty() ? "" : "|") + c;
  throw invalid_argument("option {" + std::string(s.name) + "} must be one of " + all + ", got '" + printable(v) + "'");
}
}  // namespace

cg_options read_solve_options(const std::vector<given_option>& given) {
  for (const given_option& g : given)
    if (!find_option(g.name)) throw invalid_argument("a solve has no option named '" + printable(g.name) + "'");
  auto text_of = [&](const option_spec& s) {
    const given_option* g = find_given(given, s.name);
    return g ? g->value : std::string(s.fallback);
  };
  const std::string method = read_choice(*find_option("method"), text_of(*find_option("method")));
  const std::string precond = read_choice(*find_option("precond"), text_of(*find_option("precond")));
  for (const option_spec& s : solve_options())
    if (find_given(given, s.name) && !applies(s, method, precond))
      throw invalid_argument("{" + std::string(s.name) + "} applies to " + std::string(s.scope.shown));
  cg_options opt;
  for (const option_spec& s : solve_options()) {
    const given_option* g = find_given(given, s.name);
    const std::string what = "option {" + std::string(s.name) + "}";
    option_value v;
    switch (s.type) {
      case option_type::real:
        v.number = g ? read_real(g->value, s.lo, s.hi, what) : std::strtod(std::string(s.fallback).c_str(), nullptr);
        break;
      case option_type::integer: {
        const long long lo = static_cast<long long>(s.lo), hi = s.hi >= 9.2e18 ? LLONG_MAX : static_cast<long long>(s.hi);
        v.number = static_cast<double>(g ? read_integer(g->value, lo, hi, what)
                                         : std::strtoll(std::string(s.fallback).c_str(), nullptr, 10));
        break;
      }
      case option_type::choice: v.text = read_choice(s, text_of(s)); break;
      case option_type::flag: v.number = g ? 1 : 0; break;
    }
    if (g && !s.rule.other.empty()) {
      const option_spec& other = *find_option(s.rule.other);
      if ((text_of(other) == s.rule.value) != s.rule.required) throw invalid_argument(std::string(s.rule.message));
    }
    try {
      s.set(opt, v);
    } catch (const invalid_argument& e) {
      throw invalid_argument(std::string("option ") + e.what());
    }
  }
  return opt;
}

}  // namespace la
