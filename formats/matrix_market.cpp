#include <la/formats/matrix_market.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <csignal>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <la/atomic_file.hpp>
#include <la/parallel.hpp>
#include <la/formats/convert.hpp>
#include <la/detail/instantiate.hpp>

namespace la {

const char* to_string(format f) noexcept {
  switch (f) {
    case format::dense: return "dense";
    case format::coo: return "coo";
    case format::csr: return "csr";
    case format::csc: return "csc";
    case format::ell: return "ell";
    case format::jds: return "jds";
    case format::hyb: return "hyb";
    case format::sell: return "sell";
  }
  return "unknown";
}

const char* to_string(mm_format f) noexcept { return f == mm_format::coordinate ? "coordinate" : "array"; }
const char* to_string(mm_field f) noexcept {
  switch (f) {
    case mm_field::real: return "real";
    case mm_field::integer: return "integer";
    case mm_field::pattern: return "pattern";
    case mm_field::complex: return "complex";
  }
  return "unknown";
}
const char* to_string(mm_symmetry s) noexcept {
  switch (s) {
    case mm_symmetry::general: return "general";
    case mm_symmetry::symmetric: return "symmetric";
    case mm_symmetry::skew_symmetric: return "skew-symmetric";
    case mm_symmetry::hermitian: return "hermitian";
  }
  return "unknown";
}

namespace {

// ---- line source: large buffered reads, no iostreams ------------------------------------

struct file_closer {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
using file_ptr = std::unique_ptr<std::FILE, file_closer>;

file_ptr open_file(const std::string& path, const char* mode) {
  file_ptr f(std::fopen(path.c_str(), mode));
  if (!f)
    throw io_error("cannot open '" + printable(path) + "' for " + (mode[0] == 'r' ? "reading" : "writing") +
                   ": " + std::strerror(errno));
  return f;
}

class line_reader {
 public:
  line_reader(std::FILE* f, std::string name) : file_(f), name_(std::move(name)), buf_(chunk) {}
  line_reader(std::string_view text, std::string name)
      : name_(std::move(name)), mem_(text.data()), pos_(0), end_(text.size()) {}

  /// Next line without its terminator (and without a trailing '\r'); false at end of input.
  bool next(std::string_view& line) {
    for (;;) {
      const char* base = data();
      const void* nl = std::memchr(base + pos_, '\n', end_ - pos_);
      if (nl) {
        const std::size_t n = static_cast<const char*>(nl) - (base + pos_);
        emit(line, base + pos_, n);
        pos_ += n + 1;
        return true;
      }
      if (!file_ || eof_) {
        if (pos_ == end_) return false;
        emit(line, base + pos_, end_ - pos_);  // last line without a newline
        pos_ = end_;
        return true;
      }
      refill();
    }
  }
  std::int64_t line_no() const noexcept { return line_no_; }
  /// In-memory input: the offset of the next unread byte.
  std::size_t offset() const noexcept { return pos_; }
  const std::string& name() const noexcept { return name_; }
  [[noreturn]] void fail(const std::string& what) const { throw parse_error(name_, line_no_, what); }

  static constexpr std::size_t chunk = std::size_t(4) << 20;  // 4 MiB reads

 private:

  const char* data() const noexcept { return file_ ? buf_.data() : mem_; }
  void emit(std::string_view& line, const char* p, std::size_t n) {
    if (n && p[n - 1] == '\r') --n;
    line = std::string_view(p, n);
    ++line_no_;
  }
  void refill() {
    const std::size_t rest = end_ - pos_;
    if (pos_ > 0) std::memmove(buf_.data(), buf_.data() + pos_, rest);
    pos_ = 0;
    end_ = rest;
    if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);  // a line longer than the buffer
    const std::size_t got = std::fread(buf_.data() + end_, 1, buf_.size() - end_, file_);
    if (got == 0) {
      if (std::ferror(file_)) throw io_error("error reading '" + printable(name_) + "': " + std::strerror(errno));
      eof_ = true;
    }
    end_ += got;
  }

