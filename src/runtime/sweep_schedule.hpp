// The static mapper's order for the 7-point stage graph: blocks swept in curve order (those
// whose ghosts all come from this rank first, while messages are in flight), each Fill node
// split into its on-rank faces, every face filled before either of its two blocks is swept
// (so it still reads values from before this stage), and written while the receiver is hot:
//   * the sender is swept later: the receiver fills the face from it directly, at its own sweep;
//   * the sender is swept first: at the sender's sweep the face is packed into a compact buffer
//     (what the receiver needs, level changes applied), and the receiver unpacks it at its own
//     sweep. Writing the ghosts straight into the later block would touch every cache line of
//     it (a z face has one ghost per row) long before its sweep, which measured as the largest
//     cost of a stage; the packed face is a few contiguous lines, and packed and direct fills
//     give the same bits (stencil/ghost_fill.hpp).
#pragma once

#include <cstddef>
#include <vector>

#include "runtime/stage_graph.hpp"

namespace miniamr::runtime {

// An on-rank ghost fill: a link between two blocks, or a domain-boundary face of `dst`.
struct GhostTask {
  enum class Kind {
    kDirect,    // src -> dst ghosts
    kBoundary,  // dst's domain-boundary face
    kPack,      // src's face for dst -> the deferred-face buffer
    kUnpack,    // the deferred-face buffer -> dst ghosts
  };
  std::size_t dst = 0;
  std::size_t src = 0;
  stencil::FaceLink link;
  Kind kind = Kind::kDirect;
  // kPack, kUnpack: the face's offset and doubles in the deferred-face buffer, per variable
  std::size_t slot = 0, size = 0;
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
  // Doubles per variable of every deferred face: the buffer holds this times the variables of
  // a sweep, and face `slot` of it starts at slot times those variables.
  std::size_t deferred_per_var = 0;
};

// `graph` describes a face-only stencil (one axis group) of blocks of `shape`.
SweepSchedule build_sweep_schedule(const StageGraph& graph, const stencil::BlockShape& shape,
                                   int threads);

}  // namespace miniamr::runtime
