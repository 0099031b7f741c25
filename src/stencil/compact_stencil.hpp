// The 7-point sweep of 8^3 interiors stored compact: 512 doubles per variable, cell (i,j,k)
// (0-based) at (i * 8 + j) * 8 + k, each row of eight one cache line. A block's padded storage
// (block.hpp) puts an interior row 8 bytes into an 80-byte row, so most row loads and stores
// span two lines, and a chunk of blocks brings its ghost lines into cache along with it; the
// compact copy is half the bytes. The sweep reads every ghost face from a layer (ghost_layers.hpp:
// its own or a neighbour's compact layer, a packed face, a dense ghost layer that a level change
// was filled into) and makes a row's k-1 and k+1 by shifting the row's register and inserting
// the z ghosts, so it reads no ghost row.
//
// A mapper copies a chunk's variables in (CompactVars::load) before the chunk's stages and back
// (store) after them; in between, the fills and packs read the compact copies (ghost_fill.hpp's
// fill_layer, pack_compact), and level-change ghosts go into dense ghost layers (fill_layer,
// unpack_layer). The additions are
// rows::seven_point's, in its order, and the division and the interior sum the AVX-512 7-point
// kernel's, so values and sums are bitwise those of the padded sweep.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <span>

#include "stencil/aligned_doubles.hpp"
#include "stencil/block.hpp"
#include "stencil/ghost_fill.hpp"
#include "stencil/ghost_layers.hpp"

namespace miniamr::stencil {

inline constexpr int kCompactN = 8;
inline constexpr std::size_t kCompactCells = 512;     // doubles of one compact variable
inline constexpr std::size_t kCompactFaceCells = 64;  // and of one of its faces

// Whether this build has the compact sweep and this machine runs it (it is AVX-512 code).
bool compact_stencil7_supported();

// Blocks of `shape` can be swept compact.
inline bool compact_shape(const BlockShape& shape) {
  return shape.nx == kCompactN && shape.ny == kCompactN && shape.nz == kCompactN;
}

// Sweeps compact variable `u` (64-byte aligned) with its ghost faces read from `layers` and its
// layers copied out where `layers.copy` asks; `scratch` holds at least 128 doubles. Returns the
// new interior sum. Only where compact_stencil7_supported().
double compact_stencil7(double* u, const GhostLayers& layers, std::span<double> scratch);

// compact_layer_place() of an 8^3 variable.
constexpr LayerPlace compact_layer_place(int face, bool own) {
  return compact_layer_place(kCompactN, face, own);
}
// A dense ghost layer of a compact variable's face (ghost_fill.hpp's fill_layer).
inline constexpr LayerPlace kDenseLayerPlace{0, kCompactN, 1};

// Variables `vars` of a rank's blocks, stored compact while a chunk's stages run.
class CompactVars {
 public:
  // Copies the interiors of variables `vars` of `blocks` in.
  void load(std::span<const Block> blocks, VarRange vars);
  // Copies them back into `blocks` (the same blocks) and forgets them.
  void store(std::span<Block> blocks);
  // The same a block at a time, for copies shared out among threads: room for `blocks` blocks
  // of `vars`, then load_block for each block, and later store_block for each and forget().
  void reserve(std::size_t blocks, VarRange vars);
  void load_block(const Block& block, std::size_t b);
  void store_block(Block& block, std::size_t b) const;
  void forget() { loaded_ = false; }
  bool loaded() const { return loaded_; }
  VarRange vars() const { return vars_; }

  double* var(std::size_t block, int v) { return base_ + offset(block, v); }
  const double* var(std::size_t block, int v) const { return base_ + offset(block, v); }

 private:
  std::size_t offset(std::size_t block, int v) const {
    return (block * std::size_t(vars_.count()) + std::size_t(v - vars_.v0)) * kCompactCells;
  }
  AlignedDoubles storage_;
  std::size_t capacity_ = 0;
  double* base_ = nullptr;
  VarRange vars_{};
  bool loaded_ = false;
};

// Stores loaded compact variables back into their blocks when it leaves scope, by an error too.
class StoredOnExit {
 public:
  StoredOnExit(CompactVars& compact, std::span<Block> blocks)
      : compact_(compact), blocks_(blocks) {}
  StoredOnExit(const StoredOnExit&) = delete;
  StoredOnExit& operator=(const StoredOnExit&) = delete;
  ~StoredOnExit() {
    if (compact_.loaded()) compact_.store(blocks_);
  }

 private:
  CompactVars& compact_;
  std::span<Block> blocks_;
};

}  // namespace miniamr::stencil
