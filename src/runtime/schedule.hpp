// The schedule both mappers run: the stage graph of this rank (stage_graph.hpp) cut into units
// of blocks, and for every block where each of its ghost faces comes from. A unit is a run of
// consecutive blocks of one sweep order, taken through a stage by one worker: a unit step.
// Face-only stencils have one step per stage (the sweep, each block's on-rank ghost tasks
// just before it); stencils that read edges have G + 1 = 4 (fill x, fill y, fill z, sweep).
//
// Where a face's values come from depends on whether its two blocks share a unit:
//   * within a unit, the blocks are taken in order, so a same-level face is read by the sweep
//     where its values are: the sender's facing layer when the sender comes later, else the copy
//     of that layer its sweep made as it went (the deferred-face buffer; copies); a level change
//     is filled from a later sender, or packed at an earlier sender's sweep and unpacked;
//   * between units, and between ranks, the sender packs the face right after the step that
//     makes its values (the sweep, for the next stage; a fill, for the next axis of the same
//     stage) into a face buffer: another rank's message, or one of this rank's local face
//     buffers, laid out like a message. The reader's sweep reads a same-level face there and a
//     fill unpacks the rest.
// So units of one stage never wait for each other: a unit's step needs only the steps before it
// of the units it exchanges faces with (its links), and the messages it reads. A face for the
// next stage goes into the face buffer of that stage's parity; two suffice, since a sender
// starts stage s + 1 only after each unit linked to it has ended stage s (and so read the
// faces of stage s).
//
// A message and a local face buffer hold a face of `per_var` doubles per variable at
// `offset * nv` (nv: the variables it carries), its variables one after another.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/adjacency.hpp"
#include "runtime/stage_graph.hpp"
#include "stencil/ghost_fill.hpp"
#include "stencil/ghost_layers.hpp"