  std::FILE* file_ = nullptr;
  std::string name_;
  std::vector<char> buf_;
  const char* mem_ = nullptr;
  std::size_t pos_ = 0, end_ = 0;
  bool eof_ = false;
  std::int64_t line_no_ = 0;
};

// ---- tokens ------------------------------------------------------------------------------

inline bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
inline const char* skip_space(const char* p, const char* e) noexcept {
  while (p < e && is_space(*p)) ++p;
  return p;
}
inline bool is_blank(std::string_view s) noexcept { return skip_space(s.data(), s.data() + s.size()) == s.data() + s.size(); }
inline bool is_comment(std::string_view s) noexcept {
  const char* p = skip_space(s.data(), s.data() + s.size());
  return p < s.data() + s.size() && *p == '%';
}

/// A token or line for a message: at most 60 characters, anything unprintable (NUL, control
/// bytes, non-ASCII) as \xNN, and the full length when it was cut.
std::string quote(std::string_view s) {
  constexpr std::size_t max = 60;
  std::string r = "'";
  for (std::size_t i = 0; i < s.size() && i < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      r += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      r += buf;
    }
  }
  if (s.size() > max) r += "...' (" + std::to_string(s.size()) + " characters)";
  else r += "'";
  return r;
}
std::string token_at(const char* p, const char* e) {
  const char* q = p;
  while (q < e && !is_space(*q)) ++q;
  return quote(std::string_view(p, q - p));
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  const char* p = s.data();
  const char* e = p + s.size();
  for (;;) {
    p = skip_space(p, e);
    if (p == e) return out;
    const char* q = p;
    while (q < e && !is_space(*q)) ++q;
    out.emplace_back(p, q - p);
    p = q;
  }
}

/// Unsigned decimal; returns nullptr when no digit is there. Saturates far above any valid
/// size so overflow is reported as "too large" rather than wrapping. Numbers of up to 7
/// digits with 8 readable bytes (nearly every index) take the SWAR path: 8 bytes at once,
/// ~20 instructions instead of ~10 per digit (callgrind: 142 -> 45 per index).
inline const char* parse_uint(const char* p, const char* e, std::int64_t& out) noexcept {
  if (e - p >= 8) {
    std::uint64_t x;
    std::memcpy(&x, p, 8);
    const std::uint64_t d = x - 0x3030303030303030ULL;  // byte values minus '0'
    // High bit of each byte that is not a digit (only bytes before the first one matter:
    // borrows and carries move upward, past it).
    const std::uint64_t non_digit = (d | (d + 0x7676767676767676ULL)) & 0x8080808080808080ULL;
    if (non_digit) {
      const int len = __builtin_ctzll(non_digit) >> 3;
      if (len == 0) return nullptr;
      std::uint64_t v = d << (64 - 8 * len);  // the digits, with leading zero digits
      v = (v * 10) + (v >> 8);                // pairs
      v = (((v & 0x000000FF000000FFULL) * 0x000F424000000064ULL) +
           (((v >> 16) & 0x000000FF000000FFULL) * 0x0000271000000001ULL)) >> 32;
      out = static_cast<std::int64_t>(v);
      return p + len;
    }
  }
  const char* start = p;
  std::int64_t v = 0;
  while (p < e && static_cast<unsigned>(*p - '0') < 10u) {
    if (v < (std::int64_t(1) << 58)) v = v * 10 + (*p - '0');
    ++p;
  }
  if (p == start) return nullptr;
  out = v;
  return p;
}

inline bool ends_token(const char* p, const char* e) noexcept { return p == e || is_space(*p); }

// ---- header ------------------------------------------------------------------------------

struct header_info {
  mm_header h;
  std::int64_t size_line = 0;
};

header_info parse_header(line_reader& in) {
  std::string_view line;
  const std::string expected =
      "a Matrix Market file starts with '%%MatrixMarket matrix coordinate|array "
      "real|integer|pattern|complex general|symmetric|skew-symmetric|hermitian'";
  if (!in.next(line)) throw parse_error(in.name(), 1, "empty file: " + expected);
  auto tok = split(line);
  if (lower(line.substr(0, 14)) != "%%matrixmarket")
    in.fail("no Matrix Market banner (found " + quote(line) + "): " + expected);
  if (tok.size() != 5 || lower(tok[0]) != "%%matrixmarket")
    in.fail("bad banner " + quote(line) + ": expected 5 words, " + expected);
  header_info info;
  mm_header& h = info.h;
  const std::string object = lower(tok[1]), format = lower(tok[2]), field = lower(tok[3]),
                    sym = lower(tok[4]);
  const std::string where = in.name() + ":1: ";
  if (object == "vector")
    throw not_supported(where + "object 'vector' is not supported: la reads matrices (write it as an n x 1 matrix)");
  if (object != "matrix") in.fail("unknown object " + quote(tok[1]) + " in the banner (expected 'matrix')");
  if (format == "coordinate") h.format = mm_format::coordinate;
  else if (format == "array") h.format = mm_format::array;
  else in.fail("unknown format " + quote(tok[2]) + " in the banner (expected 'coordinate' or 'array')");
  if (field == "real") h.field = mm_field::real;
  else if (field == "integer") h.field = mm_field::integer;
  else if (field == "pattern") h.field = mm_field::pattern;
  else if (field == "complex") h.field = mm_field::complex;
  else in.fail("unknown field " + quote(tok[3]) + " in the banner (expected real, integer, pattern or complex)");
  if (sym == "general") h.symmetry = mm_symmetry::general;
  else if (sym == "symmetric") h.symmetry = mm_symmetry::symmetric;
  else if (sym == "skew-symmetric") h.symmetry = mm_symmetry::skew_symmetric;
  else if (sym == "hermitian") h.symmetry = mm_symmetry::hermitian;
  else in.fail("unknown symmetry " + quote(tok[4]) + " in the banner (expected general, symmetric, skew-symmetric or hermitian)");
  if (h.symmetry == mm_symmetry::hermitian && h.field != mm_field::complex)
    in.fail(std::string("symmetry 'hermitian' needs field 'complex' (found '") + to_string(h.field) +
            "'; a real Hermitian matrix is 'symmetric')");
  if (h.field == mm_field::pattern && h.format == mm_format::array)
    in.fail("field 'pattern' is only valid with the 'coordinate' format");

  // Comments and blank lines until the size line.
  do {
    if (!in.next(line)) in.fail("file ends before the size line");
  } while (is_blank(line) || is_comment(line));
  info.size_line = in.line_no();
  const std::size_t want = h.format == mm_format::coordinate ? 3 : 2;
  const char* usage = h.format == mm_format::coordinate ? "'rows cols entries'" : "'rows cols'";
  std::int64_t v[3] = {0, 0, 0};
  const char* p = line.data();
  const char* e = p + line.size();
  for (std::size_t k = 0; k < want; ++k) {
    p = skip_space(p, e);
    const char* q = parse_uint(p, e, v[k]);
    if (!q || !ends_token(q, e))
      in.fail("bad size line " + quote(line) + ": expected " + usage + " as non-negative integers");
    p = q;
  }
  if (skip_space(p, e) != e)
    in.fail("bad size line " + quote(line) + ": expected " + usage + ", found extra text " + token_at(skip_space(p, e), e));
  h.rows = v[0];
  h.cols = v[1];
  if (h.rows > max_index || h.cols > max_index)
    in.fail("matrix dimensions " + std::to_string(h.rows) + " x " + std::to_string(h.cols) +
            " exceed la's 32-bit index limit (" + std::to_string(max_index) + ")");
  if (h.symmetry != mm_symmetry::general && h.rows != h.cols)
    in.fail(std::string(to_string(h.symmetry)) + " matrix must be square, size line says " +
            std::to_string(h.rows) + " x " + std::to_string(h.cols));
  if (h.format == mm_format::coordinate) {
    h.entries = v[2];
  } else {
    const std::int64_t n = h.rows;
    h.entries = h.symmetry == mm_symmetry::general                                              ? h.rows * h.cols
                : h.symmetry == mm_symmetry::symmetric || h.symmetry == mm_symmetry::hermitian ? n * (n + 1) / 2
                                                                                                : n * (n - 1) / 2;
  }
  return info;
}

// ---- values ------------------------------------------------------------------------------

/// A complex file read with a real value type is refused before its body (name: the file).
template <typename T>
void check_value_type(const mm_header& h, const std::string& name) {
  if constexpr (!is_complex_v<T>) {
    if (h.field == mm_field::complex)
      throw not_supported(name + ":1: field 'complex': the matrix has complex values and is being read as real " +
                          (sizeof(T) == 4 ? "(float)" : "(double)") +
                          "; read it with a complex value type (std::complex<double>)");
  }
}

template <typename T>
[[noreturn]] void overflow_error(std::string_view tok, const line_reader& in) {
  in.fail("value " + quote(tok) + " overflows " + (sizeof(T) == 4 ? "float" : "double") +
          (sizeof(T) == 4 ? "; read the matrix in double precision" : ""));
}

/// A real value: what std::from_chars takes (decimal, exponent, inf, nan), plus at most one
/// leading '+' (from_chars takes only '-'): one sign at most, for every spelling.
template <typename T>
const char* parse_real(const char* p, const char* e, T& out, const line_reader& in) {
  const char* start = p;
  if (p < e && *p == '+') {
    ++p;
    if (p < e && (*p == '+' || *p == '-')) in.fail("value " + token_at(start, e) + " has more than one sign");
  }
  auto [q, ec] = std::from_chars(p, e, out);
  if (ec == std::errc() && ends_token(q, e)) return q;
  if (ec == std::errc::result_out_of_range && ends_token(q, e)) {
    // Under- or overflow of T: underflow rounds to a signed zero, overflow is an error.
    const std::string tok(start, q);
    const long double v = std::strtold(tok.c_str(), nullptr);
    if (!(std::fabs(v) <= static_cast<long double>(std::numeric_limits<T>::max()))) overflow_error<T>(tok, in);
    out = static_cast<T>(v);
    return q;
  }
  in.fail("value " + token_at(start, e) + " is not a number");
}

/// An integer value, read as the nearest value of T (correctly rounded from all its digits:
/// 9223372036854775807 reads as 9223372036854775808.0 in double, never with digits dropped);
/// one sign at most; beyond T's range an error.
template <typename T>
const char* parse_integer(const char* p, const char* e, T& out, const line_reader& in) {
  const char* start = p;
  const bool neg = p < e && *p == '-';
  if (p < e && (*p == '-' || *p == '+')) ++p;
  const char* digits = p;
  while (p < e && static_cast<unsigned>(*p - '0') < 10u) ++p;
  if (p == digits || !ends_token(p, e))
    in.fail("value " + token_at(start, e) + " is not an integer (the banner says field 'integer')");
  T v = T(0);
  const auto [q, ec] = std::from_chars(digits, p, v);
  if (ec == std::errc::result_out_of_range) overflow_error<T>(std::string_view(start, p - start), in);
  (void)q;
  out = neg ? -v : v;
  return p;
}

template <typename T>
const char* parse_value(mm_field field, const char* p, const char* e, T& out, const line_reader& in) {
  p = skip_space(p, e);
  if (p == e)
    in.fail(std::string("missing value: field '") + to_string(field) + "' needs " +
            (field == mm_field::complex ? "a real and an imaginary part" : "one") + " on every entry line");
  if constexpr (is_complex_v<T>) {
    real_of_t<T> re = 0, im = 0;
    p = field == mm_field::integer ? parse_integer(p, e, re, in) : parse_real(p, e, re, in);
    if (field == mm_field::complex) {
      p = skip_space(p, e);
      if (p == e) in.fail("missing imaginary part: field 'complex' needs 'real imaginary' on every entry line");
      p = parse_real(p, e, im, in);
    }
    out = T(re, im);
    return p;
  } else {
    return field == mm_field::integer ? parse_integer(p, e, out, in) : parse_real(p, e, out, in);
  }
}

/// A Hermitian matrix's diagonal is real: an entry there with an imaginary part other than 0
/// is an error (its mirror would be its conjugate, a different value in the same place).
template <typename T>
inline void check_hermitian_diagonal(index_t i, const T& val, const line_reader& in) {
  if constexpr (is_complex_v<T>) {
    if (val.imag() != 0)
      in.fail("diagonal entry (" + std::to_string(i + 1) + ", " + std::to_string(i + 1) + ") of a hermitian matrix has imaginary part " +
              std::to_string(static_cast<double>(val.imag())) + "; a Hermitian matrix's diagonal is real");
  }
}

inline void check_end(const char* p, const char* e, const line_reader& in) {
  p = skip_space(p, e);
  if (p != e) in.fail("unexpected text " + token_at(p, e) + " after the entry");
}

template <typename T>
struct builder {
  std::vector<index_t> r, c;
  std::vector<T> v;
  void reserve(std::size_t n) {
    r.reserve(n);
    c.reserve(n);
    v.reserve(n);
  }
  void add(index_t i, index_t j, T x) {
    r.push_back(i);
    c.push_back(j);
    v.push_back(x);
  }
};

/// The error of an index token (cold: kept out of the parse loop).
[[noreturn, gnu::cold, gnu::noinline]] void index_error(const char* p, const char* e, const char* q, std::int64_t v,
                                                        std::int64_t n, const char* what, const line_reader& in) {
  if (!q || !ends_token(q, e)) {
    if (p == e) in.fail(std::string("missing ") + what + " index: an entry line is 'row column [value]'");
    in.fail(std::string("expected a ") + what + " index, found " + token_at(p, e));
  }
  if (v == 0) in.fail(std::string(what) + " index 0 is out of range: Matrix Market indices are 1-based");
  in.fail(std::string(what) + " index " + std::to_string(v) + " is beyond the matrix's " + std::to_string(n) + " " +
          what + (n == 1 ? "" : "s"));
}

inline index_t parse_index(const char*& p, const char* e, std::int64_t n, const char* what, const line_reader& in) {
  p = skip_space(p, e);
  std::int64_t v = 0;
  const char* q = parse_uint(p, e, v);
  if (__builtin_expect(!q || !ends_token(q, e) || v == 0 || v > n, 0)) index_error(p, e, q, v, n, what, in);
  p = q;
  return static_cast<index_t>(v - 1);
}

/// One coordinate entry line (not blank, not a comment): "row col [value]".
template <typename T>
inline void parse_coordinate_entry(const char* p, const char* e, const mm_header& h, const line_reader& in, index_t& i,
                                   index_t& j, T& val) {
  i = parse_index(p, e, h.rows, "row", in);
  j = parse_index(p, e, h.cols, "column", in);
  if (h.field != mm_field::pattern) p = parse_value(h.field, p, e, val, in);
  check_end(p, e, in);
  if ((h.symmetry == mm_symmetry::symmetric || h.symmetry == mm_symmetry::hermitian) && i < j)
    in.fail("entry (" + std::to_string(i + 1) + ", " + std::to_string(j + 1) + ") is in the upper triangle; a " +
            to_string(h.symmetry) + " file stores only the lower triangle (row >= column)");
  if (h.symmetry == mm_symmetry::hermitian && i == j) check_hermitian_diagonal(i, val, in);
  if (h.symmetry == mm_symmetry::skew_symmetric && i <= j)
    in.fail("entry (" + std::to_string(i + 1) + ", " + std::to_string(j + 1) +
            ") is not below the diagonal; a skew-symmetric file stores only the strictly lower triangle (row > column)");
}

template <typename T>
inline void add_entry(builder<T>& out, const mm_header& h, index_t i, index_t j, T val) {
  out.add(i, j, val);
  if (i != j && h.symmetry == mm_symmetry::symmetric) out.add(j, i, val);
  if (h.symmetry == mm_symmetry::skew_symmetric) out.add(j, i, -val);
  if constexpr (is_complex_v<T>) {
    if (i != j && h.symmetry == mm_symmetry::hermitian) out.add(j, i, std::conj(val));
  }
}

/// Array slots to reserve for at most `entries_bound` entry lines: never more than the header
/// declares, nor more than the text could hold (a lying header must not make us allocate
/// gigabytes; callers bound by an entry line's 4 bytes at least), times 2 for the mirrors
/// of symmetric files.
std::size_t entry_room(const mm_header& h, double entries_bound) {
  const double entries = std::min(static_cast<double>(h.entries), entries_bound);
  return static_cast<std::size_t>(entries) * (h.symmetry == mm_symmetry::general ? 1 : 2);
}

template <typename T>
coo_matrix<T> parse_body(line_reader& in, const header_info& info, std::uint64_t size_hint) {
  const mm_header& h = info.h;
  builder<T> out;
  // A stream of unknown size (a pipe) reserves one read buffer's worth and grows as it goes.
  out.reserve(entry_room(h, static_cast<double>(size_hint ? size_hint : line_reader::chunk) / 4 + 16));

  const bool coordinate = h.format == mm_format::coordinate;
  const index_t rows = static_cast<index_t>(h.rows), cols = static_cast<index_t>(h.cols);
  std::string_view line;
  std::int64_t k = 0;
  index_t ai = 0, aj = 0;  // array: next position (column-major, triangle for symmetric)
  if (h.symmetry == mm_symmetry::skew_symmetric) ai = 1;
  while (k < h.entries) {
    if (!in.next(line))
      in.fail("file ends after " + std::to_string(k) + " of the " + std::to_string(h.entries) +
              " entries declared on line " + std::to_string(info.size_line));
    const char* p = line.data();
    const char* e = p + line.size();
    p = skip_space(p, e);
    if (p == e || *p == '%') continue;  // blank or comment line
    index_t i, j;
    T val = T(1);
    if (coordinate) {
      parse_coordinate_entry(p, e, h, in, i, j, val);
    } else {
      p = parse_value(h.field, p, e, val, in);
      check_end(p, e, in);
      i = ai;
      j = aj;
      if (h.symmetry == mm_symmetry::hermitian && i == j) check_hermitian_diagonal(i, val, in);
      if (++ai == rows) {  // next column; triangles start at (j, j) or (j+1, j)
        ++aj;
        ai = h.symmetry == mm_symmetry::general                                                 ? 0
             : h.symmetry == mm_symmetry::symmetric || h.symmetry == mm_symmetry::hermitian ? aj
                                                                                             : aj + 1;
      }
    }
    add_entry(out, h, i, j, val);
    ++k;
  }
  while (in.next(line))
    if (!is_blank(line) && !is_comment(line))
      in.fail("more entries than the " + std::to_string(h.entries) + " declared on line " +
              std::to_string(info.size_line) + " (found " + quote(line) + ")");
  return coo_matrix<T>(detail::trusted, rows, cols, std::move(out.r), std::move(out.c),
                       std::move(out.v));  // indices checked while parsing
}

// ---- parallel body parse -----------------------------------------------------------------
// Coordinate bodies split into one chunk per thread at line boundaries; each thread parses
// its chunk with the same per-line code into its own arrays (the parts, in file order).
// Any error, and any entry count other than the declared one, falls back to the sequential
// parse of the same text, which reports exactly what one thread reports (same message,
// same line number): the parallel path never decides an error itself. The parts are then
// joined into one COO matrix, or turned into CSR directly (read_matrix_market_csr), which
// skips the join and its 800 MB of fresh pages for 50M entries.

template <typename T>
struct chunk_result {
  builder<T> out;
  std::int64_t entries = 0;
  bool ok = true;
};

/// The parts of a coordinate body, or an empty vector when the parallel parse must not decide.
template <typename T>
std::vector<chunk_result<T>> parse_parts(std::string_view text, std::size_t body, const header_info& info,
                                         const std::string& name, int threads, bool room_for_all_in_first) {
  const mm_header& h = info.h;
  const std::size_t n = text.size() - body;
  std::vector<std::size_t> cut(static_cast<std::size_t>(threads) + 1, text.size());
  cut[0] = body;
  for (int t = 1; t < threads; ++t) {
    std::size_t pos = std::max(cut[t - 1], body + n / threads * t);
    const void* nl = pos < text.size() ? std::memchr(text.data() + pos, '\n', text.size() - pos) : nullptr;
    cut[t] = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - text.data()) + 1 : text.size();
  }
  // Entries per byte from the declared count, to reserve close to what each chunk holds.
  // For a join, part 0 reserves room for the whole matrix: its arrays become the result and
  // the others are appended (reserved pages that are never touched cost nothing).
  const double per_byte = n ? static_cast<double>(h.entries) / static_cast<double>(n) : 0.0;
  std::vector<chunk_result<T>> parts(static_cast<std::size_t>(threads));
  auto work = [&](int t) {
    chunk_result<T>& part = parts[t];
    try {
      const std::size_t bytes = cut[t + 1] - cut[t];
      const double span = static_cast<double>(t == 0 && room_for_all_in_first ? n : bytes);
      part.out.reserve(entry_room(h, std::min(per_byte * span * 1.02, span / 4) + 16));
      line_reader in(text.substr(cut[t], bytes), name);
      std::string_view line;
      while (in.next(line)) {
        const char* p = skip_space(line.data(), line.data() + line.size());
        const char* e = line.data() + line.size();
        if (p == e || *p == '%') continue;
        if (++part.entries > h.entries) return void(part.ok = false);
        index_t i, j;
        T val = T(1);
        parse_coordinate_entry(p, e, h, in, i, j, val);
        add_entry(part.out, h, i, j, val);
      }
    } catch (...) {
      part.ok = false;  // the sequential parse reports it
    }
  };
  detail::parallel_for(threads, work);
  std::int64_t entries = 0;
  for (const auto& p : parts) {
    if (!p.ok) return {};
    entries += p.entries;
  }
  if (entries != h.entries) return {};
  return parts;
}

