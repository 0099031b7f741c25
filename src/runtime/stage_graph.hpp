// The work of a stage on this rank, described once per mesh as a task graph, and the same for
// every stage: both mappers (static and dynamic) run this description.
//
// Nodes, for every local block b and stage s (G axis groups: 1 when the stencil reads faces only
// and all axes are filled at once; 3 when it reads edges and corners, filled x, then y, then z,
// each copying the ghosts of the earlier axes):
//   Fill(b, g, s)  fill b's ghosts on the axes of group g: on-rank copies from neighbours,
//                  domain-boundary faces, and faces unpacked from messages;
//   Sweep(b, s)    the stencil on every variable of b, and b's checksum partials;
//   Send(p, g, s)  the message of group g to peer p, packed face by face by its producers;
//   Recv(p, g, s)  its arrival here.
// Edges (what each node needs before it may start):
//   Fill(b, 0, s)  <- Sweep(n, s-1) for b and every on-rank block n it reads (the senders'
//                     new values; b's own ghosts no longer read), Recv(p, 0, s) of its faces;
//   Fill(b, g, s)  <- Fill(n, g-1, s) for b and every n it reads (n's ghosts of the earlier
//                     axes are this stage's), Recv(p, g, s) of its faces;
//   Sweep(b, s)    <- Fill(b, G-1, s), and Fill(m, g, s) for every block m that reads b
//                     (write after read: b's interior is overwritten in place);
//   Send(p, g, s)  <- the producer of each of its faces: Sweep(b, s-1) for g = 0,
//                     Fill(b, g-1, s) otherwise (a face carries the sender's earlier-axis ghosts).
// A producer packs its faces as it ends, so a message leaves the moment its last face is ready.
// Every edge goes from an earlier to a later node in the order Sweep(s-1) < Fill(s, 0) < ... <
// Fill(s, G-1) < Sweep(s), so any grouping of blocks into tasks keeps the graph acyclic. (The
// dynamic mapper's deferred faces add edges between the tasks of one stage, all from an earlier
// to a later task of one fixed task order.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mesh/ghost_plan.hpp"
#include "octree/leaf_set.hpp"
#include "runtime/adjacency.hpp"
#include "runtime/halo_messages.hpp"

namespace miniamr::runtime {

// One ghost fill of a Fill node.
struct GhostFill {
  enum class Kind : std::uint8_t { kLocal, kBoundary, kRemote };
  Kind kind = Kind::kLocal;
  std::size_t src = 0;        // kLocal: the on-rank sender
  stencil::FaceLink link;     // as the receiver sees it (kBoundary: link.face only)
  std::uint32_t message = 0;  // kRemote: index into StageGraph::recvs
  std::uint32_t face = 0;     // kRemote: index into that message's faces
};

// A face a block packs into a send message.
struct PackedFace {
  std::uint32_t message = 0;  // index into StageGraph::sends
  std::uint32_t face = 0;     // index into that message's faces
};

struct StageGraph {
  int groups = 1;  // G
  bool edges = false;
  std::size_t blocks = 0;
  // Indexed by node(b, g) = b * G + g.
  Adjacency<GhostFill> fills;        // what Fill(b, g) does
  Adjacency<std::size_t> reads;      // on-rank blocks n != b that Fill(b, g) reads
  Adjacency<std::size_t> readers;    // on-rank blocks m != b whose Fill(m, g) reads b
  Adjacency<PackedFace> packs;       // faces b packs into the messages of group g
  std::vector<MessageLayout> sends;  // per peer and group
  std::vector<MessageLayout> recvs;
  std::vector<char> needs_remote;  // per block: some ghost comes from another rank

  std::size_t node(std::size_t block, int group) const {
    return block * std::size_t(groups) + std::size_t(group);
  }
};

// Where a face sits in a buffer of packed faces laid one after another (a mapper's faces packed
// at their sender's sweep for a later reader): its offset and doubles, per variable of the
// buffer (a buffer of nv variables holds face `slot * nv .. (slot + size) * nv`).
struct FaceSlot {
  std::size_t slot = 0, size = 0;
};

// Appends a face-only face of `link` to a buffer of `doubles_per_var` doubles per variable so
// far, which grows by the face's size; returns the face's slot.
FaceSlot append_face_slot(std::size_t& doubles_per_var, const stencil::BlockShape& shape,
                          const stencil::FaceLink& link);

StageGraph build_stage_graph(const mesh::GhostPlan& plan, const stencil::BlockShape& shape,
                             std::size_t blocks, bool edges);

// Graphviz DOT of `stages` consecutive stages of this rank's graph, as a cluster named after
// the rank; cross-rank message edges name the peer's nodes, so the clusters of all ranks
// concatenated inside one digraph form the whole graph.
std::string stage_graph_dot(const StageGraph& graph, const octree::LeafSet& leaves, int rank,
                            int stages);

}  // namespace miniamr::runtime
