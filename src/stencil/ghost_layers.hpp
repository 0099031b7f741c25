// Where a face-only (7-point) sweep reads each face's ghosts. A same-level or domain-boundary
// ghost face is a plain copy of values that already exist elsewhere: the block's own interior
// layer next to a boundary face, the facing interior layer of a same-level neighbour, or that
// layer packed into a buffer (a message, a deferred face; ghost_fill.hpp's pack). A sweep can
// read them there in place of the ghost layer, with the same values and so the same bits, and
// the fill or unpack that would have copied them is never run: no pass over the receiver's
// ghosts, and no z face (one ghost per row, the costliest fill) written ahead of its sweep.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "stencil/block.hpp"

namespace miniamr::stencil {

struct GhostSource {
  enum class Kind : std::uint8_t {
    kGhost,      // the block's own ghost layer, filled before the sweep
    kMirror,     // a domain-boundary face: the block's own interior layer next to it
    kNeighbour,  // the facing interior layer of a same-level block of the same shape, which
                 // must still hold the values from before the stage when the sweep reads it
    kPacked,     // a same-level face as pack() wrote it, variable after variable
  };
  Kind kind = Kind::kGhost;
  const Block* neighbour = nullptr;  // kNeighbour
  const double* packed = nullptr;    // kPacked: the face of variable packed_v0
  std::size_t packed_stride = 0;     // kPacked: doubles from one variable's face to the next
  int packed_v0 = 0;
};

// Faces in ghost_fill.hpp's order: x-, x+, y-, y+, z-, z+.
using GhostSources = std::array<GhostSource, 6>;

// One face's ghosts as a sweep reads them. The face's in-plane axes b and c are ghost_fill's
// (x face: y, z; y face: x, z; z face: x, y); ghost (ib, ic), 1-based like the block's
// interior, is first[(ib - 1) * sb + (ic - 1) * sc].
struct GhostLayer {
  const double* first = nullptr;
  std::ptrdiff_t sb = 0, sc = 0;
  std::ptrdiff_t next = 0;  // from this variable's `first` to the next variable's
};

// One of the swept block's own layers whose values from before the sweep a later sweep reads
// (a deferred same-level face): the sweep copies them out as it goes, in pack()'s order for the
// block across that face, so the reader finds the same bits a pack before the sweep would have
// left, without a pass of its own over the block.
struct LayerCopy {
  double* to = nullptr;     // null: no copy
  std::ptrdiff_t next = 0;  // from this variable's copy to the next variable's
};

struct GhostLayers {
  std::array<GhostLayer, 6> face{};
  // copy[f]: the layer next to the block's face f (x-, x+, y-, y+, z-, z+), copied out.
  std::array<LayerCopy, 6> copy{};

  bool copies() const {
    for (const LayerCopy& c : copy)
      if (c.to != nullptr) return true;
    return false;
  }
  // The same faces and copies of the next variable (there must be one).
  void next_var() {
    for (GhostLayer& l : face) l.first += l.next;
    for (LayerCopy& c : copy)
      if (c.to != nullptr) c.to += c.next;
  }
};

// Writes the copies `copy` asks for from old plane i (1-based) of an nx x ny x nz interior,
// given as ny dense rows of nz (`old`): a sweep that keeps each old plane for its x+1 neighbour
// has every layer of it at hand there, in L1. The x layers at the first and last plane, a row of
// each y layer and a column of each z layer at every plane.
inline void copy_out_plane(const std::array<LayerCopy, 6>& copy, int i, const double* old, int nx,
                           int ny, int nz) {
  const auto row = std::size_t(nz);
  const auto x = std::size_t(i - 1);
  // Row by row: a copy of a row's known size is a few vector moves, of a plane a library call.
  for (int side = 0; side < 2; ++side)
    if (double* to = copy[std::size_t(side)].to; to != nullptr && i == (side == 0 ? 1 : nx))
      for (std::size_t j = 0; j < std::size_t(ny); ++j)
        std::copy_n(old + j * row, row, to + j * row);
  if (copy[2].to) std::copy_n(old, row, copy[2].to + x * row);
  if (copy[3].to) std::copy_n(old + (std::size_t(ny) - 1) * row, row, copy[3].to + x * row);
  for (int side = 0; side < 2; ++side)
    if (double* to = copy[std::size_t(4 + side)].to) {
      const double* from = old + (side == 0 ? 0 : row - 1);
      for (std::size_t j = 0; j < std::size_t(ny); ++j) to[x * std::size_t(ny) + j] = from[j * row];
    }
}

// Every face read from the block's own ghosts (face_geom.hpp's ghost layers, spelt out: the
// plain 7-point kernel starts here on every call).
inline GhostLayers own_ghost_layers(const Block& block, int var) {
  const BlockShape& s = block.shape();
  const double* u = block.var(var).data();
  const auto p = std::ptrdiff_t(s.plane()), r = std::ptrdiff_t(s.row());
  const auto next = std::ptrdiff_t(s.var_stride());
  GhostLayers l;
  l.face[0] = {u + r + 1, r, 1, next};                   // ghost (0, 1, 1)
  l.face[1] = {u + (s.nx + 1) * p + r + 1, r, 1, next};  // (nx+1, 1, 1)
  l.face[2] = {u + p + 1, p, 1, next};                   // (1, 0, 1)
  l.face[3] = {u + p + (s.ny + 1) * r + 1, p, 1, next};  // (1, ny+1, 1)
  l.face[4] = {u + p + r, p, r, next};                   // (1, 1, 0)
  l.face[5] = {u + p + r + s.nz + 1, p, r, next};        // (1, 1, nz+1)
  return l;
}
// Where the layer of face `face` lies for a source of `kind`, relative to the first value of
// that source's variable (the block's own or its neighbour's variable, or a variable's packed
// face): ghost (1, 1) at `offset`, rows `sb` and `sc` apart. A function of the shape alone, so
// a schedule can find it once per mesh instead of once per sweep.
struct LayerPlace {
  std::ptrdiff_t offset = 0, sb = 0, sc = 0;
};
LayerPlace layer_place(const BlockShape& shape, int face, GhostSource::Kind kind);
// Where the layer of face `face` lies in an n^3 variable stored compact (cell (i,j,k), 0-based,
// at (i * n + j) * n + k; compact_stencil.hpp): the variable's own layer next to the face
// (`own`), or the layer of a same-level neighbour across the face that faces it. Relative to
// the variable's first cell.
constexpr LayerPlace compact_layer_place(int n, int face, bool own) {
  const std::ptrdiff_t stride[3] = {std::ptrdiff_t(n) * n, n, 1};  // i, j, k
  const int axis = face / 2;
  const bool upper = face % 2 == 1;
  // The own layer next to an upper face is the last one; a neighbour across it faces it with
  // its first.
  const int at = own == upper ? n - 1 : 0;
  return {at * stride[axis], stride[axis == 0 ? 1 : 0], stride[axis == 2 ? 1 : 2]};
}

// The layers of variable `var` of `block` under `sources`.
GhostLayers ghost_layers(const Block& block, int var, const GhostSources& sources);
// Writes the copies `layers` asks for from the block's layers as they are now: for a sweep that
// does not copy them out as it goes, called before it.
void copy_out_layers(const Block& block, int var, const GhostLayers& layers);
// Copies every face that `layers` reads from elsewhere into the block's own ghost layer (the
// in-plane interior cells: the faces a 7-point sweep reads), for kernels that read ghosts only.
void copy_ghost_layers(Block& block, int var, const GhostLayers& layers);

}  // namespace miniamr::stencil
