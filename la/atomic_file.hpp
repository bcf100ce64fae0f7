// Writing a file so that a failed run loses nothing: the text goes to a temporary file in
// the target's directory, is flushed to disk and checked, and only then renamed over the
// target. On any failure (disk full, I/O error, an exception before commit) the target is
// untouched and the temporary is removed.
#pragma once

#include <string>
#include <string_view>

namespace la {

struct atomic_file_options {
  /// Replace a target that has no write permission (mode 0444, say); by default it is
  /// refused, as cp refuses it.
  bool replace_read_only = false;
};

class atomic_file {
 public:
  /// Creates the temporary next to the target at once, so a target that cannot be written
  /// (no such directory, no permission, write-protected) fails here, before any long
  /// computation. A symbolic link is followed to the file it names, existing or not: that
  /// file is written and the link stays. Targets that exist but are not regular files
  /// (/dev/stdout, /dev/null, pipes) are written directly.
  explicit atomic_file(std::string path, atomic_file_options opt = {});
  ~atomic_file();  // removes the temporary unless committed; never throws
  atomic_file(const atomic_file&) = delete;
  atomic_file& operator=(const atomic_file&) = delete;

  /// Appends text (buffered); throws la::io_error on failure.
  void write(std::string_view text);
  /// Flushes, syncs and closes the temporary, then renames it over the target; throws
  /// la::io_error (the target untouched) on failure.
  void commit();
  /// The file written (symbolic links followed).
  const std::string& path() const noexcept { return path_; }
  /// Whether the target is written directly (a device or pipe, such as /dev/stdout).
  bool direct() const noexcept { return direct_; }

  /// Removes the temporary of every atomic_file not yet committed or destroyed. Safe to
  /// call from a signal handler (it only calls unlink), so a program can clean up on
  /// SIGINT or SIGTERM; install_cleanup_on_signals() does that.
  static void remove_temporaries() noexcept;
  /// Installs handlers for SIGINT, SIGTERM, SIGHUP and SIGQUIT that remove the
  /// temporaries, then end the process by the same signal (as if unhandled).
  static void install_cleanup_on_signals();

 private:
  void fail(const std::string& what);
  std::string path_, tmp_;
  int fd_ = -1;
  bool direct_ = false, committed_ = false;
};

/// The file's device and inode are those of `other` (both exist): the same file under any
/// name, link or path.
bool same_file(const std::string& a, const std::string& b) noexcept;

/// The file that writing to `path` writes: symbolic links followed to the last name, which
/// need not exist, made absolute. Two outputs are the same file when their targets are
/// the same file (same_file) or, not existing yet, the same name.
std::string output_target(const std::string& path);
bool same_output(const std::string& a, const std::string& b);

/// The file exists and has no write permission for anyone (mode 0444, say), or the
/// process may not write it.
bool write_protected(const std::string& path) noexcept;

}  // namespace la
