#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include <la/formats/convert.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/atomic_file.hpp>
#include <la/memory.hpp>
#include <la/parallel.hpp>
#include "args.hpp"
#include "common.hpp"
#include "commands.hpp"

namespace la::cli {
namespace {
const char* usage =
    "usage: la convert IN.mtx|gen:SPEC -o OUT.mtx [--to coordinate|array]\n"
    "                  [--symmetry general|symmetric|hermitian]\n"
    "\n"
    "Reads any supported Matrix Market file (coordinate or array; real, integer, pattern or\n"
    "complex; general, symmetric, skew-symmetric or hermitian) and writes it back as real\n"
    "values, or as complex values where the file's are complex.\n"
    "  -o, --output FILE     where to write (required); through a symbolic link, the file it\n"
    "                        names is written; a write-protected file is refused\n"
    "  --force               replace a write-protected OUT\n"
    "  gen:SPEC              a generated matrix instead of a file: poisson2d:N, poisson3d:N,\n"
    "                        random:ROWS:K, rmat:SCALE:EDGES_PER_VERTEX, denserows:ROWS:K:COUNT:LEN;\n"
    "                        complex: helmholtz2d:N[:PPW[:SHIFT]], helmholtz3d:N[:PPW[:SHIFT]]\n"
    "  --to FORMAT           coordinate (default) or array\n"
    "  --symmetry S          general (default: every entry written) or symmetric (lower\n"
    "                        triangle; refused unless the matrix is exactly symmetric, A = A^T,\n"
    "                        complex values too); hermitian: complex values only, the lower\n"
    "                        triangle, refused unless A = A^H exactly (the diagonal real)\n"
    "%s"
    "Duplicates are summed; values are written with the shortest text that reads back exactly.\n"
    "OUT is written through a temporary file renamed over it at the end, so OUT may be IN and\n"
    "a failed or interrupted run leaves OUT as it was. Before reading, la estimates the host\n"
    "memory the conversion needs (the parsed entries, the CSR arrays and their per-thread\n"
    "counters, the output text) and refuses at once when the machine does not have it.\n"
    "The status line goes to stdout, or to stderr when OUT is stdout itself.\n";

/// Host memory a conversion of a file with this header needs at its peak, from the same
/// estimates the library checks at each step: reading (the parsed entries, then the CSR
/// build) or writing (the CSR arrays and the text), whichever is larger.
double conversion_bytes(const mm_header& h, double file_bytes, const mm_write_options& opt, int threads) {
  const bool complex_values = h.field == mm_field::complex;
  const std::size_t value_bytes = complex_values ? 2 * sizeof(double) : sizeof(double);
  const double expand = h.symmetry == mm_symmetry::general ? 1.0 : 2.0;
  // No more entries than the file has lines for ("1 1\n" is 4 bytes, an array value 2): a
  // size line that declares more is a malformed file, which the reader reports as such.
  const double stored = h.format == mm_format::array ? std::min(double(h.rows) * double(h.cols), file_bytes / 2)
                                                     : std::min(double(h.entries), file_bytes / 4);
  const auto entries = static_cast<std::int64_t>(stored * expand);
  const std::size_t offset_bytes = needs_64bit_offsets(entries) ? 8 : 4;
  const double parsed = double(entries) * (2 * sizeof(index_t) + value_bytes);  // the reader's COO parts
  const double build =
      detail::csr_build_bytes(h.rows, entries, detail::csr_build_threads(h.rows, entries, threads), offset_bytes, value_bytes);
  const double csr = (double(h.rows) + 1) * offset_bytes + double(entries) * (sizeof(index_t) + value_bytes);
  const double text = matrix_market_text_bytes(h.rows, h.cols, entries, opt.format, value_bytes, complex_values) +
                      (opt.format == mm_format::array ? double(h.rows) * double(h.cols) * value_bytes : 0.0);
  return std::max(parsed + build, csr + text);
}
}  // namespace

int cmd_convert(int argc, char** argv) {
  args a(argc, argv, 2, {"-o", "--output", "--to", "--symmetry", "--threads", "--offsets"}, {"--force"});
  if (a.help()) return std::printf(usage, reader_usage), 0;
  if (a.positional().size() != 1) throw usage_error("expected exactly one input file");
  const std::string& input = a.positional()[0];
  if (is_gen(input)) (void)gen_option(input);
  const std::string out = a.get("-o", a.get("--output", ""));
  if (out.empty()) throw usage_error("missing -o OUT.mtx");
  mm_write_options opt;
  opt.format = a.get_choice("--to", "coordinate", {"coordinate", "array"}) == "array" ? mm_format::array
                                                                                       : mm_format::coordinate;
  const std::string sym = a.get_choice("--symmetry", "general", {"general", "symmetric", "hermitian"});
  opt.symmetry = sym == "symmetric" ? mm_symmetry::symmetric : sym == "hermitian" ? mm_symmetry::hermitian : mm_symmetry::general;
  std::error_code ec;
  const bool regular = !is_gen(input) && std::filesystem::is_regular_file(input, ec);
  const mm_header h = regular ? read_matrix_market_header(input) : mm_header{};
  const bool complex_values = h.field == mm_field::complex || (is_gen(input) && complex_gen_kind(gen_option(input).kind));
  if (opt.symmetry == mm_symmetry::hermitian && !complex_values)
    throw usage_error("--symmetry hermitian is for complex matrices; '" + printable(input) +
                      "' has real values: write a real matrix equal to its transpose with --symmetry symmetric");
  // The output fails now if it cannot be created; it is replaced only on success.
  outputs files(a, {input});
  atomic_file& file = *files.open(a.has("-o") ? "-o" : "--output", out, outputs::input_policy::allow);
  std::FILE* rep = report_stream(files.paths());
  if (regular) {
    check_host_memory(conversion_bytes(h, double(std::filesystem::file_size(input)), opt, thread_count(read_options(a).threads)),
                      "converting '" + printable(input) + "' (" + std::to_string(h.rows) + " x " +
                          std::to_string(h.cols) + ", " + std::to_string(h.entries) + " entries declared)");
  }
  const auto write = [&](const auto& m) {
    file.write(format_matrix_market(m, opt));
    file.commit();
    std::fprintf(rep, "wrote %s: %d x %d, %lld nonzeros, %s %s %s\n", printable(out).c_str(), m.rows(), m.cols(),
                 static_cast<long long>(m.nnz()), to_string(opt.format), complex_values ? "complex" : "real",
                 to_string(opt.symmetry));
  };
  if (complex_values) with_matrix<std::complex<double>>(input, a, write);
  else with_matrix<double>(input, a, write);
  return 0;
}

}  // namespace la::cli
