// Minimal command-line parsing for the la tool: positional arguments plus --name value
// and --flag options, with an error for anything unknown.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <la/la/error.hpp>

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
          if (!valued.count(a)) throw usage_error("option " + a + " does not take a value");
          opts_[a] = value;
        } else if (valued.count(a)) {
          if (i + 1 >= argc) throw usage_error("option " + a + " needs a value");
          opts_[a] = argv[++i];
        } else if (flags.count(a)) {
          opts_[a] = "1";
        } else {
          throw usage_error("unknown option " + a);
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
  double get_double(const std::string& k, double def) const {
    return get_number<double>(k, def, "a number", [](const std::string& v, std::size_t* n) { return std::stod(v, n); });
  }
  long get_int(const std::string& k, long def) const {
    return get_number<long>(k, def, "an integer", [](const std::string& v, std::size_t* n) { return std::stol(v, n); });
  }
  /// Value restricted to `choices`.
  std::string get_choice(const std::string& k, const std::string& def, const std::vector<std::string>& choices) const {
    std::string v = get(k, def);
    for (const auto& c : choices)
      if (v == c) return v;
    std::string list;
    for (const auto& c : choices) list += (list.empty() ? "" : "|") + c;
    throw usage_error("option " + k + " must be one of " + list + ", got '" + v + "'");
  }

 private:
  template <typename N, typename Parse>
  N get_number(const std::string& k, N def, const char* what, Parse parse) const {
    if (!has(k)) return def;
    const std::string v = get(k, "");
    try {
      std::size_t used = 0;
      const N x = parse(v, &used);
      if (used == v.size()) return x;
    } catch (...) {
    }
    throw usage_error("option " + k + " needs " + what + ", got '" + v + "'");
  }

  bool help_ = false;
  std::vector<std::string> pos_;
  std::map<std::string, std::string> opts_;
};

}  // namespace la::cli