/// Joins the parts in file order into one COO matrix.
template <typename T>
coo_matrix<T> join_parts(std::vector<chunk_result<T>>& parts, const mm_header& h) {
  std::vector<std::size_t> offset(parts.size() + 1, 0);
  for (std::size_t t = 0; t < parts.size(); ++t) offset[t + 1] = offset[t] + parts[t].out.v.size();
  builder<T> all = std::move(parts[0].out);
  all.r.resize(offset.back());
  all.c.resize(offset.back());
  all.v.resize(offset.back());
  detail::parallel_for(static_cast<int>(parts.size()) - 1, [&](int t) {
    builder<T>& src = parts[t + 1].out;
    std::copy(src.r.begin(), src.r.end(), all.r.begin() + offset[t + 1]);
    std::copy(src.c.begin(), src.c.end(), all.c.begin() + offset[t + 1]);
    std::copy(src.v.begin(), src.v.end(), all.v.begin() + offset[t + 1]);
    src = builder<T>();
  });
  return coo_matrix<T>(detail::trusted, static_cast<index_t>(h.rows), static_cast<index_t>(h.cols),
                       std::move(all.r), std::move(all.c), std::move(all.v));  // indices checked while parsing
}

/// The threads a body of `bytes` gets (one below min_bytes_per_thread per thread).
int body_threads(std::size_t bytes, const mm_read_options& opt) {
  const std::size_t min_bytes = std::max<std::size_t>(opt.min_bytes_per_thread, 1);
  return static_cast<int>(
      std::min<std::size_t>(static_cast<std::size_t>(thread_count(opt.threads)), std::max<std::size_t>(1, bytes / min_bytes)));
}

