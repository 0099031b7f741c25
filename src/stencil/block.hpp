// What a block holds: num_vars variables of (nx+2)(ny+2)(nz+2) cells (one ghost layer). Each
// variable's cells are contiguous, z fastest, and start on a 64-byte boundary so inner loops
// vectorise; blocks are value types that own their storage (in huge-page slabs: block_arena.hpp;
// no preallocated pool, though the mesh recycles the storage of blocks that leave it:
// block_pool.hpp), or adopt storage made elsewhere with the way to give it back (adopt).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <utility>

#include "stencil/aligned_doubles.hpp"
#include "stencil/block_arena.hpp"
#include "stencil/pages.hpp"

namespace miniamr::stencil {

struct BlockShape {
  int nx = 0, ny = 0, nz = 0;  // interior cells per direction
  int num_vars = 0;

  constexpr int sx() const { return nx + 2; }
  constexpr int sy() const { return ny + 2; }
  constexpr int sz() const { return nz + 2; }
  // Stride between two x planes and two y rows of one variable.
  constexpr std::size_t plane() const { return std::size_t(sy()) * std::size_t(sz()); }
  constexpr std::size_t row() const { return std::size_t(sz()); }
  constexpr std::size_t cells() const { return std::size_t(sx()) * plane(); }
  // Distance between two variables: cells() rounded up to a cache line of doubles.
  constexpr std::size_t var_stride() const { return (cells() + 7) / 8 * 8; }
  constexpr std::size_t doubles() const { return var_stride() * std::size_t(num_vars); }
  constexpr std::size_t interior_cells() const {
    return std::size_t(nx) * std::size_t(ny) * std::size_t(nz);
  }
  // Offset of cell (i,j,k) inside one variable; 0 and n+1 are ghosts.
  constexpr std::size_t at(int i, int j, int k) const {
    return std::size_t(i) * plane() + std::size_t(j) * row() + std::size_t(k);
  }
  friend bool operator==(const BlockShape&, const BlockShape&) = default;
};

class Block {
 public:
  Block() = default;
  explicit Block(const BlockShape& shape) : shape_(shape), data_(allocate(shape.doubles())) {
    std::uninitialized_fill_n(data_.get(), shape.doubles(), 0.0);
  }
  Block(const Block& o) : Block(o.shape_) {
    std::copy_n(o.data_.get(), shape_.doubles(), data_.get());
  }
  Block& operator=(const Block& o) {
    if (this != &o) *this = Block(o);
    return *this;
  }
  // A block whose values are indeterminate, for a caller that writes every cell before any is
  // read: it saves a pass over storage that is about to be overwritten.
  static Block uninitialized(const BlockShape& shape) { return Block(shape, Uninitialized{}); }
  // The same with none of its pages mapped yet (map_pages), or nothing when there is no
  // address space for it: for storage made ahead of need, where running short is no error. Its
  // pages are small (block_arena.hpp): it is mapped piece by piece between polls for messages.
  static std::optional<Block> reserved(const BlockShape& shape) {
    Storage p = unmapped(shape.doubles(), Pages::kSmall);
    if (p == nullptr) return std::nullopt;
    return Block(shape, std::move(p));
  }
  // A block over storage allocated elsewhere (shape.doubles() of them, 64-byte aligned), which
  // `free` gives back; its values are indeterminate.
  using Free = void (*)(double*);
  static Block adopt(const BlockShape& shape, double* data, Free free) {
    return Block(shape, Storage(data, free));
  }
  Block(Block&&) noexcept = default;
  Block& operator=(Block&&) noexcept = default;

  const BlockShape& shape() const { return shape_; }
  std::span<double> var(int v) {
    return {data_.get() + std::size_t(v) * shape_.var_stride(), shape_.cells()};
  }
  std::span<const double> var(int v) const {
    return {data_.get() + std::size_t(v) * shape_.var_stride(), shape_.cells()};
  }
  double* data() { return data_.get(); }
  const double* data() const { return data_.get(); }
  bool empty() const { return data_ == nullptr; }

 private:
  struct Uninitialized {};
  using Storage = std::unique_ptr<double[], Free>;

  Block(const BlockShape& shape, Uninitialized) : shape_(shape), data_(allocate(shape.doubles())) {}
  Block(const BlockShape& shape, Storage data) : shape_(shape), data_(std::move(data)) {}

  // Storage for n doubles with none of its pages mapped yet; null when there is none. Heap
  // storage goes straight back to the heap, without looking for a slab.
  static Storage unmapped(std::size_t n, Pages pages = Pages::kHuge) {
    return Storage(block_storage_or_null(n, pages),
                   in_slabs(n) ? &free_block_storage : &free_aligned);
  }
  static Storage allocate(std::size_t n) {
    Storage p = unmapped(n);
    if (p == nullptr) throw std::bad_alloc();
    (void)map_pages(p.get(), n * sizeof(double));  // all of it is written right away
    return p;
  }

  BlockShape shape_{};
  Storage data_{nullptr, &free_block_storage};
};

}  // namespace miniamr::stencil
