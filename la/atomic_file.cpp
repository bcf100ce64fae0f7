#include "atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.hpp"

namespace la {
namespace {
/// The umask, read without changing it (umask(2) would, for every thread): /proc/self/status
/// has it since Linux 4.7; otherwise the usual 022.
mode_t process_umask() {
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    unsigned mask = 0;
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "Umask: %o", &mask) == 1) {
        std::fclose(f);
        return static_cast<mode_t>(mask);
      }
    std::fclose(f);
  }
  return 022;
}

std::string dir_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}
}  // namespace

atomic_file::atomic_file(std::string path) : path_(std::move(path)) {
  if (path_.empty()) throw io_error("no output file name given");
  struct stat st {};
  const bool exists = ::stat(path_.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {  // a device or pipe: nothing to replace
    direct_ = true;
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) throw io_error("cannot open '" + path_ + "' for writing: " + std::strerror(errno));
    return;
  }
  if (exists && S_ISDIR(st.st_mode)) throw io_error("'" + path_ + "' is a directory");
  // Through a symbolic link, the file it names is replaced, not the link.
  if (char* real = exists ? ::realpath(path_.c_str(), nullptr) : nullptr) {
    path_ = real;
    std::free(real);
  }
  std::string pattern = path_ + ".la-tmp-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  fd_ = ::mkostemp(buf.data(), O_CLOEXEC);
  if (fd_ < 0)
    throw io_error("cannot create a file in '" + dir_of(path_) + "' to write '" + path_ + "': " + std::strerror(errno));
  tmp_ = buf.data();
  // The new file gets the target's permissions, or the usual ones for a new file.
  mode_t mode = 0;
  if (exists) {
    mode = st.st_mode & 07777;
  } else {
    mode = 0666 & ~process_umask();
  }
  (void)::fchmod(fd_, mode);
}

atomic_file::~atomic_file() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !tmp_.empty()) ::unlink(tmp_.c_str());
}

void atomic_file::fail(const std::string& what) {
  const int err = errno;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  tmp_.clear();
  throw io_error(what + " '" + path_ + "': " + std::strerror(err) + (direct_ ? "" : " (the file was not changed)"));
}

void atomic_file::write(std::string_view text) {
  if (fd_ < 0) throw io_error("'" + path_ + "' is already closed");
  while (!text.empty()) {
    const ssize_t n = ::write(fd_, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("error writing");
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

void atomic_file::commit() {
  if (fd_ < 0) throw io_error("'" + path_ + "' is already closed");
  if (!direct_ && ::fsync(fd_) != 0) fail("error flushing");
  const int fd = fd_;
  fd_ = -1;  // closed below, whatever close() says
  if (::close(fd) != 0) fail("error closing");
  if (!direct_ && ::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp_.c_str());
    tmp_.clear();
    throw io_error("cannot replace '" + path_ + "': " + std::strerror(err) + " (the file was not changed)");
  }
  committed_ = true;
}

bool same_file(const std::string& a, const std::string& b) noexcept {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace la