/// Header, then the body: in parallel where it pays (the parts go to from_parts), else
/// sequentially (the COO matrix goes to from_coo).
template <typename T, typename FromParts, typename FromCoo>
auto parse_text_with(std::string_view text, const std::string& name, mm_header* header, const mm_read_options& opt,
                     bool room_for_all_in_first, FromParts&& from_parts, FromCoo&& from_coo) {
  line_reader in(text, name);
  header_info info = parse_header(in);
  if (header) *header = info.h;
  check_value_type<T>(info.h, name);
  const std::size_t body = in.offset();
  const int threads = body_threads(text.size() - body, opt);
  if (threads > 1 && info.h.format == mm_format::coordinate) {
    auto parts = parse_parts<T>(text, body, info, name, threads, room_for_all_in_first);
    if (!parts.empty()) return from_parts(parts, info.h);
  }
  return from_coo(parse_body<T>(in, info, text.size()));
}

template <typename T>
coo_matrix<T> parse_text(std::string_view text, const std::string& name, mm_header* header,
                         const mm_read_options& opt) {
  return parse_text_with<T>(
      text, name, header, opt, /*room_for_all_in_first=*/true,
      [](std::vector<chunk_result<T>>& parts, const mm_header& h) { return join_parts(parts, h); },
      [](coo_matrix<T>&& m) { return std::move(m); });
}

