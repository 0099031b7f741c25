// The static mapper's order for the 7-point stage graph: blocks swept in curve order (those
// whose ghosts all come from this rank first, while messages are in flight), each Fill node
// split into its faces, and for each face the way its values reach the receiver's sweep: values
// from before this stage, at hand while the receiver is hot.
//   * Same-level and domain-boundary faces are read by the sweep where those values are
//     (stencil/ghost_layers.hpp), never copied into the receiver's ghosts: a boundary face from
//     the receiver's own layer next to it; an on-rank face from the sender's facing layer when
//     the sender is swept later, else from the copy of that layer made at the sender's sweep
//     (the deferred-face buffer); a face from another rank from the received message.
//     A deferred same-level face is copied out by the sender's sweep as it goes (the old
//     values of each plane are at hand in L1 there), not packed by a pass of its own.
//   * Faces across a level change (ghosts are the sender's cells / 4, or sums of four) are
//     filled from the sender at the receiver's sweep when the sender is swept later, else
//     packed at the sender's sweep and unpacked at the receiver's.
// Writing ghosts straight into a later block would touch every cache line of it (a z face has
// one ghost per row) long before its sweep, which measured as the largest cost of a stage; a
// packed face is a few contiguous lines, and packed and direct fills give the same bits
// (stencil/ghost_fill.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/stage_graph.hpp"
#include "stencil/compact_stencil.hpp"
#include "stencil/ghost_layers.hpp"

namespace miniamr::runtime {

// An on-rank ghost fill: a link between two blocks.
struct GhostTask {
  enum class Kind {
    kDirect,  // src -> dst ghosts
    kPack,    // src's face for dst -> the deferred-face buffer
    kUnpack,  // the deferred-face buffer -> dst ghosts
  };
  std::size_t dst = 0;
  std::size_t src = 0;
  stencil::FaceLink link;
  Kind kind = Kind::kDirect;
  // kPack, kUnpack: the face's offset and doubles in the deferred-face buffer, per variable
  std::size_t slot = 0, size = 0;
};

// Where a block's sweep reads one ghost face.
struct FaceRead {
  enum class Kind : std::uint8_t {
    kGhost,      // its own ghost layer
    kMirror,     // its own layer next to a domain-boundary face
    kNeighbour,  // the facing layer of block `from`, swept later
    kDeferred,   // deferred face slot `from` (`size` doubles per variable)
    kMessage,    // the face at `at` (`size` doubles per variable) of receive `from`
  };
  Kind kind = Kind::kGhost;
  std::size_t from = 0, at = 0, size = 0;
  stencil::LayerPlace place;  // the layer in its source's variable (all but kGhost)
};

struct SweepSchedule {
  std::vector<std::size_t> order;  // blocks in sweep order: self-contained first, then the rest
  std::size_t first_remote = 0;    // order[first_remote..] need ghosts from other ranks
  int threads = 1;
  // Thread t sweeps positions [bounds[p*threads + t], bounds[p*threads + t + 1]) of phase p
  // (0: self-contained blocks, 1: the rest).
  std::vector<std::size_t> bounds;
  std::vector<GhostTask> early;         // links between two threads' blocks: filled up front
  std::vector<std::size_t> task_begin;  // tasks of position p: [task_begin[p], task_begin[p+1])
  std::vector<GhostTask> tasks;
  // reads[b][f]: where block b's sweep reads face f. A face read elsewhere than in the ghost
  // layer has no fill or unpack task (a deferred one is copied out by its sender's sweep).
  std::vector<std::array<FaceRead, 6>> reads;
  // copies[b][f]: the deferred-face slot that block b's sweep copies its layer next to face f
  // into, for the same-level block across f swept after it (size 0: none). A copy made by the
  // sweep as it goes (stencil::GhostLayers::copy) rather than a kPack task before it.
  std::vector<std::array<FaceSlot, 6>> copies;
  // unpacks[m]: the faces of receive m (indices into its layout) that are unpacked into ghosts
  // rather than read from the message.
  std::vector<std::vector<std::size_t>> unpacks;
  // Doubles per variable of every deferred face: the buffer holds this times the variables of
  // a sweep, and face `slot` of it starts at slot times those variables.
  std::size_t deferred_per_var = 0;
};

// `graph` describes a face-only stencil (one axis group) of blocks of `shape`.
SweepSchedule build_sweep_schedule(const StageGraph& graph, const stencil::BlockShape& shape,
                                   int threads);

// Sets each read's place in its source (all reads but kGhost): a function of the shape alone,
// found once per mesh rather than at every sweep.
void place_reads(std::span<std::array<FaceRead, 6>> reads, const stencil::BlockShape& shape);

// Variable v0 of a packed face (kDeferred, kMessage) in a mapper's buffer, and the doubles from
// there to the next variable's copy.
struct PackedLayer {
  const double* first = nullptr;
  std::ptrdiff_t next = 0;
};

// The layers that block i's sweep of variable v0 reads under `reads` (one per face, placed):
// its own ghosts, its own layers next to the domain's boundary, a neighbour's facing layer, or
// the packed face that `packed(read)` finds in the mapper's buffers.
template <class Packed>
stencil::GhostLayers read_layers(std::span<const stencil::Block> blocks, std::size_t i,
                                 const std::array<FaceRead, 6>& reads, int v0, Packed&& packed) {
  using Read = FaceRead::Kind;
  const stencil::Block& block = blocks[i];
  stencil::GhostLayers l = stencil::own_ghost_layers(block, v0);
  for (std::size_t f = 0; f < 6; ++f) {
    const FaceRead& r = reads[f];
    PackedLayer from{nullptr, std::ptrdiff_t(block.shape().var_stride())};
    switch (r.kind) {
      case Read::kGhost:
        continue;
      case Read::kMirror:
        from.first = block.var(v0).data();
        break;
      case Read::kNeighbour:
        from.first = blocks[r.from].var(v0).data();
        break;
      case Read::kDeferred:
      case Read::kMessage:
        from = packed(r);
        break;
    }
    l.face[f] = {from.first + r.place.offset, r.place.sb, r.place.sc, from.next};
  }
  return l;
}

// The dense ghost layers of a sweep of variables stored compact (stencil/compact_stencil.hpp):
// one per face that a block's sweep reads from its ghost layer (FaceRead::Kind::kGhost: a level
// change, or a same-level face from a sender swept earlier that nothing packed), each holding
// the variables of a sweep one after the other.
class DenseGhostLayers {
 public:
  // Numbers the faces of `reads` (per block) read from the ghost layer.
  void number(std::span<const std::array<FaceRead, 6>> reads);
  // Room for `vars` variables of every layer.
  void resize(std::size_t vars);
  // Block b's layer of face f, at its variable `var` (counted from the first of the sweep's).
  double* layer(std::size_t b, int f, std::size_t var = 0);

