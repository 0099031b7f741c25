// Block storage in slabs of 2 MiB-aligned memory that the kernel may back with transparent huge
// pages. A block of 40 variables of 10^3 cells is 320 KB; as its own mapping (what malloc gives
// an allocation that size) it is 80 pages of 4 KiB, each a fault on first touch, and on a virtual
// machine each also a fault of the host's: storage written for the first time moved 0.58 GB/s
// there as a mapping per block and 12.7 GB/s from slabs (BM_FreshBlockStorage; refinement
// writes every new block once, docs/performance.md). A slab holds several blocks of one size, so
// that a huge page is filled by blocks, not by the padding of one; a slab whose blocks are all
// freed is returned to the system (one empty slab of each size and kind of page is kept for the
// next refinement step).
#pragma once

#include <cstddef>

namespace miniamr::stencil {

// AddressSanitizer checks heap storage only: its builds keep blocks on the heap.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kBlockArena = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kBlockArena = false;
#else
inline constexpr bool kBlockArena = true;
#endif
#else
inline constexpr bool kBlockArena = true;
#endif

// Storage smaller than a page stays on the heap, whose free lists already reuse it in place.
// A block of a page or more comes from a slab: from the heap, a fresh one of one variable of
// 10^3 cells (8 KB) cost an madvise and a fault or two, and the thousand that a moving sphere's
// migrations take on one rank made both ranks wait about a millisecond (moving_sphere-ci).
inline constexpr std::size_t kSlabMinBytes = std::size_t(4) << 10;
inline constexpr std::size_t kHugePageBytes = std::size_t(2) << 20;

// The pages of a slab. Huge ones make first touch cheapest, a huge page at a time; small ones
// for storage mapped piece by piece while a rank waits for messages (BlockPool::map_ahead), whose
// first piece of a huge page would map all 2 MiB of it and keep the rank from its messages
// longer than they take.
enum class Pages : unsigned char { kHuge, kSmall };

// Whether storage of n doubles comes from slabs; smaller storage comes from the heap
// (aligned_doubles.hpp) and goes back with free_aligned.
constexpr bool in_slabs(std::size_t n) {
  return kBlockArena && n * sizeof(double) >= kSlabMinBytes;
}

// n doubles on a 64-byte boundary, uninitialised, pages not necessarily mapped (map_pages);
// null when there is no memory. Thread-safe.
double* block_storage_or_null(std::size_t n, Pages pages = Pages::kHuge);
// Gives back storage of block_storage_or_null (null is ignored): slab storage, whose slab it
// finds by address, else heap storage. Thread-safe.
void free_block_storage(double* p);

// What the slabs hold now (for tests).
struct SlabUsage {
  std::size_t slabs = 0;   // slabs mapped, the kept empty ones included
  std::size_t bytes = 0;   // their bytes
  std::size_t blocks = 0;  // storage handed out from them and not yet given back
};
SlabUsage slab_usage();

// How storage of `bytes` is laid out: slot bytes (a multiple of 64), slab bytes (a multiple of
// kHugePageBytes) and slots per slab, chosen so that a slab wastes at most 1/16 of itself.
struct SlabLayout {
  std::size_t slot = 0, slab = 0, slots = 0;
};
SlabLayout slab_layout(std::size_t bytes);

}  // namespace miniamr::stencil
