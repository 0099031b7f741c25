#include "stencil/pages.hpp"

#include <cerrno>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace miniamr::stencil {

bool map_pages(void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  // Whole pages inside the allocation only: its neighbours' pages are not ours to touch.
  const auto page = std::uintptr_t(page_bytes());
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = (at + page - 1) / page * page;
  const std::uintptr_t last = (at + bytes) / page * page;
  // A failure only leaves the faults to the first writes; an older kernel's (EINVAL) says
  // nothing about memory.
  if (last > first &&
      madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE) != 0)
    return errno != ENOMEM && errno != EFAULT;
#else
  (void)p;
  (void)bytes;
#endif
  return true;
}

std::size_t page_bytes() {
#if defined(__linux__)
  return std::size_t(sysconf(_SC_PAGESIZE));
#else
  return 4096;
#endif
}

}  // namespace miniamr::stencil
