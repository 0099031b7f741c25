// The static mapper's order for the 7-point stage graph: blocks swept in curve order (those
// whose ghosts all come from this rank first, while messages are in flight), each Fill node
// split into its on-rank faces and every face filled at the sweep of whichever of its two
// blocks comes first. That is a topological order of the graph refined to single faces: a face
// is written just before the block that needs it is swept (while in cache), and it still reads
// values from before this stage.
#pragma once

#include <cstddef>
#include <vector>

#include "runtime/stage_graph.hpp"

namespace miniamr::runtime {

// An on-rank ghost fill: a link between two blocks, or a domain-boundary face of `dst`.
struct GhostTask {
  std::size_t dst = 0;
  std::size_t src = 0;
  stencil::FaceLink link;
  bool boundary = false;
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
};

// `graph` describes a face-only stencil (one axis group).
SweepSchedule build_sweep_schedule(const StageGraph& graph, int threads);

}  // namespace miniamr::runtime
