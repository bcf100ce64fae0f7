// Matrix Market I/O (NIST format, https://math.nist.gov/MatrixMarket/formats.html).
//
// Reading: `coordinate` and `array`; fields real, integer, pattern (value 1) and complex;
// symmetries general, symmetric, skew-symmetric and hermitian (complex only: each entry
// below the diagonal mirrored conjugated, the diagonal real), expanded to full storage. Real
// value types (float, double) read real, integer and pattern files; complex ones
// (std::complex<float>, std::complex<double>) read those too (imaginary parts zero) and
// complex files. A complex file read as real, and the `vector` object, are refused with
// la::not_supported. Every malformed input throws la::parse_error whose message starts with
// "file:line:". NaN and Inf values are read as such (they are representable); the solvers
// reject them.
//
// Writing: coordinate general or symmetric (lower triangle), array general or symmetric,
// with the shortest decimal form that reads back to the same value (std::to_chars); complex
// values as field complex ("real imaginary"), also hermitian. Files are written through
// la::atomic_file: a failed write leaves the target as it was.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <la/formats/coo.hpp>
#include <la/formats/csr.hpp>

namespace la {

enum class mm_format { coordinate, array };
enum class mm_field { real, integer, pattern, complex };
enum class mm_symmetry { general, symmetric, skew_symmetric, hermitian };

struct mm_header {
  mm_format format = mm_format::coordinate;
  mm_field field = mm_field::real;
  mm_symmetry symmetry = mm_symmetry::general;
  std::int64_t rows = 0, cols = 0;
  std::int64_t entries = 0;  // as declared (stored, before symmetric expansion); may exceed 2^31
};

const char* to_string(mm_format f) noexcept;
const char* to_string(mm_field f) noexcept;
const char* to_string(mm_symmetry s) noexcept;

/// Reads the banner and size line only.
mm_header read_matrix_market_header(const std::string& path);

struct mm_read_options {
  /// Threads that parse a coordinate body: 0 takes $LA_THREADS, else every hardware thread.
  /// The result and every error (message and line number) are the same for any count.
  int threads = 0;
  /// Bodies smaller than threads x this many bytes use fewer threads (one below it).
  std::size_t min_bytes_per_thread = std::size_t(4) << 20;
};

/// Reads the whole file into a COO matrix in full (general) storage. Entries appear in file
/// order; for symmetric files each off-diagonal entry is followed by its mirror. Array files
/// give every element, zeros included. `header` (optional) receives the file's header.
/// Regular files are memory-mapped (do not truncate the file while it is being read).
template <typename T>
coo_matrix<T> read_matrix_market(const std::string& path, mm_header* header = nullptr,
                                 const mm_read_options& opt = {});

/// Same, from text in memory; `name` is used in error messages.
template <typename T>
coo_matrix<T> parse_matrix_market(std::string_view text, const std::string& name = "<string>",
                                  mm_header* header = nullptr, const mm_read_options& opt = {});

/// Reads the file straight into CSR (sorted, duplicates summed in file order), with offsets
/// of type O: the same matrix as to_csr<O>(read_matrix_market<T>(path)), without building
/// the COO matrix in between when the body is parsed on several threads. This is the path
/// `la info`, `la solve` and `la convert` take.
template <typename T, typename O = index_t>
csr_matrix<T, O> read_matrix_market_csr(const std::string& path, mm_header* header = nullptr,
                                        const mm_read_options& opt = {});
/// Same, from text in memory.
template <typename T, typename O = index_t>
csr_matrix<T, O> parse_matrix_market_csr(std::string_view text, const std::string& name = "<string>",
                                         mm_header* header = nullptr, const mm_read_options& opt = {});

/// Entries a CSR matrix of this file can hold at most (symmetric expansion included): what
/// the offset width is chosen from before reading the body.
inline std::int64_t max_stored_entries(const mm_header& h) noexcept {
  return h.symmetry == mm_symmetry::general ? h.entries : 2 * h.entries;
}

struct mm_write_options {
  mm_format format = mm_format::coordinate;
  /// symmetric: the matrix must be square and exactly symmetric (A = A^T; for complex values
  /// complex symmetric, not conjugated); only the lower triangle is written. hermitian
  /// (complex values only): A = A^H exactly, the diagonal real. skew_symmetric is not
  /// offered for writing.
  mm_symmetry symmetry = mm_symmetry::general;
};

/// Bytes of the text format_matrix_market builds at most for a rows x cols matrix with
/// `entries` stored entries (array: rows * cols values) of `value_bytes`-byte values
/// (complex: `value_bytes` the whole value, both parts): it reserves this much and checks it
/// against the host memory before writing.
double matrix_market_text_bytes(std::int64_t rows, std::int64_t cols, std::int64_t entries, mm_format format,
                                std::size_t value_bytes, bool complex_values = false);

/// Writes a CSR matrix (sorted, no duplicates; 32- or 64-bit offsets) to text / to a file.
template <typename T, typename O>
std::string format_matrix_market(const csr_matrix<T, O>& a, mm_write_options opt = {});
template <typename T, typename O>
void write_matrix_market(const std::string& path, const csr_matrix<T, O>& a, mm_write_options opt = {});

/// Dense vector as an `array real general` (complex values: `array complex general`) n x 1
/// matrix (right-hand sides, solutions); with
/// columns = k, v holds k columns one after another (Matrix Market's array order) and the
/// text is an n x k array, n = v.size() / k.
template <typename T>
std::string format_matrix_market_vector(const std::vector<T>& v, index_t columns = 1);
template <typename T>
void write_matrix_market_vector(const std::string& path, const std::vector<T>& v);
/// Reads an n x 1 (or 1 x n) matrix, coordinate or array, as a dense vector.
template <typename T>
std::vector<T> read_matrix_market_vector(const std::string& path);
/// The same from a matrix already read from `path` (named in the error when it is no vector).
template <typename T>
std::vector<T> matrix_market_vector(const coo_matrix<T>& m, const std::string& path);

}  // namespace la
