#include <cstdio>
#include <string>

#include <la/formats/convert.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/la/atomic_file.hpp>
#include "args.hpp"
#include "common.hpp"
#include "commands.hpp"

namespace la::cli {
namespace {
const char* usage =
    "usage: la convert IN.mtx -o OUT.mtx [--to coordinate|array] [--symmetry general|symmetric]\n"
    "\n"
    "Reads any supported Matrix Market file (coordinate or array; real, integer or pattern;\n"
    "general, symmetric or skew-symmetric) and writes it back as real values.\n"
    "  -o, --output FILE     where to write (required)\n"
    "  --to FORMAT           coordinate (default) or array\n"
    "  --symmetry S          general (default: every entry written) or symmetric (lower\n"
    "                        triangle; refused unless the matrix is exactly symmetric)\n"
    "%s"
    "Duplicates are summed; values are written with the shortest text that reads back exactly.\n"
    "OUT is written through a temporary file renamed over it at the end, so OUT may be IN and\n"
    "a failed run leaves OUT as it was.\n";
}  // namespace

int cmd_convert(int argc, char** argv) {
  args a(argc, argv, 2, {"-o", "--output", "--to", "--symmetry", "--threads", "--offsets"}, {});
  if (a.help()) return std::printf(usage, reader_usage), 0;
  if (a.positional().size() != 1) throw usage_error("expected exactly one input file");
  const std::string out = a.get("-o", a.get("--output", ""));
  if (out.empty()) throw usage_error("missing -o OUT.mtx");
  mm_write_options opt;
  opt.format = a.get_choice("--to", "coordinate", {"coordinate", "array"}) == "array" ? mm_format::array
                                                                                       : mm_format::coordinate;
  opt.symmetry = a.get_choice("--symmetry", "general", {"general", "symmetric"}) == "symmetric"
                     ? mm_symmetry::symmetric
                     : mm_symmetry::general;
  atomic_file file(out);  // fails now if the output cannot be created; replaced only on success
  with_csr_file<double>(a.positional()[0], a, [&](const auto& m) {
    file.write(format_matrix_market(m, opt));
    file.commit();
    std::printf("wrote %s: %d x %d, %lld nonzeros, %s %s\n", out.c_str(), m.rows(), m.cols(),
                static_cast<long long>(m.nnz()), to_string(opt.format), to_string(opt.symmetry));
  });
  return 0;
}

}  // namespace la::cli
