// Storage of blocks that left the mesh (split parents, merged children, blocks sent away), kept
// for the blocks made next. Every block is a mapping of its own (see run.cpp), so a new one
// costs a page fault per 4 KiB on first touch: making refined children from fresh storage spent
// most of a refinement step in the kernel, while recycled storage is already mapped.
//
// A growing mesh still needs fresh storage at every refinement step. The pool can map it
// ahead, a block at a time, while the rank would otherwise wait for messages (map_ahead):
// after each step the driver asks for as many spare blocks as the pool lent at its deepest
// since the step before (expect), on the guess that the next interval is like the last.
//
// Recycled storage never raises the peak memory of a run, it keeps that peak mapped instead of
// giving it back between steps. Storage mapped ahead raises it by at most one interval's draw
// (blocks made, plus blocks received before those sent away were freed).
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <new>
#include <optional>
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
    ++mapped_on_take_;
    return Block::uninitialized(shape);
  }

  // Keeps b's storage for a later take(); b is left empty. An empty block adds nothing.
  void give(Block& b) {
    if (!b.empty()) spare_.push_back(std::move(b));
    b = Block();
  }

  // The most blocks the take() calls since the last expect() had out at one time: spare ones
  // and fresh ones.
  std::size_t drawn() const { return base_ - low_ + made_; }
  // Asks map_ahead() for `n` spare blocks, with at most `cap` blocks held in all (in the mesh
  // and spare), and starts measuring the draw again.
  void expect(std::size_t n, std::size_t cap = std::numeric_limits<std::size_t>::max()) {
    wanted_ = n;
    cap_ = cap;
    base_ = low_ = spare_.size();
    made_ = 0;
  }
  // Whether map_ahead() would map a block for a rank whose mesh holds `in_mesh` blocks.
  bool wants_more(std::size_t in_mesh) const {
    return spare_.size() < wanted_ && in_mesh + spare_.size() < cap_;
  }
  // Maps one more spare block of `shape` if wants_more(in_mesh); false when it did not. One
  // block at a time, so that a caller polling for messages reacts within one mapping. Only a
  // head start: when the system has no memory for it, it stops asking, and refinement meets
  // the shortage with its own allocations and errors.
  bool map_ahead(const BlockShape& shape, std::size_t in_mesh) {
    if (!wants_more(in_mesh)) return false;
    std::optional<Block> b = Block::mapped(shape);
    bool kept = b.has_value();
    if (kept) {
      try {
        spare_.push_back(std::move(*b));
      } catch (const std::bad_alloc&) {
        kept = false;
      }
    }
    if (!kept) {
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
  std::size_t mapped_on_take() const { return mapped_on_take_; }

  std::size_t size() const { return spare_.size(); }
  // Frees every spare block, and expects none.
  void clear() {
    spare_.clear();
    expect(0);
  }

 private:
  std::vector<Block> spare_;
  std::size_t wanted_ = 0;
  std::size_t cap_ = std::numeric_limits<std::size_t>::max();
  std::size_t base_ = 0;  // spare blocks held at the last expect()
  std::size_t low_ = 0;   // the fewest held since
  std::size_t made_ = 0;  // fresh blocks made since
  std::size_t mapped_ahead_ = 0;
  std::size_t mapped_on_take_ = 0;
};

}  // namespace miniamr::stencil
