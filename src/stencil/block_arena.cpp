#include "stencil/block_arena.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <sys/mman.h>

#include "stencil/aligned_doubles.hpp"

namespace miniamr::stencil {

namespace {

std::size_t round_up(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

// Huge-page-aligned anonymous memory of `bytes` (a multiple of kHugePageBytes) with pages of
// `pages`; 0 when there is none. mmap aligns to a page only, so the mapping is made one huge
// page longer and trimmed.
std::uintptr_t map_slab(std::size_t bytes, Pages pages) {
  void* raw = mmap(nullptr, bytes + kHugePageBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return 0;
  const auto at = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t base = round_up(at, kHugePageBytes);
  if (base > at) munmap(raw, base - at);
  const std::uintptr_t end = base + bytes, mapped_end = at + bytes + kHugePageBytes;
  if (mapped_end > end) munmap(reinterpret_cast<void*>(end), mapped_end - end);
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
  // Only a hint: without transparent huge pages (or with none free) the slab has small pages.
  (void)madvise(reinterpret_cast<void*>(base), bytes,
                pages == Pages::kHuge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#else
  (void)pages;
#endif
  return base;
}

class Arena {
 public:
  double* allocate(std::size_t bytes, Pages pages) {
    const SlabLayout layout = slab_layout(bytes);
    const std::lock_guard lock(mutex_);
    Class& c = classes_[{layout.slot, pages}];
    if (c.open.empty() && !add_slab(c, layout, pages)) return nullptr;
    const std::uintptr_t base = *c.open.begin();  // the lowest: blocks gather in few slabs
    Slab& s = slabs_.at(base);
    const std::uint32_t slot = s.free.back();
    s.free.pop_back();
    ++s.used;
    ++blocks_;
    if (s.free.empty()) c.open.erase(base);
    if (c.empty == base) c.empty.reset();
    return reinterpret_cast<double*>(base + slot * s.layout.slot);
  }

  // False when p is not slab storage.
  bool free(double* p) {
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    const std::lock_guard lock(mutex_);
    auto it = slabs_.upper_bound(at);
    if (it == slabs_.begin()) return false;
    --it;
    const std::uintptr_t base = it->first;
    Slab& s = it->second;
    if (at >= base + s.layout.slab) return false;
    s.free.push_back(std::uint32_t((at - base) / s.layout.slot));
    --s.used;
    --blocks_;
    Class& c = classes_.at({s.layout.slot, s.pages});
    c.open.insert(base);
    if (s.used > 0) return true;
    // Empty: kept while it is the only empty slab of its size (a mesh that coarsens and refines
    // again at the next step takes it back without faulting it in anew), else returned.
    if (!c.empty) {
      c.empty = base;
      return true;
    }
    c.open.erase(base);
    munmap(reinterpret_cast<void*>(base), s.layout.slab);
    slabs_.erase(it);
    return true;
  }

  SlabUsage usage() {
    const std::lock_guard lock(mutex_);
    SlabUsage u{slabs_.size(), 0, blocks_};
    for (const auto& [base, s] : slabs_) u.bytes += s.layout.slab;
    return u;
  }

 private:
  struct Slab {
    SlabLayout layout;
    Pages pages = Pages::kHuge;
    std::vector<std::uint32_t> free;  // free slots; the next one taken at the back
    std::size_t used = 0;
  };
  struct Class {
    std::set<std::uintptr_t> open;        // slabs with a free slot, by address
    std::optional<std::uintptr_t> empty;  // the one empty slab kept
  };

  // Maps a slab for class c; false when there is no memory (bookkeeping that cannot be
  // allocated gives its mapping back).
  bool add_slab(Class& c, const SlabLayout& layout, Pages pages) {
    Slab s{layout, pages, {}, 0};
    // Popped from the back: the slab fills from its start.
    for (std::size_t i = layout.slots; i-- > 0;) s.free.push_back(std::uint32_t(i));
    const std::uintptr_t base = map_slab(layout.slab, pages);
    if (base == 0) return false;
    try {
      slabs_.emplace(base, std::move(s));
      c.open.insert(base);
    } catch (const std::bad_alloc&) {
      slabs_.erase(base);
      munmap(reinterpret_cast<void*>(base), layout.slab);
      return false;
    }
    return true;
  }
  std::mutex mutex_;
  std::map<std::uintptr_t, Slab> slabs_;  // by base address: a pointer finds its slab
  std::map<std::pair<std::size_t, Pages>, Class> classes_;  // by slot size and pages
  std::size_t blocks_ = 0;
};

// Storage outlives every owner of blocks (meshes, pools, checkpoints and tests make and free
// them), as the heap does: one arena per process, never destroyed, so that no block freed
// during the process's exit finds it gone.
Arena& arena() {
  static Arena* const a = new Arena;
  return *a;
}

}  // namespace

SlabLayout slab_layout(std::size_t bytes) {
  const std::size_t slot = round_up(std::max<std::size_t>(bytes, 1), 64);
  // The fewest huge pages that waste at most 1/16 of themselves; past 16 of them, one slot.
  for (std::size_t pages = 1; pages <= 16; ++pages) {
    const std::size_t slab = pages * kHugePageBytes;
    const std::size_t slots = slab / slot;
    if (slots > 0 && (slab - slots * slot) * 16 <= slab) return {slot, slab, slots};
  }
  return {slot, round_up(slot, kHugePageBytes), 1};
}

double* block_storage_or_null(std::size_t n, Pages pages) {
  if (!in_slabs(n)) return aligned_doubles_or_null(n);
  try {
    return arena().allocate(n * sizeof(double), pages);
  } catch (const std::bad_alloc&) {  // the arena's own bookkeeping
    return nullptr;
  }
}

void free_block_storage(double* p) {
  if (p == nullptr) return;
  if (!kBlockArena || !arena().free(p)) free_aligned(p);
}

SlabUsage slab_usage() {
  return kBlockArena ? arena().usage() : SlabUsage{};
}

}  // namespace miniamr::stencil
