// Arrays of doubles that start on a 64-byte boundary, so that vector loads of a variable's
// first cells are aligned: block storage, compact storage, and the simulation's shared buffer.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

namespace miniamr::stencil {

inline constexpr std::align_val_t kDoublesAlignment{64};

inline void free_aligned(double* p) {
  ::operator delete[](p, kDoublesAlignment);
}
struct AlignedFree {
  void operator()(double* p) const { free_aligned(p); }
};
using AlignedDoubles = std::unique_ptr<double[], AlignedFree>;

// n doubles, uninitialised; throws std::bad_alloc.
inline AlignedDoubles aligned_doubles(std::size_t n) {
  return AlignedDoubles(
      static_cast<double*>(::operator new[](n * sizeof(double), kDoublesAlignment)));
}
// n doubles, uninitialised; null when there is no memory.
inline double* aligned_doubles_or_null(std::size_t n) {
  return static_cast<double*>(
      ::operator new[](n * sizeof(double), kDoublesAlignment, std::nothrow));
}

}  // namespace miniamr::stencil
