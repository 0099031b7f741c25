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
#include <cstdint>
#include <limits>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include "stencil/block.hpp"
#include "stencil/pages.hpp"

namespace miniamr::stencil {

class BlockPool {
 public:
  // Where fresh storage comes from: by default each block maps its own; a pool given a maker
  // takes its blocks from it and maps none ahead. A maker makes storage that all simulated
  // ranks share (comm/shared_storage.hpp), for blocks whose values nobody reads.
  using Maker = Block (*)(const BlockShape&);
  BlockPool() = default;
  explicit BlockPool(Maker maker) : make_(maker) {}
  bool values_unread() const { return make_ != nullptr; }

  // A block of the pool's storage whose values are indeterminate, neither drawn from the spare
  // blocks nor counted: for the mesh's first blocks.
  Block make(const BlockShape& shape) const {
    return make_ != nullptr ? make_(shape) : Block::uninitialized(shape);
  }

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
    return make(shape);
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
  // Whether map_ahead() has a block to map, or to finish mapping, for a rank whose mesh holds
  // `in_mesh` blocks.
  bool wants_more(std::size_t in_mesh) const {
    if (make_ != nullptr) return false;
    return mapping_.has_value() || (spare_.size() < wanted_ && in_mesh + spare_.size() < cap_);
  }
  // Maps the next piece (kPiece bytes) of a spare block of `shape` if wants_more(in_mesh);
  // false when it did not. Piece by piece, so that a caller polling for messages reacts within
  // one piece (about 20 us). Only a head start: when the system has no memory for it, it stops
  // asking, and refinement meets the shortage with its own allocations and errors.
  bool map_ahead(const BlockShape& shape, std::size_t in_mesh) {
    if (!wants_more(in_mesh)) return false;
    if (!mapping_) {
      mapping_ = Block::reserved(shape);
      mapped_bytes_ = 0;
      if (!mapping_) return stop();
    }
    const auto at = reinterpret_cast<std::uintptr_t>(mapping_->data());
    const std::size_t bytes = mapping_->shape().doubles() * sizeof(double);
    // Pieces end on page boundaries, so that no page is left between two of them.
    const std::size_t page = page_bytes();
    const std::size_t piece = std::max(kPiece, page);
    const std::size_t end = std::min(bytes, (at + mapped_bytes_ + piece) / page * page - at);
    if (!map_pages(mapping_->data() + mapped_bytes_ / sizeof(double), end - mapped_bytes_))
      return stop();
    mapped_bytes_ = end;
    if (mapped_bytes_ < bytes) return true;
    try {
      spare_.push_back(std::move(*mapping_));
    } catch (const std::bad_alloc&) {
      return stop();
    }
    mapping_.reset();
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
    stop();
    expect(0);
  }

 private:
  static constexpr std::size_t kPiece = 64 * 1024;

  // Gives up mapping ahead until the next expect().
  bool stop() {
    mapping_.reset();
    wanted_ = 0;
    return false;
  }

  Maker make_ = nullptr;
  std::vector<Block> spare_;
  std::optional<Block> mapping_;  // the block map_ahead() is mapping, piece by piece
  std::size_t mapped_bytes_ = 0;  // how much of it is mapped
  std::size_t wanted_ = 0;
  std::size_t cap_ = std::numeric_limits<std::size_t>::max();
  std::size_t base_ = 0;  // spare blocks held at the last expect()
  std::size_t low_ = 0;   // the fewest held since
  std::size_t made_ = 0;  // fresh blocks made since
  std::size_t mapped_ahead_ = 0;
  std::size_t mapped_on_take_ = 0;
};

}  // namespace miniamr::stencil
