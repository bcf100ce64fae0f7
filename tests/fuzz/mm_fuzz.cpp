// libFuzzer target over the Matrix Market reader. For every input it checks properties,
// and traps (a finding) when one fails:
//  1. the reader never crashes, hangs or leaks anything but la::error;
//  2. several threads give what one thread gives: the same matrix (bit for bit), or the
//     same error (type, message, line), in double, float and complex<double>;
//  3. the file path (memory-mapped) gives what the in-memory parse gives;
//  4. straight to CSR (read_matrix_market_csr, 32- and 64-bit offsets) equals to_csr of the
//     COO result, or fails the same way;
//  5. round trip: whatever reads is written (coordinate, and array when small) and read back
//     to the identical matrix, as double and as complex<double>.
// la's host memory is capped at 256 MB here (LA_HOST_MEMORY_LIMIT), so a header that
// declares a huge matrix is refused by la's own check instead of by the fuzzer's RSS limit.
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <unistd.h>

#include <la/formats/convert.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/memory.hpp>

namespace {

std::string temp_path;

[[noreturn]] void finding(const char* property, const std::string& a, const std::string& b) {
  std::fprintf(stderr, "\n*** property failed: %s\n--- expected:\n%.2000s\n--- got:\n%.2000s\n", property, a.c_str(),
               b.c_str());
  __builtin_trap();
}

template <typename T>
std::string bits(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

template <typename M>
std::string describe(const M& m) {
  std::string s = std::to_string(m.rows()) + "x" + std::to_string(m.cols()) + "|";
  std::apply([&](const auto&... a) { ((s += bits(a) + "|"), ...); }, m.arrays());
  return s;
}

/// "ok:<matrix bits>" or "<error type>:<message>:<line>"; anything else escapes (a finding).
template <typename F>
std::string outcome(F&& f) {
  try {
    return "ok:" + describe(f());
  } catch (const la::parse_error& e) {
    return "parse_error:" + std::string(e.what()) + ":" + std::to_string(e.line());
  } catch (const la::not_supported& e) {
    return std::string("not_supported:") + e.what();
  } catch (const la::insufficient_memory&) {
    // The amount depends on the representation (offset width, COO or CSR), so only the
    // refusal is compared.
    return "insufficient_memory";
  } catch (const la::size_overflow& e) {
    return std::string("size_overflow:") + e.what();
  }
}

la::mm_read_options threads(int n) {
  la::mm_read_options o;
  o.threads = n;
  o.min_bytes_per_thread = 1;  // split even tiny inputs
  return o;
}

template <typename T>
void check_type(std::string_view text) {
  const std::string& name = temp_path;  // the same name on every path, so messages compare
  const std::string one = outcome([&] { return la::parse_matrix_market<T>(text, name, nullptr, threads(1)); });
  for (int n : {2, 3}) {
    const std::string many = outcome([&] { return la::parse_matrix_market<T>(text, name, nullptr, threads(n)); });
    if (many != one) finding("several threads give what one thread gives (COO)", one, many);
  }
  const std::string via_coo = outcome([&] { return la::to_csr(la::parse_matrix_market<T>(text, name, nullptr, threads(1))); });
  for (int n : {1, 3}) {
    const std::string direct =
        outcome([&] { return la::parse_matrix_market_csr<T>(text, name, nullptr, threads(n)); });
    if (direct != via_coo) finding("read_matrix_market_csr equals to_csr of the COO result", via_coo, direct);
    const std::string wide = outcome([&] {
      return la::to_csr(la::parse_matrix_market_csr<T, std::int64_t>(text, name, nullptr, threads(n)));
    });
    // 64-bit offsets need more memory: refused where 32-bit ones fit is not a difference.
    if (wide != via_coo && wide != "insufficient_memory") finding("64-bit offsets give the same matrix", via_coo, wide);
  }
}

/// Round trip: what reads as T is written and read back identically.
template <typename T>
void round_trip(std::string_view text) {
  la::coo_matrix<T> coo;
  try {
    coo = la::parse_matrix_market<T>(text, "in");
  } catch (const la::error&) {
    return;
  }
  la::csr_matrix<T> a;
  try {
    a = la::to_csr(coo);
  } catch (const la::error&) {  // refused for memory: nothing to round-trip
    return;
  }
  const std::string want = describe(a);
  const std::string coord = la::format_matrix_market(a);
  const std::string back = outcome([&] { return la::to_csr(la::parse_matrix_market<T>(coord, "round trip")); });
  if (back != "ok:" + want) finding("coordinate round trip", "ok:" + want, back + "\n" + coord.substr(0, 500));
  if (static_cast<double>(a.rows()) * a.cols() <= 4096) {
    la::mm_write_options opt;
    opt.format = la::mm_format::array;
    const std::string arr = la::format_matrix_market(a, opt);
    // Array storage keeps every element; explicit zeros of the sparse matrix disappear
    // through dense, so compare the dense forms.
    const std::string dense_want = describe(la::to_dense(a));
    const std::string dense_back = outcome([&] { return la::to_dense(la::parse_matrix_market<T>(arr, "array")); });
    if (dense_back != "ok:" + dense_want) finding("array round trip", "ok:" + dense_want, dense_back);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("LA_HOST_MEMORY_LIMIT", "268435456", 1);
  const char* dir = std::getenv("TMPDIR");
  temp_path = std::string(dir && *dir ? dir : "/tmp") + "/la_mm_fuzz_" + std::to_string(getpid()) + ".mtx";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_type<double>(text);
  check_type<float>(text);
  check_type<std::complex<double>>(text);  // complex files, and every real one read as complex

  // The file path against the in-memory parse (same name in messages).
  if (FILE* f = std::fopen(temp_path.c_str(), "wb")) {
    const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    std::fclose(f);
    if (written) {
      const std::string mem = outcome([&] { return la::parse_matrix_market<double>(text, temp_path); });
      for (int n : {1, 2}) {
        const std::string file = outcome([&] { return la::read_matrix_market<double>(temp_path, nullptr, threads(n)); });
        if (file != mem) finding("the file path gives what the in-memory parse gives", mem, file);
      }
    }
  }

  round_trip<double>(text);
  round_trip<std::complex<double>>(text);
  return 0;
}
