// Options shared by the subcommands that read matrices.
#pragma once

#include <filesystem>
#include <string>

#include <la/formats/convert.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/la/types.hpp>

#include "args.hpp"

namespace la::cli {

/// Help text for the shared options.
inline constexpr const char* reader_usage =
    "  --threads N           threads that parse the file (default: $LA_THREADS, else all)\n"
    "  --offsets W           auto (default: 32-bit unless the matrix has more than 2^31-1\n"
    "                        nonzeros), 32 or 64: width of the sparse row pointers\n";


inline mm_read_options read_options(const args& a) {
  mm_read_options opt;
  opt.threads = static_cast<int>(a.get_int("--threads", 0, 0, 256));  // 0: automatic
  return opt;
}

inline offset_width offsets_option(const args& a) {
  const std::string w = a.get_choice("--offsets", "auto", {"auto", "32", "64"});
  return w == "32" ? offset_width::b32 : w == "64" ? offset_width::b64 : offset_width::automatic;
}

/// Reads `path` into CSR with the offset width chosen from the header (or forced with
/// --offsets) and returns f(csr). Regular files go straight to CSR; pipes and devices,
/// which cannot be read twice, through COO.
template <typename T, typename F>
decltype(auto) with_csr_file(const std::string& path, const args& a, F&& f, mm_header* header = nullptr) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return with_csr(read_matrix_market<T>(path, header, read_options(a)), f, offsets_option(a));
  const mm_header h = read_matrix_market_header(path);
  return with_offsets(max_stored_entries(h), offsets_option(a), [&](auto o) -> decltype(auto) {
    return f(read_matrix_market_csr<T, decltype(o)>(path, header, read_options(a)));
  });
}

}  // namespace la::cli
