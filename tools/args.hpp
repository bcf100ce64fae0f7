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
  /// out of range) and states the range.
  double get_double(const std::string& k, double def, double lo = -std::numeric_limits<double>::max(),
                    double hi = std::numeric_limits<double>::max()) const {
    if (!has(k)) return def;
    const std::string v = get(k, "");
    const std::string range = "a finite number in [" + num(lo) + ", " + num(hi) + "]";
    double x = 0;
    const char* b = v.data() + (v.size() > 1 && v[0] == '+' && v[1] != '-' ? 1 : 0);
    const auto [p, ec] = std::from_chars(b, v.data() + v.size(), x);
    if (v.empty() || p != v.data() + v.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
      throw usage_error("option " + k + " needs " + range + ", got '" + printable(v) + "'");
    if (std::isnan(x)) throw usage_error("option " + k + " is not a number (" + printable(v) + "); it needs " + range);
    if (ec == std::errc::result_out_of_range && std::fabs(std::strtod(v.c_str(), nullptr)) < 1)
      throw usage_error("option " + k + " = " + printable(v) + " underflows: it is nonzero but smaller than the smallest double "
                        "(about 4.9e-324); use 0 or a larger value");
    if (std::isinf(x) || ec == std::errc::result_out_of_range)
      throw usage_error("option " + k + " = " + printable(v) + " is not finite; it needs " + range);
    if (x < lo || x > hi) throw usage_error("option " + k + " = " + printable(v) + " is out of range; it needs " + range);
    return x;
  }
  /// An integer in [lo, hi], checked before any narrowing.
  long long get_int(const std::string& k, long long def, long long lo, long long hi) const {
    if (!has(k)) return def;
    const std::string v = get(k, "");
    long long x = 0;
    const char* b = v.data() + (v.size() > 1 && v[0] == '+' && v[1] != '-' ? 1 : 0);
    const auto [p, ec] = std::from_chars(b, v.data() + v.size(), x);
    if (v.empty() || ec != std::errc() || p != v.data() + v.size() || x < lo || x > hi)
      throw usage_error("option " + k + " needs an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                        "], got '" + printable(v) + "'");
    return x;
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
  static std::string num(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    return buf;
  }

  bool help_ = false;
  std::vector<std::string> pos_;
  std::map<std::string, std::string> opts_;
};

}  // namespace la::cli
