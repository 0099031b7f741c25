// Ghost-layer filling for one face of one block, per variable range (spec §3.5).
//
// Faces are numbered 0..5 = -x,+x,-y,+y,-z,+z (the same numbering as octree::Face); face f lies
// on axis f/2 and is the upper one when f is odd. A link is always described as its RECEIVER
// sees it: `face` is the receiver's ghost face, and the sender is the block across it (the
// sender touches its own face opposite(face)). In-plane axes of a face on axis a are the other
// two in x,y,z order (b, c): (y,z) for x faces, (x,z) for y faces, (x,y) for z faces.
//
// Every relation exists twice, giving bitwise identical ghosts:
//   * fill_direct(dst, src, ...) copies block to block (both blocks on this rank);
//   * pack(src, ...) on the sender + unpack(dst, ...) on the receiver (an MPI message). The
//     sender already applies the /4 or the 2x2 sum, so a level-change message carries a
//     quarter of a face.
// Packed layout: variable-major, then the first in-plane axis, then the second (fastest).
//
// Edges and corners (27-point stencil): with `with_edges`, same-level and boundary fills on the
// y axis also cover the x ghosts (i = 0..nx+1) and on the z axis the x and y ghosts, so calling
// the phases in the order x, y, z fills edges and corners. Level-change fills never do.
#pragma once

#include <cstddef>
#include <span>

#include "stencil/block.hpp"

namespace miniamr::stencil {

// Which levels a link joins, seen from the receiver.
enum class GhostRelation {
  kSameLevel,     // ghost = sender's adjacent interior layer
  kCoarseToFine,  // receiver is finer: each sender face cell / 4 into the 2x2 ghosts facing it
  kFineToCoarse,  // receiver is coarser: sum of the 4 sender face cells facing each ghost
};

// The quarter of the COARSE block's face that the fine block covers: q1, q2 in {0,1} along the
// face's first and second in-plane axis (x,y,z order). For a fine block of octant (ox,oy,oz) in
// its parent, that is the octant bits of the two in-plane axes.
struct Quadrant {
  int q1 = 0, q2 = 0;
};

struct FaceLink {
  GhostRelation relation = GhostRelation::kSameLevel;
  int face = 0;         // receiver's ghost face, 0..5
  Quadrant quadrant{};  // level changes only
};

// Half-open range of variables [v0, v1).
struct VarRange {
  int v0 = 0, v1 = 0;
  int count() const { return v1 - v0; }
};

// Doubles in one packed face for `num_vars` variables.
std::size_t packed_size(const BlockShape& shape, GhostRelation relation, int axis, int num_vars,
                        bool with_edges);

// Direct block-to-block fill of dst's ghost face link.face from src.
void fill_direct(Block& dst, const Block& src, const FaceLink& link, VarRange vars,
                 bool with_edges);

// Sender side: writes what the receiver of `link` needs into out[0 .. packed_size) and returns
// the count. `out` must hold at least packed_size(...) doubles.
std::size_t pack(const Block& src, const FaceLink& link, VarRange vars, bool with_edges,
                 std::span<double> out);

// Receiver side: reads packed_size(...) doubles from `in` into dst's ghosts; returns the count.
std::size_t unpack(Block& dst, const FaceLink& link, VarRange vars, bool with_edges,
                   std::span<const double> in);

// Domain boundary: reflective, ghost = adjacent interior cell of the same block.
void fill_boundary(Block& block, int face, VarRange vars, bool with_edges);

// The same relations (no edges) between a sender stored compact (compact_stencil.hpp: variable
// vars.v0 at `src`, the next ones every `src_next` doubles) and a dense ghost layer (one face's
// ghosts alone, ghost (ib, ic) of variable vars.v0 at layer[(ib - 1) * nc + (ic - 1)], the next
// variable's `layer_next` doubles on), for a sweep of compact interiors that reads its ghost
// faces as layers (ghost_layers.hpp). Same operations in the same order as the padded forms,
// so the same bits: fill_direct into a layer, pack from a compact sender (the packed face is
// pack()'s), unpack into a layer.
void fill_layer(double* layer, std::ptrdiff_t layer_next, const double* src,
                std::ptrdiff_t src_next, const BlockShape& shape, const FaceLink& link,
                VarRange vars);
std::size_t pack_compact(const double* src, std::ptrdiff_t src_next, const BlockShape& shape,
                         const FaceLink& link, VarRange vars, std::span<double> out);
std::size_t unpack_layer(double* layer, std::ptrdiff_t layer_next, const BlockShape& shape,
                         const FaceLink& link, VarRange vars, std::span<const double> in);

}  // namespace miniamr::stencil
