#include <la/atomic_file.hpp>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <la/error.hpp>

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

// The temporaries not yet committed, for remove_temporaries(): slots a signal handler can
// read without locks (each holds a malloc'ed copy of a name, or null).
constexpr int max_pending = 64;
std::atomic<char*> pending[max_pending];

void add_pending(const std::string& tmp) noexcept {
  char* name = ::strdup(tmp.c_str());
  if (!name) return;
  for (auto& slot : pending) {
    char* expected = nullptr;
    if (slot.compare_exchange_strong(expected, name)) return;
  }
  std::free(name);  // more than max_pending open at once: the destructor still removes it
}

void drop_pending(const std::string& tmp) noexcept {
  for (auto& slot : pending) {
    char* name = slot.load();
    if (name && tmp == name && slot.compare_exchange_strong(name, nullptr)) {
      std::free(name);
      return;
    }
  }
}

extern "C" void remove_and_reraise(int sig) {
  atomic_file::remove_temporaries();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

std::string absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  std::vector<char> cwd(4096);
  if (!::getcwd(cwd.data(), cwd.size())) return path;
  return std::string(cwd.data()) + "/" + path;
}
}  // namespace

std::string output_target(const std::string& path) {
  std::string p = absolute(path);
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) break;
    std::vector<char> buf(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 4095) + 1);
    const ssize_t n = ::readlink(p.c_str(), buf.data(), buf.size());
    if (n < 0) break;
    const std::string link(buf.data(), static_cast<std::size_t>(n));
    p = !link.empty() && link[0] == '/' ? link : dir_of(p) + "/" + link;
  }
  // The directory's own links resolved, so that two spellings of one name compare equal.
  const std::string dir = dir_of(p), base = p.substr(p.find_last_of('/') + 1);
  if (char* real = ::realpath(dir.c_str(), nullptr)) {
    std::string r = real;
    std::free(real);
    return (r == "/" ? "" : r) + "/" + base;
  }
  return p;
}

bool same_output(const std::string& a, const std::string& b) {
  if (same_file(a, b)) return true;
  return output_target(a) == output_target(b);
}

bool write_protected(const std::string& path) noexcept {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  return (st.st_mode & 0222) == 0 || ::access(path.c_str(), W_OK) != 0;
}

void atomic_file::remove_temporaries() noexcept {
  for (auto& slot : pending)
    if (char* name = slot.load()) ::unlink(name);
}

void atomic_file::install_cleanup_on_signals() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    struct sigaction sa {};
    sa.sa_handler = remove_and_reraise;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    if (::sigaction(sig, &sa, nullptr) != 0)
      throw io_error(std::string("cannot install a signal handler: ") + std::strerror(errno));
  }
}

atomic_file::atomic_file(std::string path, atomic_file_options opt) : path_(std::move(path)) {
  if (path_.empty()) throw io_error("no output file name given");
  struct stat st {};
  const bool exists = ::stat(path_.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {  // a device or pipe: nothing to replace
    direct_ = true;
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) throw io_error("cannot open '" + printable(path_) + "' for writing: " + std::strerror(errno));
    return;
  }
  if (exists && S_ISDIR(st.st_mode)) throw io_error("'" + printable(path_) + "' is a directory");
  // Through a symbolic link (dangling or not) the file it names is written; the link stays.
  const std::string given = path_;
  path_ = output_target(path_);
  if (exists && !opt.replace_read_only && write_protected(path_))
    throw io_error("'" + printable(given) + "' is write-protected; it was not replaced");
  // The temporary's name is recorded for remove_temporaries() before the file is created, so
  // that a stop signal handled on any thread at any moment finds it (holding the signals back
  // on this thread alone left a window: another thread, a worker's or the CUDA driver's, could
  // take the signal between the file's creation and its record, and the temporary stayed).
  static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  static std::atomic<unsigned long long> serial{0};
  unsigned long long seed = static_cast<unsigned long long>(::getpid()) * 0x9E3779B97F4A7C15ull ^
                            static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(this)) ^
                            (serial.fetch_add(1) << 32) ^ static_cast<unsigned long long>(::time(nullptr));
  int err = 0;
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    std::string name = path_ + ".la-tmp-";
    for (int c = 0; c < 6; ++c) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      name += alphabet[(seed >> 33) % 62];
    }
    add_pending(name);
    fd_ = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    err = errno;
    if (fd_ >= 0) {
      tmp_ = name;
    } else {
      drop_pending(name);
      if (err != EEXIST) break;
    }
  }
  if (fd_ < 0)
    throw io_error("cannot create a file in '" + printable(dir_of(path_)) + "' to write '" + printable(path_) +
                   "': " + std::strerror(err));
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
  if (!tmp_.empty()) drop_pending(tmp_);
}

void atomic_file::fail(const std::string& what) {
  const int err = errno;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) ::unlink(tmp_.c_str()), drop_pending(tmp_);
  tmp_.clear();
  throw io_error(what + " '" + printable(path_) + "': " + std::strerror(err) + (direct_ ? "" : " (the file was not changed)"));
}

void atomic_file::write(std::string_view text) {
  if (fd_ < 0) throw io_error("'" + printable(path_) + "' is already closed");
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
  if (fd_ < 0) throw io_error("'" + printable(path_) + "' is already closed");
  if (!direct_ && ::fsync(fd_) != 0) fail("error flushing");
  const int fd = fd_;
  fd_ = -1;  // closed below, whatever close() says
  if (::close(fd) != 0) fail("error closing");
  if (!direct_ && ::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp_.c_str());
    drop_pending(tmp_);
    tmp_.clear();
    throw io_error("cannot replace '" + printable(path_) + "': " + std::strerror(err) + " (the file was not changed)");
  }
  committed_ = true;
  if (!tmp_.empty()) drop_pending(tmp_);
  tmp_.clear();
}

bool same_file(const std::string& a, const std::string& b) noexcept {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace la