/// The same, straight to CSR: the parts are converted without being joined.
template <typename T, typename O>
csr_matrix<T, O> parse_text_csr(std::string_view text, const std::string& name, mm_header* header,
                                const mm_read_options& opt) {
  return parse_text_with<T>(
      text, name, header, opt, /*room_for_all_in_first=*/false,
      [](std::vector<chunk_result<T>>& parts, const mm_header& h) {
        std::vector<detail::coo_span<T>> spans;
        for (const auto& p : parts) spans.push_back({p.out.r.data(), p.out.c.data(), p.out.v.data(), p.out.v.size()});
        return detail::spans_to_csr<O, T>(static_cast<index_t>(h.rows), static_cast<index_t>(h.cols), spans);
      },
      [](coo_matrix<T>&& m) { return to_csr<O>(m); });
}

// A file that shrinks while it is mapped raises SIGBUS on the next read past its new end.
// While a mapping is live, a handler replaces the rest of that mapping with zero pages
// (the parser then sees NULs, not a crash) and marks it; the reader then reports the
// change as an io_error. Faults outside la's mappings go to the handler that was there
// before.
constexpr int max_mappings = 64;
struct mapping_slot {
  std::atomic<char*> begin{nullptr};
  std::atomic<std::size_t> size{0};
  std::atomic<bool> faulted{false};
};
mapping_slot mappings[max_mappings];
struct sigaction previous_sigbus {};