 private:
  static constexpr std::size_t kNoSlot = ~std::size_t{0};
  std::vector<std::array<std::size_t, 6>> slot_;  // per block and face (kNoSlot: read elsewhere)
  std::size_t slots_ = 0, vars_ = 0;
  std::vector<double> data_;
};

// The same for a sweep of variables stored compact (stencil/compact_stencil.hpp): its own and a
// neighbour's layers are in `compact`, and a face read from the ghost layer (kGhost) is in
// `ghosts`, whose variable `ghost_var` is v0.
template <class Packed>
stencil::GhostLayers compact_read_layers(const stencil::CompactVars& compact,
                                         DenseGhostLayers& ghosts, std::size_t ghost_var,
                                         std::size_t i, const std::array<FaceRead, 6>& reads,
                                         int v0, Packed&& packed) {
  using Read = FaceRead::Kind;
  const auto var_next = std::ptrdiff_t(stencil::kCompactCells);
  stencil::GhostLayers l;
  for (std::size_t f = 0; f < 6; ++f) {
    const FaceRead& r = reads[f];
    if (r.kind == Read::kGhost) {
      const stencil::LayerPlace at = stencil::kDenseLayerPlace;
      l.face[f] = {ghosts.layer(i, int(f), ghost_var), at.sb, at.sc,
                   std::ptrdiff_t(stencil::kCompactFaceCells)};
    } else if (r.kind == Read::kMirror || r.kind == Read::kNeighbour) {
      const bool own = r.kind == Read::kMirror;
      const stencil::LayerPlace at = stencil::compact_layer_place(int(f), own);
      l.face[f] = {compact.var(own ? i : r.from, v0) + at.offset, at.sb, at.sc, var_next};
    } else {
      const PackedLayer from = packed(r);
      l.face[f] = {from.first + r.place.offset, r.place.sb, r.place.sc, from.next};
    }
  }
  return l;
}

}  // namespace miniamr::runtime
