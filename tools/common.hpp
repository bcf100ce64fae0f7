// Options shared by the subcommands that read matrices.
#pragma once

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
  const long t = a.get_int("--threads", 0);
  if (t < 0 || t > 256) throw usage_error("--threads must be between 0 (automatic) and 256, got " + std::to_string(t));
  opt.threads = static_cast<int>(t);
  return opt;
}

inline offset_width offsets_option(const args& a) {
  const std::string w = a.get_choice("--offsets", "auto", {"auto", "32", "64"});
  return w == "32" ? offset_width::b32 : w == "64" ? offset_width::b64 : offset_width::automatic;
}

}  // namespace la::cli