extern "C" void on_sigbus(int sig, siginfo_t* info, void* context) {
  char* const at = static_cast<char*>(info->si_addr);
  for (auto& m : mappings) {
    char* const b = m.begin.load();
    const std::size_t n = m.size.load();
    if (b && at >= b && at < b + n) {
      const std::uintptr_t page = reinterpret_cast<std::uintptr_t>(at) & ~std::uintptr_t(::sysconf(_SC_PAGESIZE) - 1);
      char* const from = reinterpret_cast<char*>(page);
      ::mmap(from, static_cast<std::size_t>(b + n - from), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
      m.faulted.store(true);
      return;
    }
  }
  if (previous_sigbus.sa_flags & SA_SIGINFO) {
    previous_sigbus.sa_sigaction(sig, info, context);
  } else if (previous_sigbus.sa_handler != SIG_DFL && previous_sigbus.sa_handler != SIG_IGN) {
    previous_sigbus.sa_handler(sig);
  } else {
    ::signal(SIGBUS, SIG_DFL);
    ::raise(SIGBUS);
  }
}

void install_sigbus_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    ::sigaction(SIGBUS, &sa, &previous_sigbus);
  });
}

/// A read-only mapping of a whole regular file (empty when the file cannot be mapped).
class mapped_file {
 public:
  explicit mapped_file(const std::string& path) : path_(path) {
    // stat first: opening a FIFO here and closing it again would break its writer (SIGPIPE).
    struct stat pre {};
    if (::stat(path.c_str(), &pre) != 0 || !S_ISREG(pre.st_mode)) return;
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return;
    if (::fstat(fd_, &st_) == 0 && S_ISREG(st_.st_mode) && st_.st_size > 0) {
      install_sigbus_handler();
      for (auto& m : mappings) {
        char* expected = nullptr;
        char* const claim = reinterpret_cast<char*>(&m);  // a placeholder until mapped
        if (m.begin.compare_exchange_strong(expected, claim)) {
          slot_ = &m;
          break;
        }
      }
      if (!slot_) return;  // too many mappings at once: read the file instead
      void* p = ::mmap(nullptr, static_cast<std::size_t>(st_.st_size), PROT_READ, MAP_PRIVATE, fd_, 0);
      if (p == MAP_FAILED) {
        slot_->begin.store(nullptr);
        slot_ = nullptr;
        return;
      }
      data_ = static_cast<const char*>(p);
      size_ = static_cast<std::size_t>(st_.st_size);
      slot_->faulted.store(false);
      slot_->size.store(size_);
      slot_->begin.store(const_cast<char*>(data_));
      ::madvise(p, size_, MADV_SEQUENTIAL);
    }
  }
  ~mapped_file() {
    if (slot_) slot_->begin.store(nullptr), slot_->size.store(0);
    if (data_) ::munmap(const_cast<char*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
  }
  mapped_file(const mapped_file&) = delete;
  mapped_file& operator=(const mapped_file&) = delete;
  bool ok() const noexcept { return data_ != nullptr; }
  std::string_view text() const noexcept { return {data_, size_}; }

  /// Throws la::io_error when the file shrank, grew or was rewritten while it was read.
  void check_unchanged() const {
    struct stat now {};
    const bool stat_ok = ::fstat(fd_, &now) == 0;
    const bool faulted = slot_ && slot_->faulted.load();
    if (!faulted && stat_ok && now.st_size == st_.st_size && now.st_mtim.tv_sec == st_.st_mtim.tv_sec &&
        now.st_mtim.tv_nsec == st_.st_mtim.tv_nsec)
      return;
    throw io_error("'" + printable(path_) + "' changed while it was being read (" + std::to_string(st_.st_size) +
                   " bytes when opened" + (stat_ok ? ", " + std::to_string(now.st_size) + " now" : std::string()) +
                   "); read it again once it is complete");
  }
  /// f(text), with the file checked for changes afterwards, also when f throws (a parse
  /// error caused by a change is reported as the change).
  template <typename F>
  auto parse(F&& f) const {
    try {
      auto r = f(text());
      check_unchanged();
      return r;
    } catch (...) {
      check_unchanged();
      throw;
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  struct stat st_ {};
  mapping_slot* slot_ = nullptr;
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

std::uint64_t file_size(std::FILE* f) {
  if (std::fseek(f, 0, SEEK_END) != 0) return 0;
  const long n = std::ftell(f);
  std::rewind(f);
  return n > 0 ? static_cast<std::uint64_t>(n) : 0;
}

// ---- writing -----------------------------------------------------------------------------

template <typename T>
void append_number(std::string& s, T v) {
  if constexpr (is_complex_v<T>) {
    append_number(s, v.real());
    s += ' ';
    append_number(s, v.imag());
  } else {
    char buf[64];
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
    (void)ec;
    s.append(buf, p);
  }
}

template <typename T>
bool is_nan(const T& v) {
  if constexpr (is_complex_v<T>) return std::isnan(v.real()) || std::isnan(v.imag());
  else return std::isnan(v);
}
template <typename T>
T conjugate(const T& v) {
  if constexpr (is_complex_v<T>) return std::conj(v);
  else return v;
}

/// Through a temporary file renamed over the target: a failure leaves the target as it was.
void write_all(const std::string& path, const std::string& text) {
  atomic_file out(path);
  out.write(text);
  out.commit();
}

/// "" when a_ij == a_ji for every stored entry (hermitian: a_ij == conj(a_ji)) (the same
/// pattern, values equal as numbers: 0 and -0 are equal, a NaN equals nothing), else why not.
template <typename T, typename O>
std::string why_not_symmetric(const csr_matrix<T, O>& a, bool hermitian = false) {
  const char* what = hermitian ? "not exactly Hermitian" : "not exactly symmetric";
  const char* relation = hermitian ? "A != A^H" : "A != A^T";
  if (a.rows() != a.cols()) return "not square";
  const csc_matrix<T, O> t = to_csc<O>(a);  // A^T in CSR is A's CSC arrays
  if (t.col_ptr() != a.row_ptr() || t.row_idx() != a.col_idx())
    return std::string(what) + " (" + relation + ": the patterns differ)";
  for (std::size_t k = 0; k < a.values().size(); ++k) {
    if (is_nan(a.values()[k])) return std::string(what) + ": it holds a NaN, which equals nothing";
    const T mirror = hermitian ? conjugate(t.values()[k]) : t.values()[k];
    if (!(mirror == a.values()[k])) return std::string(what) + " (" + relation + ")";
  }
  return "";
}

/// Characters of one line of the writer's output at most: two indices and a value in its
/// shortest round-trip form (coordinate), or the value alone (array), with separators; a
/// complex value is two numbers of half its bytes each.
double line_chars(std::int64_t rows, std::int64_t cols, mm_format format, std::size_t value_bytes, bool complex_values) {
  const std::size_t part_bytes = complex_values ? value_bytes / 2 : value_bytes;
  const double part = part_bytes == 8 ? 24 : 16;
  const double value = complex_values ? 2 * part + 1 : part;
  if (format == mm_format::array) return value + 1;
  return 2.0 * double(std::to_string(std::max(rows, cols)).size() + 1) + value + 1;
}

}  // namespace

double matrix_market_text_bytes(std::int64_t rows, std::int64_t cols, std::int64_t entries, mm_format format,
                                std::size_t value_bytes, bool complex_values) {
  const double lines = format == mm_format::array ? double(rows) * double(cols) : double(entries);
  return 128 + lines * line_chars(rows, cols, format, value_bytes, complex_values);  // 128: banner, comment, size line
}

mm_header read_matrix_market_header(const std::string& path) {
  file_ptr f = open_file(path, "rb");
  line_reader in(f.get(), path);
  return parse_header(in).h;
}

template <typename T>
coo_matrix<T> read_matrix_market(const std::string& path, mm_header* header, const mm_read_options& opt) {
  // Regular files are mapped and parsed in memory (in parallel where it pays); anything
  // else (pipes, devices) is streamed through 4 MiB reads on one thread.
  if (mapped_file map(path); map.ok())
    return map.parse([&](std::string_view text) { return parse_text<T>(text, path, header, opt); });
  file_ptr f = open_file(path, "rb");
  const std::uint64_t size = file_size(f.get());
  line_reader in(f.get(), path);
  header_info info = parse_header(in);
  if (header) *header = info.h;
  check_value_type<T>(info.h, path);
  return parse_body<T>(in, info, size);
}

template <typename T>
coo_matrix<T> parse_matrix_market(std::string_view text, const std::string& name, mm_header* header,
                                  const mm_read_options& opt) {
  return parse_text<T>(text, name, header, opt);
}

template <typename T, typename O>
csr_matrix<T, O> read_matrix_market_csr(const std::string& path, mm_header* header, const mm_read_options& opt) {
  if (mapped_file map(path); map.ok())
    return map.parse([&](std::string_view text) { return parse_text_csr<T, O>(text, path, header, opt); });
  return to_csr<O>(read_matrix_market<T>(path, header, opt));
}

template <typename T, typename O>
csr_matrix<T, O> parse_matrix_market_csr(std::string_view text, const std::string& name, mm_header* header,
                                         const mm_read_options& opt) {
  return parse_text_csr<T, O>(text, name, header, opt);
}

template <typename T, typename O>
std::string format_matrix_market(const csr_matrix<T, O>& a, mm_write_options opt) {
  LA_EXPECTS(opt.symmetry != mm_symmetry::skew_symmetric,
             "Matrix Market writer: skew-symmetric output is not offered; use general or symmetric");
  LA_EXPECTS(opt.symmetry != mm_symmetry::hermitian || is_complex_v<T>,
             "Matrix Market writer: hermitian output is for complex values; a real matrix equal to its transpose is "
             "written as symmetric");
  const bool hermitian = opt.symmetry == mm_symmetry::hermitian;
  const bool sym = opt.symmetry == mm_symmetry::symmetric || hermitian;
  if (sym) {
    if (const std::string why = why_not_symmetric(a, hermitian); !why.empty())
      throw invalid_argument(std::string("cannot write as ") + to_string(opt.symmetry) + ": the matrix is " + why +
                             "; write it with symmetry general");
  }
  // The text is built whole, then written: refuse at once when it cannot fit (with the dense
  // copy an array is written from).
  const double text = matrix_market_text_bytes(a.rows(), a.cols(), a.nnz(), opt.format, sizeof(T), is_complex_v<T>);
  const double dense = opt.format == mm_format::array ? double(a.rows()) * double(a.cols()) * sizeof(T) : 0.0;
  check_host_memory(text + dense,
                    "writing a " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) + " matrix as " +
                        to_string(opt.format) + " Matrix Market text");
  std::string s;
  s += "%%MatrixMarket matrix ";
  s += to_string(opt.format);
  s += is_complex_v<T> ? " complex " : " real ";
  s += to_string(opt.symmetry);
  s += "\n% written by la\n";
  if (opt.format == mm_format::coordinate) {
    std::int64_t count = 0;
    for (index_t i = 0; i < a.rows(); ++i)
      for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) count += !sym || a.col_idx()[k] <= i;
    s.reserve(s.size() + static_cast<std::size_t>(text));
    append_number(s, a.rows()); s += ' ';
    append_number(s, a.cols()); s += ' ';
    append_number(s, count); s += '\n';
    for (index_t i = 0; i < a.rows(); ++i)
      for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
        if (sym && a.col_idx()[k] > i) continue;
        append_number(s, i + 1); s += ' ';
        append_number(s, a.col_idx()[k] + 1); s += ' ';
        append_number(s, a.values()[k]); s += '\n';
      }
  } else {
    const dense_matrix<T> d = to_dense(a);
    s.reserve(s.size() + static_cast<std::size_t>(text));
    append_number(s, a.rows()); s += ' ';
    append_number(s, a.cols()); s += '\n';
    for (index_t j = 0; j < a.cols(); ++j)
      for (index_t i = sym ? j : 0; i < a.rows(); ++i) {
        append_number(s, d(i, j));
        s += '\n';
      }
  }
  return s;
}

