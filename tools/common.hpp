// Options shared by the subcommands that read matrices.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <la/formats/convert.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/atomic_file.hpp>
#include <la/context.hpp>
#include <la/types.hpp>

#include "args.hpp"
#include <la/formats/detail/gen_spec.hpp>

namespace la::cli {

/// No usable GPU for a command that needs one: exit status 3, like every other GPU failure.
class no_gpu_error : public error {
 public:
  using error::error;
};

/// Throws no_gpu_error ("needs a GPU: <why there is none>") when no GPU can be used. Call it
/// after every argument has been checked, so that bad usage is reported as such.
inline void require_gpu() {
  if (!cuda_available()) throw no_gpu_error("this command needs a GPU: " + cuda_status());
}

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

/// A gen: spec checked as usage (before anything else runs); `kinds` restricts the kinds.
inline gen_spec gen_option(const std::string& input, const std::vector<std::string>& kinds = all_gen_kinds()) {
  try {
    return parse_gen(input.substr(4), kinds);
  } catch (const invalid_argument& e) {
    throw usage_error(e.what());
  }
}
inline bool is_gen(const std::string& input) { return input.rfind("gen:", 0) == 0; }

/// Reads `path` into CSR with the offset width chosen from the header (or forced with
/// --offsets) and returns f(csr). Regular files go straight to CSR; pipes and devices,
/// which cannot be read twice, through COO.
template <typename T, typename F>
decltype(auto) with_csr_file(const std::string& path, const args& a, F&& f, mm_header* header = nullptr) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return with_csr(read_matrix_market<T>(path, header, read_options(a)), f, offsets_option(a));
  const mm_header h = read_matrix_market_header(path);
  if constexpr (!is_complex_v<T>)
    if (h.field == mm_field::complex)
      throw not_supported("'" + printable(path) +
                          "' holds complex values (field 'complex'): this command takes real matrices so far; "
                          "`la info`, `la convert` and `la solve` (on the host) take complex files");
  return with_offsets(max_stored_entries(h), offsets_option(a), [&](auto o) -> decltype(auto) {
    return f(read_matrix_market_csr<T, decltype(o)>(path, header, read_options(a)));
  });
}

/// f(csr) for a file or a gen: spec (the spec's kinds limited to `kinds`); the header of a
/// generated matrix reads "coordinate real general".
template <typename T, typename F>
decltype(auto) with_matrix(const std::string& input, const args& a, F&& f, mm_header* header = nullptr,
                           const std::vector<std::string>& kinds = all_gen_kinds()) {
  if (is_gen(input)) {
    const gen_spec g = gen_option(input, kinds);
    if (header)
      *header = mm_header{mm_format::coordinate, complex_gen_kind(g.kind) ? mm_field::complex : mm_field::real,
                          mm_symmetry::general, g.rows, g.rows, 0};
    return with_generated<T>(g, offsets_option(a), [&](auto&& m) -> decltype(auto) {
      if (header) header->entries = m.nnz();
      return f(m);
    });
  }
  return with_csr_file<T>(input, a, f, header);
}

/// Where the report goes: stdout, unless an output file is stdout itself (-o /dev/stdout),
/// which then carries the data alone and the report goes to stderr.
inline std::FILE* report_stream(const std::vector<std::string>& outputs) {
  struct stat out {};
  if (::fstat(1, &out) != 0) return stderr;
  for (const auto& o : outputs) {
    struct stat st {};
    if (::stat(o.c_str(), &st) == 0 && st.st_dev == out.st_dev && st.st_ino == out.st_ino) return stderr;
  }
  return stdout;
}

/// The output files of one command, each checked and opened (its temporary created) before
/// anything is read: refused when it is an input (unless `replace_input`), when two
/// outputs are the same file (by device and inode, links included, or by name before they
/// exist), and when it is write-protected (unless --force).
class outputs {
 public:
  outputs(const args& a, std::vector<std::string> inputs) : a_(a), inputs_(std::move(inputs)) {}
  /// Whether an output may be an input: never, with --force, or always (in-place rewrite).
  enum class input_policy { refuse, unless_forced, allow };
  /// `option` is the flag that named `path`, for messages.
  atomic_file* open(const std::string& option, const std::string& path, input_policy inputs) {
    if (path.empty()) throw usage_error(option + " needs a file name");
    for (const auto& [other_option, other] : opened_)
      if (same_output(path, other))
        throw usage_error(option + " '" + printable(path) + "' and " + other_option + " '" + printable(other) +
                          "' are the same file; one would overwrite the other: give them different names");
    for (const auto& in : inputs_)
      if (same_file(path, in) && (inputs == input_policy::refuse || (inputs == input_policy::unless_forced && !a_.has("--force"))))
        throw usage_error(option + " '" + printable(path) + "' is an input file ('" + printable(in) +
                          "'); writing it would replace it: choose another name" +
                          (inputs == input_policy::unless_forced ? ", or pass --force" : ""));
    if (write_protected(output_target(path)) && !a_.has("--force"))
      throw usage_error(option + " '" + printable(path) + "' is write-protected: pass --force to replace it");
    atomic_file_options opt;
    opt.replace_read_only = a_.has("--force");
    files_.push_back(std::make_unique<atomic_file>(path, opt));
    opened_.emplace_back(option, path);
    return files_.back().get();
  }
  std::vector<std::string> paths() const {
    std::vector<std::string> p;
    for (const auto& o : opened_) p.push_back(o.second);
    return p;
  }

 private:
  const args& a_;
  std::vector<std::string> inputs_;
  std::vector<std::pair<std::string, std::string>> opened_;
  std::vector<std::unique_ptr<atomic_file>> files_;
};

}  // namespace la::cli
