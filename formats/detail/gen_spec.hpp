// Generated matrices named on a command line (the la CLI and the benchmarks):
// gen:poisson2d:N, gen:poisson3d:N, gen:convdiff2d:N[:PECLET], gen:convdiff3d:N[:PECLET], gen:random:ROWS:K, gen:rmat:SCALE:EDGES_PER_VERTEX, gen:denserows:ROWS:K:COUNT:LEN,
// gen:elasticity2d:N and gen:elasticity3d:N (formats/elasticity.hpp: N nodes a side, the face
// x = 0 clamped; the matrix only, its coordinates left out),
// and the complex ones, gen:helmholtz2d:N[:PPW[:SHIFT]] and gen:helmholtz3d:N[:PPW[:SHIFT]]
// (formats/generate.hpp: PPW grid points a wavelength, default 10; the complex shift in
// percent, default 50), which only the commands that take complex matrices build.
// Every number is a range-checked integer (digits only, no sign, no wrap-around), and the
// rows, nonzeros and offsets a spec implies are checked before anything is allocated, so a
// size that cannot be built is refused in the spec's own terms.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <vector>

#include <la/formats/elasticity.hpp>
#include <la/formats/generate.hpp>
#include <la/types.hpp>

namespace la::cli {

/// A parsed spec: its kind, its numbers, the rows it has and the nonzeros it can have.
struct gen_spec {
  std::string text;                // as given, without "gen:"
  std::string kind;                // poisson2d, poisson3d, random, rmat, denserows
  std::vector<std::int64_t> n;     // the numbers after the kind
  std::int64_t rows = 0;
  std::int64_t max_nnz = 0;        // exact for the Poisson matrices, an upper bound otherwise
};

/// "poisson2d:N, poisson3d:N, ..." for messages.
inline std::string gen_forms(const std::vector<std::string>& kinds) {
  std::string s;
  for (const auto& k : kinds) {
    const char* form = k == "poisson2d" ? "poisson2d:N"
                       : k == "poisson3d" ? "poisson3d:N"
                       : k == "convdiff2d" ? "convdiff2d:N[:PECLET]"
                       : k == "convdiff3d" ? "convdiff3d:N[:PECLET]"
                       : k == "elasticity2d" ? "elasticity2d:N"
                       : k == "elasticity3d" ? "elasticity3d:N"
                       : k == "helmholtz2d" ? "helmholtz2d:N[:PPW[:SHIFT]]"
                       : k == "helmholtz3d" ? "helmholtz3d:N[:PPW[:SHIFT]]"
                       : k == "random"    ? "random:ROWS:K"
                       : k == "rmat"      ? "rmat:SCALE:EDGES_PER_VERTEX"
                                          : "denserows:ROWS:K:COUNT:LEN";
    s += (s.empty() ? "gen:" : ", gen:") + std::string(form);
  }
  return s;
}

inline const std::vector<std::string>& all_gen_kinds() {
  static const std::vector<std::string> k{"poisson2d", "poisson3d", "convdiff2d", "convdiff3d", "random", "rmat",
                                          "denserows", "elasticity2d", "elasticity3d", "helmholtz2d", "helmholtz3d"};
  return k;
}

/// True for the kinds with complex values (the Helmholtz operators).
inline bool complex_gen_kind(const std::string& kind) { return kind == "helmholtz2d" || kind == "helmholtz3d"; }

/// Parses `spec` (without "gen:"); `kinds` are the kinds the command takes. Throws
/// la::invalid_argument with a message that names the spec, the number and its range.
inline gen_spec parse_gen(const std::string& spec, const std::vector<std::string>& kinds = all_gen_kinds()) {
  gen_spec g;
  g.text = spec;
  std::vector<std::string> parts;
  for (std::size_t b = 0;;) {
    const std::size_t e = spec.find(':', b);
    parts.push_back(spec.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  g.kind = parts[0];
  bool known = false;
  for (const auto& k : kinds) known = known || k == g.kind;
  if (!known)
    throw invalid_argument("unknown generated matrix 'gen:" + printable(spec) + "'; this command takes " +
                           gen_forms(kinds));
  const std::string form = gen_forms({g.kind});
  const bool convdiff = g.kind == "convdiff2d" || g.kind == "convdiff3d";
  const bool helmholtz = complex_gen_kind(g.kind);
  constexpr std::int64_t peclet_max = 1000000000;   // one limit for every message that names it
  const bool elastic = g.kind == "elasticity2d" || g.kind == "elasticity3d";
  std::size_t count = g.kind == "poisson2d" || g.kind == "poisson3d" || elastic ? 1 : g.kind == "denserows" ? 4 : helmholtz ? 3 : 2;
  if (convdiff && parts.size() == 2) parts.push_back("100");  // the default Peclet number
  if (helmholtz && parts.size() == 2) parts.push_back("10");  // points a wavelength
  if (helmholtz && parts.size() == 3) parts.push_back("50");  // the shift, in percent
  if (parts.size() != count + 1)
    throw invalid_argument("generated matrix 'gen:" + printable(spec) + "': expected " + form);
  const std::vector<std::string> names = g.kind == "random"      ? std::vector<std::string>{"ROWS", "K"}
                                         : g.kind == "rmat"      ? std::vector<std::string>{"SCALE", "EDGES_PER_VERTEX"}
                                         : g.kind == "denserows" ? std::vector<std::string>{"ROWS", "K", "COUNT", "LEN"}
                                         : convdiff              ? std::vector<std::string>{"N", "PECLET"}
                                         : helmholtz             ? std::vector<std::string>{"N", "PPW", "SHIFT"}
                                                                 : std::vector<std::string>{"N"};
  auto fail = [&](std::size_t i, const std::string& why) -> void {
    throw invalid_argument("generated matrix 'gen:" + printable(spec) + "': " + names[i] + " = " + printable(parts[i + 1]) +
                           " " + why);
  };
  for (std::size_t i = 0; i < count; ++i) {
    const std::string& s = parts[i + 1];
    std::uint64_t v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || s[0] == '-' || s[0] == '+' || p != s.data() + s.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
      fail(i, "is not a non-negative integer (" + form + ")");
    if (convdiff && i == 1 && (ec == std::errc::result_out_of_range || v > std::uint64_t(peclet_max)))
      fail(i, "is out of range: it must be in [0, " + std::to_string(peclet_max) + "] (the Peclet number, an integer)");
    if (ec == std::errc::result_out_of_range || v > std::uint64_t(max_index))
      fail(i, "is out of range: it must be at most " + std::to_string(max_index));
    g.n.push_back(static_cast<std::int64_t>(v));
  }
  auto at_most = [&](std::size_t i, std::int64_t lo, std::int64_t hi, const std::string& why) {
    if (g.n[i] < lo || g.n[i] > hi)
      fail(i, "is out of range: it must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]" + why);
  };
  const std::string rows_why = " (la's row and column indices are 32-bit: at most " + std::to_string(max_index) + " rows)";
  if (g.kind == "poisson2d") {
    at_most(0, 1, poisson_2d_max_n, ", since N^2 rows" + rows_why);
    const std::int64_t n = g.n[0];
    g.rows = n * n;
    g.max_nnz = 5 * n * n - 4 * n;
  } else if (g.kind == "poisson3d") {
    at_most(0, 1, poisson_3d_max_n, ", since N^3 rows" + rows_why);
    const std::int64_t n = g.n[0];
    g.rows = n * n * n;
    g.max_nnz = 7 * n * n * n - 6 * n * n;
  } else if (elastic) {
    const bool two = g.kind == "elasticity2d";
    at_most(0, 2, two ? 4096 : 256, " (nodes a side)");
    const std::int64_t n = g.n[0], d = two ? 2 : 3;
    g.rows = (two ? n * n - n : n * n * n - n * n) * d;
    g.max_nnz = g.rows * (two ? 9 : 27) * d;
  } else if (convdiff) {
    const bool two = g.kind == "convdiff2d";
    at_most(0, 1, two ? poisson_2d_max_n : poisson_3d_max_n, std::string(", since N^") + (two ? "2" : "3") + " rows" + rows_why);
    at_most(1, 0, peclet_max, " (the Peclet number, an integer)");
    const std::int64_t n = g.n[0];
    g.rows = two ? n * n : n * n * n;
    g.max_nnz = two ? 5 * n * n - 4 * n : 7 * n * n * n - 6 * n * n;
  } else if (helmholtz) {
    const bool two = g.kind == "helmholtz2d";
    at_most(0, 1, two ? poisson_2d_max_n : poisson_3d_max_n, std::string(", since N^") + (two ? "2" : "3") + " rows" + rows_why);
    at_most(1, 2, 1000000, " (grid points a wavelength: at least 2 resolve a wave)");
    at_most(2, 0, 100000, " (the complex shift, in percent)");
    const std::int64_t n = g.n[0];
    g.rows = two ? n * n : n * n * n;
    g.max_nnz = two ? 5 * n * n - 4 * n : 7 * n * n * n - 6 * n * n;
  } else if (g.kind == "random") {
    at_most(0, 1, max_index, rows_why);
    at_most(1, 0, g.n[0], " (at most ROWS distinct columns a row)");
    g.rows = g.n[0];
    g.max_nnz = g.n[0] * g.n[1];
  } else if (g.kind == "rmat") {
    at_most(0, 1, 30, " (2^SCALE vertices)");
    at_most(1, 1, std::int64_t(1) << 20, "");
    g.rows = std::int64_t(1) << g.n[0];
    g.max_nnz = g.rows * g.n[1];
  } else {
    at_most(0, 1, max_index, rows_why);
    at_most(1, 0, g.n[0], " (at most ROWS distinct columns a row)");
    at_most(2, 0, g.n[0], " (at most ROWS dense rows)");
    at_most(3, 0, g.n[0], " (at most ROWS columns a dense row)");
    g.rows = g.n[0];
    g.max_nnz = g.n[0] * g.n[1] + g.n[2] * g.n[3];
  }
  return g;
}

/// Builds the matrix with offsets of type O.
template <typename T, typename O>
csr_matrix<T, O> generate(const gen_spec& g) {
  const auto i = [&](std::size_t k) { return static_cast<index_t>(g.n[k]); };
  if (g.kind == "poisson2d") return poisson_2d<T, O>(i(0));
  if (g.kind == "poisson3d") return poisson_3d<T, O>(i(0));
  if (g.kind == "elasticity2d" || g.kind == "elasticity3d") return elasticity<T, O>(g.kind == "elasticity2d" ? 2 : 3, i(0)).a;
  if (g.kind == "convdiff2d") return convdiff<T, O>(2, i(0), static_cast<double>(g.n[1]));
  if (g.kind == "convdiff3d") return convdiff<T, O>(3, i(0), static_cast<double>(g.n[1]));
  if (complex_gen_kind(g.kind)) {
    if constexpr (is_complex_v<T>) {
      const int d = g.kind == "helmholtz2d" ? 2 : 3;
      return helmholtz<T, O>(d, i(0), helmholtz_kappa(i(0), static_cast<double>(g.n[1])), static_cast<double>(g.n[2]) / 100);
    } else {
      throw not_supported("gen:" + printable(g.text) +
                          " has complex values; this command takes real matrices so far (la info and la convert take it)");
    }
  }
  if (g.kind == "random") return random_rows<T, O>(i(0), i(0), i(1));
  if (g.kind == "rmat") return rmat<T, O>(static_cast<int>(g.n[0]), static_cast<int>(g.n[1]));
  return dense_rows<T, O>(i(0), i(1), i(2), i(3));
}

/// Calls f(matrix) with the offsets `width` asks for (auto: 64-bit only when the spec can
/// have more than 2^31 - 1 nonzeros); forcing 32-bit offsets on a spec that needs 64 is
/// refused before anything is built.
template <typename T, typename F>
decltype(auto) with_generated(const gen_spec& g, offset_width width, F&& f) {
  const bool needs_64 = needs_64bit_offsets(g.max_nnz);
  if (width == offset_width::b64 || (width == offset_width::automatic && needs_64))
    return f(generate<T, std::int64_t>(g));
  // max_nnz is exact for these; for the others the generator checks the count it builds.
  if (needs_64 && (g.kind == "poisson2d" || g.kind == "poisson3d" || g.kind == "convdiff2d" ||
                   g.kind == "convdiff3d" || g.kind == "random" || complex_gen_kind(g.kind)))
    throw offset_overflow("gen:" + printable(g.text) + " has " + std::to_string(g.max_nnz) +
                          " nonzeros, more than 32-bit offsets hold (at most " + std::to_string(max_index) + ")");
  return f(generate<T, std::int32_t>(g));
}

/// The matrix of a spec with 32-bit offsets (tests and benchmarks).
template <typename T>
csr_matrix<T> generated_matrix(const std::string& spec) {
  return generate<T, index_t>(parse_gen(spec));
}

}  // namespace la::cli