template <typename T, typename O>
void write_matrix_market(const std::string& path, const csr_matrix<T, O>& a, mm_write_options opt) {
  write_all(path, format_matrix_market(a, opt));
}

template <typename T>
std::string format_matrix_market_vector(const std::vector<T>& v, index_t columns) {
  LA_EXPECTS(columns >= 1 && v.size() % static_cast<std::size_t>(columns) == 0,
             "format_matrix_market_vector: " + std::to_string(v.size()) + " values are not " +
                 std::to_string(columns) + " columns of one length");
  const index_t n = checked_index(static_cast<std::int64_t>(v.size() / static_cast<std::size_t>(columns)), "vector length");
  std::string s = is_complex_v<T> ? "%%MatrixMarket matrix array complex general\n% written by la\n"
                                   : "%%MatrixMarket matrix array real general\n% written by la\n";
  append_number(s, n);
  s += ' ';
  append_number(s, columns);
  s += '\n';
  for (T x : v) {
    append_number(s, x);
    s += '\n';
  }
  return s;
}

template <typename T>
void write_matrix_market_vector(const std::string& path, const std::vector<T>& v) {
  write_all(path, format_matrix_market_vector(v));
}

template <typename T>
std::vector<T> read_matrix_market_vector(const std::string& path) {
  return matrix_market_vector(read_matrix_market<T>(path), path);
}

