// Storage of blocks that left the mesh (split parents, merged children, blocks sent away), kept
// for the blocks made next. Every block is a mapping of its own (see run.cpp), so a new one
// costs a page fault per 4 KiB on first touch: making refined children from fresh storage spent
// most of a refinement step in the kernel, while recycled storage is already mapped.
//
// The pool only ever holds storage the rank had in use at one time, so it never raises the
// peak memory of a run; it keeps that peak mapped instead of giving it back between steps.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "stencil/block.hpp"

namespace miniamr::stencil {

class BlockPool {
 public:
  // A block of `shape` whose values are indeterminate: spare storage when there is some, else
  // fresh. The caller writes every cell before any is read (ghosts included).
  Block take(const BlockShape& shape) {
    while (!spare_.empty()) {
      Block b = std::move(spare_.back());
      spare_.pop_back();
      if (b.shape() == shape) return b;  // storage of another shape is simply freed
    }
    return Block::uninitialized(shape);
  }

  // Keeps b's storage for a later take(); b is left empty. An empty block adds nothing.
  void give(Block& b) {
    if (!b.empty()) spare_.push_back(std::move(b));
    b = Block();
  }

  std::size_t size() const { return spare_.size(); }
  // Frees every spare block.
  void clear() { spare_.clear(); }

 private:
  std::vector<Block> spare_;
};

}  // namespace miniamr::stencil
