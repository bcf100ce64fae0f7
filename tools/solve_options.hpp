// la solve's options from the registry (la/solvers/registry.hpp): the parser, the --help
// section and the Markdown table of docs/options.md, each produced from the declarations; the
// CLI's spelling of a declared name is "--" before it.
#pragma once

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <la/solvers/registry.hpp>
#include "args.hpp"

namespace la::cli {

inline std::string flag_of(std::string_view name) { return "--" + std::string(name); }
/// A registry text or library message in the CLI's words ("{precond}" -> "--precond").
inline std::string cli_words(std::string_view text) { return render_names(text, flag_of); }
/// A solve's report in the CLI's words: its message, its choice of method and M^-1's detail.
inline void in_cli_words(solve_result& r) {
  r.message = cli_words(r.message);
  r.solver_choice = cli_words(r.solver_choice);
  r.precond.detail = cli_words(r.precond.detail);
}

/// The options of a solve from the command line: each flag the registry declares, read and
/// checked by la::read_solve_options; its refusals in the CLI's words. `skip`: an option the
/// caller reads itself (complex systems' --method, whose cocg the registry does not know).
inline cg_options cg_args(const args& a, std::string_view skip = {}) {
  std::vector<given_option> given;
  for (const option_spec& s : solve_options())
    if (s.name != skip && a.has(flag_of(s.name))) given.push_back({std::string(s.name), a.get(flag_of(s.name), "")});
  try {
    return read_solve_options(given);
  } catch (const invalid_argument& e) {
    throw usage_error(cli_words(e.what()));
  }
}

/// The registry's part of `la solve --help`: each option with its help, the methods and
/// preconditioners listed where a help says {entries}.
inline std::string solve_options_help() {
  auto pad = [](std::string s, std::size_t w) { return s.size() < w ? s + std::string(w - s.size(), ' ') : s + " "; };
  auto indent = [](std::string_view text, const std::string& first, const std::string& rest) {
    std::string out, lead = first;
    while (!text.empty()) {
      const std::size_t nl = text.find('\n');
      out += lead + std::string(text.substr(0, nl)) + "\n";
      lead = rest;
      if (nl == std::string_view::npos) break;
      text.remove_prefix(nl + 1);
    }
    return out;
  };
  std::string out;
  for (const option_spec& s : solve_options()) {
    const std::string head = "  " + pad(flag_of(s.name) + (s.metavar.empty() ? "" : " " + std::string(s.metavar)), 22);
    std::string help = cli_words(s.help);
    const std::size_t at = help.find("{entries}");
    if (at == std::string::npos) {
      out += indent(help, head, std::string(24, ' '));
      continue;
    }
    std::string entries;
    if (s.name == "method")
      for (const method_entry& e : methods())
        entries += indent(cli_words(e.help), std::string(26, ' ') + pad(std::string(e.name), 10), std::string(36, ' '));
    else
      for (const preconditioner_entry& e : preconditioners())
        entries += indent(cli_words(e.help), std::string(26, ' ') + pad(std::string(e.name), 14), std::string(40, ' '));
    std::string before = help.substr(0, at), after = help.substr(at + 9);
    if (!before.empty() && before.back() == '\n') before.pop_back();
    if (!after.empty() && after.front() == '\n') after.erase(0, 1);
    out += indent(before, head, std::string(24, ' ')) + entries;
    if (!after.empty()) out += indent(after, std::string(24, ' '), std::string(24, ' '));
  }
  return out;
}

/// The default as a table shows it: "auto" for a number outside the range (the solver's own
/// rule, which the help states), "off" for a flag.
inline std::string shown_default(const option_spec& s) {
  if (s.type == option_type::flag) return "off";
  if (s.type == option_type::real || s.type == option_type::integer) {
    const double v = std::strtod(std::string(s.fallback).c_str(), nullptr);
    if (v < s.lo || v > s.hi) return "auto";
  }
  return "`" + std::string(s.fallback) + "`";
}

/// docs/options.md's table: every option with its default, values, where it applies and help.
inline std::string options_markdown() {
  auto one_line = [](std::string s) {
    for (char& c : s)
      if (c == '\n') c = ' ';
    std::string out;
    for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  };
  auto code = [](std::string_view text) {  // {name} -> `--name`
    return render_names(text, [](std::string_view n) { return "`--" + std::string(n) + "`"; });
  };
  std::string out =
      "| CLI | Python | default | values | applies to | what it does |\n"
      "|---|---|---|---|---|---|\n";
  for (const option_spec& s : solve_options()) {
    std::string values;
    switch (s.type) {
      case option_type::flag: values = "flag"; break;
      case option_type::choice:
        for (const std::string& c : choices_of(s)) values += (values.empty() ? "" : "\\|") + c;
        break;
      case option_type::integer:
      case option_type::real: {
        char buf[64];
        std::snprintf(buf, sizeof buf, s.hi >= 1e300 || s.hi >= 9.2e18 ? "%s from %g" : "%s in [%g, %g]",
                      s.type == option_type::integer ? "integer" : "number", s.lo, s.hi);
        values = buf;
        break;
      }
    }
    std::string help = code(s.help);
    const std::size_t at = help.find("{entries}");
    if (at != std::string::npos) help = help.substr(0, at) + "(see the list below)" + help.substr(at + 9);
    out += "| `--" + std::string(s.name) + "` | `" + python_name(s) + "` | " +
           shown_default(s) + " | " + values + " | " +
           (s.scope.shown.empty() ? "every solve" : one_line(code(s.scope.shown))) + " | " + one_line(help) + " |\n";
  }
  out += "\n| method | SPD only | several GPUs | flexible (M may change) | what it is |\n|---|---|---|---|---|\n";
  for (const method_entry& e : methods())
    out += "| `" + std::string(e.name) + "` | " + (e.symmetric_only ? "yes" : "no") + " | " + (e.several_gpus ? "yes" : "no") +
           " | " + (e.flexible ? "yes" : "no") + " | " + one_line(code(e.help)) + " |\n";
  out += "\n| preconditioner | SPD only | bicgstab, gmres | several GPUs | symmetric M | values-only re-setup | what it is |\n"
         "|---|---|---|---|---|---|---|\n";
  for (const preconditioner_entry& e : preconditioners())
    out += "| `" + std::string(e.name) + "` | " + (e.symmetric_only ? "yes" : "no") + " | " +
           (e.nonsymmetric_methods ? "yes" : "no") + " | " + (e.several_gpus ? "yes" : "no") + " | " +
           (e.symmetric_operator ? "yes" : "no") + " | " + (e.values_only_resetup ? "yes" : "no") + " | " +
           one_line(code(e.help)) + " |\n";
  return out;
}

/// la solve's option names: the CLI's own and the registry's.
inline std::set<std::string> solve_option_names(bool flags) {
  std::set<std::string> out = flags ? std::set<std::string>{"--quiet", "--write-unconverged", "--mpi"}
                                    : std::set<std::string>{"--rhs",  "-o",        "--output",  "--device", "--format", "--precision",
                                                            "--threads", "--offsets", "--path", "--history", "--gpus",
                                                            "--near-null-space", "--coordinates"};
  for (const option_spec& s : solve_options())
    if ((s.type == option_type::flag) == flags) out.insert(flag_of(s.name));
  return out;
}

}  // namespace la::cli
