// Minimal command-line parsing for the la tool: positional arguments plus --name value
// and --flag options, with an error for anything unknown.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <la/error.hpp>
#include <la/solvers/registry.hpp>

namespace la::cli {

/// Thrown for bad usage; main prints the message and the subcommand's usage, exit 2.
class usage_error : public error {
 public:
  using error::error;
};

class args {
 public:
  /// `valued`: options that take a value; `flags`: options that do not.
  args(int argc, char** argv, int first, std::set<std::string> valued, std::set<std::string> flags) {
    for (int i = first; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "-h" || a == "--help") {
        help_ = true;
      } else if (a.size() > 1 && a[0] == '-' && !(a.size() > 1 && (std::isdigit(static_cast<unsigned char>(a[1])) || a[1] == '.'))) {
        std::string value;
        if (auto eq = a.find('='); eq != std::string::npos) {
          value = a.substr(eq + 1);
          a = a.substr(0, eq);
          if (!valued.count(a)) throw usage_error("option " + printable(a) + " does not take a value");
          opts_[a] = value;
        } else if (valued.count(a)) {
          if (i + 1 >= argc) throw usage_error("option " + a + " needs a value");
          opts_[a] = argv[++i];
        } else if (flags.count(a)) {
          opts_[a] = "1";
        } else {
          throw usage_error("unknown option " + printable(a));
        }
      } else {
        pos_.push_back(a);
      }
    }
  }
  bool help() const { return help_; }
  const std::vector<std::string>& positional() const { return pos_; }
  bool has(const std::string& k) const { return opts_.count(k) > 0; }
  std::string get(const std::string& k, const std::string& def) const {
    auto it = opts_.find(k);
    return it == opts_.end() ? def : it->second;
  }
  /// A finite number in [lo, hi]; the message names what is wrong (not a number, infinite,
  /// out of range) and states the range (la::read_real's words, as the solve options').
  double get_double(const std::string& k, double def, double lo = -std::numeric_limits<double>::max(),
                    double hi = std::numeric_limits<double>::max()) const {
    if (!has(k)) return def;
    try {
      return read_real(get(k, ""), lo, hi, "option " + k);
    } catch (const invalid_argument& e) {
      throw usage_error(e.what());
    }
  }
  /// An integer in [lo, hi], checked before any narrowing.
  long long get_int(const std::string& k, long long def, long long lo, long long hi) const {
    if (!has(k)) return def;
    try {
      return read_integer(get(k, ""), lo, hi, "option " + k);
    } catch (const invalid_argument& e) {
      throw usage_error(e.what());
    }
  }
  /// Value restricted to `choices`.
  std::string get_choice(const std::string& k, const std::string& def, const std::vector<std::string>& choices) const {
    std::string v = get(k, def);
    for (const auto& c : choices)
      if (v == c) return v;
    std::string list;
    for (const auto& c : choices) list += (list.empty() ? "" : "|") + c;
    throw usage_error("option " + k + " must be one of " + list + ", got '" + printable(v) + "'");
  }

 private:
  bool help_ = false;
  std::vector<std::string> pos_;
  std::map<std::string, std::string> opts_;
};

}  // namespace la::cli
