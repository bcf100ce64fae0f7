// Writing a file so that a failed run loses nothing: the text goes to a temporary file in
// the target's directory, is flushed to disk and checked, and only then renamed over the
// target. On any failure (disk full, I/O error, an exception before commit) the target is
// untouched and the temporary is removed.
#pragma once

#include <string>
#include <string_view>

namespace la {

class atomic_file {
 public:
  /// Creates the temporary next to `path` at once, so a target that cannot be written (no
  /// such directory, no permission) fails here, before any long computation. Targets that
  /// exist but are not regular files (/dev/stdout, /dev/null, pipes) are written directly.
  explicit atomic_file(std::string path);
  ~atomic_file();  // removes the temporary unless committed; never throws
  atomic_file(const atomic_file&) = delete;
  atomic_file& operator=(const atomic_file&) = delete;

  /// Appends text (buffered); throws la::io_error on failure.
  void write(std::string_view text);
  /// Flushes, syncs and closes the temporary, then renames it over the target; throws
  /// la::io_error (the target untouched) on failure.
  void commit();
  const std::string& path() const noexcept { return path_; }

 private:
  void fail(const std::string& what);
  std::string path_, tmp_;
  int fd_ = -1;
  bool direct_ = false, committed_ = false;
};

/// The file's device and inode are those of `other` (both exist): the same file under any
/// name, link or path.
bool same_file(const std::string& a, const std::string& b) noexcept;

}  // namespace la
