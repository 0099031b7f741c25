// Where a face-only (7-point) sweep reads each face's ghosts. A same-level or domain-boundary
// ghost face is a plain copy of values that already exist elsewhere: the block's own interior
// layer next to a boundary face, the facing interior layer of a same-level neighbour, or that
// layer packed into a buffer (a message, a deferred face; ghost_fill.hpp's pack). A sweep can
// read them there in place of the ghost layer, with the same values and so the same bits, and
// the fill or unpack that would have copied them is never run: no pass over the receiver's
// ghosts, and no z face (one ghost per row, the costliest fill) written ahead of its sweep.
#pragma once

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

struct GhostLayers {
  std::array<GhostLayer, 6> face{};

  // The same faces of the next variable (there must be one).
  void next_var() {
    for (GhostLayer& l : face) l.first += l.next;
  }
};

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

// The layers of variable `var` of `block` under `sources`.
GhostLayers ghost_layers(const Block& block, int var, const GhostSources& sources);
// Copies every face that `layers` reads from elsewhere into the block's own ghost layer (the
// in-plane interior cells: the faces a 7-point sweep reads), for kernels that read ghosts only.
void copy_ghost_layers(Block& block, int var, const GhostLayers& layers);

}  // namespace miniamr::stencil
