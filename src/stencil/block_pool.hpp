// Storage of blocks that left the mesh (split parents, merged children, blocks sent away), kept
// for the blocks made next. Every block is a mapping of its own (see run.cpp), so a new one
// costs a page fault per 4 KiB on first touch: making refined children from fresh storage spent
// most of a refinement step in the kernel, while recycled storage is already mapped.
//
// A growing mesh still needs fresh storage at every refinement step. The pool can map it
// ahead, a block at a time, while the rank would otherwise wait for messages (map_ahead):
// after each step the driver asks for as many spare blocks as that step drew (expect), on the
// guess that the next step changes the mesh as much.
//
// Recycled storage never raises the peak memory of a run, it keeps that peak mapped instead of
// giving it back between steps; storage mapped ahead raises it by at most one step's growth.
#pragma once

#include <algorithm>
#include <cstddef>
#include <new>
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
      low_ = std::min(low_, spare_.size());
      if (b.shape() == shape) return b;  // storage of another shape is simply freed
    }
    ++made_;
    ++made_on_take_;
    return Block::uninitialized(shape);
  }

  // Keeps b's storage for a later take(); b is left empty. An empty block adds nothing.
  void give(Block& b) {
    if (!b.empty()) spare_.push_back(std::move(b));
    b = Block();
  }

  // The most blocks the take() calls since the last expect() drew at one time: spare ones and
  // fresh ones.
  std::size_t drawn() const { return base_ - low_ + made_; }
  // Asks map_ahead() to hold `n` spare blocks, and starts measuring the draw again.
  void expect(std::size_t n) {
    wanted_ = n;
    base_ = low_ = spare_.size();
    made_ = 0;
  }
  // Maps one more spare block of `shape` if fewer than expected are held; false when none was
  // needed. One block at a time, so a caller polling for messages reacts within one mapping.
  // Only a head start: when memory runs out it stops, and refinement meets the shortage with
  // its own allocations and errors.
  bool map_ahead(const BlockShape& shape) {
    if (spare_.size() >= wanted_) return false;
    try {
      spare_.push_back(Block::uninitialized(shape));
    } catch (const std::bad_alloc&) {
      wanted_ = 0;
      return false;
    }
    ++base_;  // as if it had been held at expect()
    ++low_;
    ++mapped_ahead_;
    return true;
  }
  // Blocks of fresh storage in all: mapped ahead, and mapped by take() for want of a spare one.
  std::size_t mapped_ahead() const { return mapped_ahead_; }
  std::size_t mapped_on_take() const { return made_on_take_; }

  std::size_t size() const { return spare_.size(); }
  // Frees every spare block, and expects none.
  void clear() {
    spare_.clear();
    expect(0);
  }

 private:
  std::vector<Block> spare_;
  std::size_t wanted_ = 0;
  std::size_t base_ = 0;  // spare blocks held at the last expect()
  std::size_t low_ = 0;   // the fewest held since
  std::size_t made_ = 0;  // fresh blocks made since
  std::size_t mapped_ahead_ = 0;
  std::size_t made_on_take_ = 0;
};

}  // namespace miniamr::stencil