namespace miniamr::runtime {

// Where a packed face lies: in a message or in this rank's local face buffer of its axis group.
struct PackedAt {
  enum class In : std::uint8_t { kLocal, kMessage };
  In in = In::kLocal;
  std::uint32_t message = 0;  // kMessage: index into StageGraph::sends or ::recvs
  std::size_t offset = 0, per_var = 0;
};

// An on-rank ghost operation of a unit step, for block `dst` (from `src`).
struct GhostTask {
  enum class Kind : std::uint8_t {
    kDirect,    // src -> dst ghosts (a sender of the same unit, not yet swept)
    kBoundary,  // dst's domain-boundary face (stencils that read edges)
    kDefer,     // src's face for dst -> the deferred-face buffer (at src's position)
    kUndefer,   // the deferred-face buffer -> dst ghosts
    kUnpack,    // a packed face (`at`) -> dst ghosts
  };
  Kind kind = Kind::kDirect;
  std::size_t dst = 0, src = 0;
  stencil::FaceLink link;
  FaceSlot slot;  // kDefer, kUndefer
  PackedAt at;    // kUnpack
};

// Where a face-only sweep of block b reads its face f.
struct FaceRead {
  enum class Kind : std::uint8_t {
    kGhost,      // its own ghost layer (a level change, filled before the sweep)
    kMirror,     // its own layer next to a domain-boundary face
    kNeighbour,  // the facing layer of block `from`, swept later in the unit
    kDeferred,   // the deferred-face buffer at `slot`
    kPacked,     // a packed face (`at`)
  };
  Kind kind = Kind::kGhost;
  std::size_t from = 0;
  FaceSlot slot;
  PackedAt at;
  stencil::LayerPlace place;  // the layer in its source's variable (all but kGhost)
};

// A face a block packs after one of its steps, for a reader in another unit or on another rank.
struct OutFace {
  stencil::FaceLink link;  // as the reader sees it
  int group = 0;           // the axis group whose fill reads it (0: the next stage's)
  PackedAt at;
};

struct SchedulePolicy {
  enum class Order : std::uint8_t {
    kInteriorFirst,   // blocks whose ghosts are all on this rank first (swept while messages fly)
    kProducersFirst,  // blocks that exchange faces with other ranks first (messages leave early)
  };
  Order order = Order::kInteriorFirst;
  // Each of the two parts of the order (the blocks that need a message, the others) is cut
  // into this many units of equal block counts, or of equal weight when the schedule is built
  // with block weights (into one unit a block when the part has fewer blocks, none when it has
  // none).
  std::size_t units_per_part = 1;
  // Units of equal measured cost (mesh::Domain::cost) rather than of equal block counts, cut
  // again after a batch whose units took unequal times (units_uneven).
  bool by_cost = false;
  bool operator==(const SchedulePolicy&) const = default;
};

struct Schedule {
  bool edges = false;
  int groups = 1;                       // G: axis groups of the fills (stage_graph.hpp)
  int steps = 1;                        // unit steps per stage: 1, or G + 1 with edges
  std::vector<std::size_t> order;       // blocks in sweep order
  std::vector<std::size_t> unit_begin;  // unit u: positions [unit_begin[u], unit_begin[u + 1])
  std::size_t second_part = 0;          // the first unit of the second part of the order
  std::vector<std::uint32_t> unit_of;   // per block
  // Per position p and step k (index p * steps + k): its ghost tasks, run before the step's
  // sweep (face-only) or as the step's fill, and the faces it packs after the step.
  Adjacency<GhostTask> tasks;
  Adjacency<OutFace> outs;
  // Face-only stencils, per block: where the sweep reads each face, and the layers it copies
  // out as it goes into the deferred-face buffer (size 0: none).
  std::vector<std::array<FaceRead, 6>> reads;
  std::vector<std::array<FaceSlot, 6>> copies;
  std::size_t deferred_per_var = 0;                   // doubles per variable of the deferred buffer
  std::array<std::size_t, 3> local_per_var{0, 0, 0};  // and of the local face buffer of a group
  // The unit graph. Per unit: the other units it exchanges faces with (its step 0 of stage s
  // waits for their last step of stage s - 1). Per unit and step k > 0 (edges): the units
  // whose step k - 1 packs a face it reads. Per unit and step: the messages it reads, and the
  // messages it packs faces into after the step.
  Adjacency<std::uint32_t> links;
  Adjacency<std::uint32_t> feeds;
  Adjacency<std::uint32_t> consumes;
  Adjacency<std::uint32_t> produces;
  Adjacency<std::uint32_t> readers;      // per receive message: the unit steps reading it
  std::vector<std::uint32_t> producers;  // per send message: how many unit steps pack into it
  std::vector<std::uint32_t> consumers;  // per receive message: how many unit steps read it

  std::size_t units() const { return unit_begin.size() - 1; }
  std::size_t node(std::size_t unit, int step) const {
    return unit * std::size_t(steps) + std::size_t(step);
  }
  std::size_t blocks_in(std::size_t unit) const { return unit_begin[unit + 1] - unit_begin[unit]; }
};

// `weights`: per block, what its stages cost (empty: one each), for cutting the parts into units.
Schedule build_schedule(const StageGraph& graph, const stencil::BlockShape& shape,
                        const SchedulePolicy& policy, std::span<const double> weights = {});

// Whether the slowest unit of a part of `s` took more than `tolerance` seconds longer than the
// part's mean, each unit's time the sum of its blocks' `block_seconds`.
bool units_uneven(const Schedule& s, std::span<const double> block_seconds, double tolerance);

// Where `units` runs of consecutive items of weights `w` begin, each as near a `units`-th of the
// total weight as the items allow and none empty: units + 1 positions from 0 to w.size() (units
// at most w.size()).
std::vector<std::size_t> cut_weighted(std::span<const double> w, std::size_t units);

// Same-level faces read in place of the ghosts, and faces deferred within a unit (for tests
// and reports).
struct ScheduleCounts {
  std::size_t read_in_place = 0, deferred = 0, packed_between_units = 0;
};
ScheduleCounts count_faces(const Schedule& s);

}  // namespace miniamr::runtime
