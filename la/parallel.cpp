#include "parallel.hpp"

#include <algorithm>
#include <cstdlib>

namespace la {

int thread_count(int requested) noexcept {
  if (requested > 0) return std::min(requested, 256);
  if (const char* env = std::getenv("LA_THREADS")) {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v >= 1) return static_cast<int>(std::min(v, 256L));
  }
  return std::max(1, std::min(256, static_cast<int>(std::thread::hardware_concurrency())));
}

}  // namespace la