template <typename T>
std::vector<T> matrix_market_vector(const coo_matrix<T>& m, const std::string& path) {
  if (m.cols() != 1 && m.rows() != 1)
    throw invalid_argument("'" + printable(path) + "' is a " + std::to_string(m.rows()) + " x " +
                           std::to_string(m.cols()) + " matrix; a vector file must be n x 1 or 1 x n");
  std::vector<T> v(static_cast<std::size_t>(std::max(m.rows(), m.cols())), T(0));
  for (count_t k = 0; k < m.nnz(); ++k) v[m.cols() == 1 ? m.row_idx()[k] : m.col_idx()[k]] += m.values()[k];
  return v;
}

#define LA_INSTANTIATE(T)                                                                       \
  template coo_matrix<T> read_matrix_market<T>(const std::string&, mm_header*, const mm_read_options&);        \
  template coo_matrix<T> parse_matrix_market<T>(std::string_view, const std::string&, mm_header*,                 \
                                                const mm_read_options&);                                         \
  template csr_matrix<T, std::int32_t> read_matrix_market_csr<T, std::int32_t>(const std::string&, mm_header*,     \
                                                                                const mm_read_options&);          \
  template csr_matrix<T, std::int64_t> read_matrix_market_csr<T, std::int64_t>(const std::string&, mm_header*,     \
                                                                                const mm_read_options&);          \
  template csr_matrix<T, std::int32_t> parse_matrix_market_csr<T, std::int32_t>(std::string_view, const std::string&, \
                                                                                 mm_header*, const mm_read_options&); \
  template csr_matrix<T, std::int64_t> parse_matrix_market_csr<T, std::int64_t>(std::string_view, const std::string&, \
                                                                                 mm_header*, const mm_read_options&); \
  template std::string format_matrix_market<T>(const csr_matrix<T, std::int32_t>&, mm_write_options);         \
  template std::string format_matrix_market<T>(const csr_matrix<T, std::int64_t>&, mm_write_options);         \
  template void write_matrix_market<T>(const std::string&, const csr_matrix<T, std::int32_t>&, mm_write_options); \
  template void write_matrix_market<T>(const std::string&, const csr_matrix<T, std::int64_t>&, mm_write_options); \
  template void write_matrix_market_vector<T>(const std::string&, const std::vector<T>&);       \
  template std::string format_matrix_market_vector<T>(const std::vector<T>&, index_t);         \
  template std::vector<T> read_matrix_market_vector<T>(const std::string&);                     \
  template std::vector<T> matrix_market_vector<T>(const coo_matrix<T>&, const std::string&);
LA_FOR_EACH_VALUE(LA_INSTANTIATE)
LA_FOR_EACH_COMPLEX(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace la
