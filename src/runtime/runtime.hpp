// The seam between the driver and the back ends: what to run, not how. A back end is a mapper:
// it decides where and when the tasks of the stage graph (stage_graph.hpp) run.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "comm/mpi.hpp"
#include "mesh/domain.hpp"
#include "octree/refine.hpp"
#include "runtime/stage_kernels.hpp"
#include "runtime/timers.hpp"

namespace miniamr::runtime {

class Trace;

struct CommPartners {
  std::array<int, 3> axis{0, 0, 0};
  int total = 0;   // sum over axes (the reference's "total")
  int unique = 0;  // distinct ranks
};

class Runtime {
 public:
  virtual ~Runtime() = default;

  virtual const comm::Communicator& comm() const = 0;
  virtual Timers& timers() = 0;

  // Called after every change of the local leaves (adapt, migration) to rebuild plans.
  virtual void mesh_changed(const mesh::Domain& domain) = 0;
  // Collective. The same after an adaptation: since the last mesh_changed or mesh_adapted the
  // leaves changed only by splits and by merges of families whole on one rank, which move no
  // rank's first position along the curve, so the partition is kept unless blocks migrated in
  // between (one P-sized allgather fewer per adaptation).
  virtual void mesh_adapted(const mesh::Domain& domain) = 0;

  // Collective. Runs `stages` one after the other on every local block. For each stage with
  // checksum set, the result holds the global sum of each of its variables (empty otherwise).
  // A mapper may start a stage before the previous one has ended wherever the graph allows, and
  // keep checksum reductions in flight meanwhile; everything is complete on return.
  virtual std::vector<std::vector<double>> run_stages(mesh::Domain& domain,
                                                      std::span<const StageWork> stages) = 0;
  // One stage.
  std::vector<double> advance(mesh::Domain& domain, const StageWork& work) {
    return run_stages(domain, std::span(&work, 1)).front();
  }

  // The mailbox the refinement consensus talks through.
  virtual octree::MarkMailbox& mailbox() = 0;

  // Collective. Redistributes the blocks so each rank holds an equal share of the total weight
  // along the curve (families that may coarsen stay together); returns blocks sent from here.
  // With `shares` (one per rank, the same on every rank), rank r's share of the weight is
  // proportional to shares[r] instead (sfc::share_bounds).
  virtual std::int64_t rebalance(mesh::Domain& domain, std::span<const std::int64_t> weights,
                                 std::span<const double> shares = {}) = 0;

  // Collective. The balance of `rebalance` ahead of an adaptation: the cut the balance after
  // `plan` (made from this rank's leaves and `marks`) would make of the adapted leaves, weighted
  // by `adapted_weights` (one per leaf of plan.keys), applied to the leaves they come from.
  // `marks` travel with the blocks; a family that merges and goes to another rank is merged
  // first and travels as its parent, marked to stay. The plans are left for the adaptation to
  // rebuild, so the caller makes the plan again from the new leaves and adapts right after.
  // Returns the blocks sent from here (such a parent counts one). `shares` as for rebalance.
  // `along`: the adapted weights of the ranks before this one and of all, when the caller has
  // them (else one more collective finds them).
  virtual std::int64_t rebalance_for_adapt(
      mesh::Domain& domain, const octree::AdaptPlan& plan,
      std::span<const std::int64_t> adapted_weights, std::vector<std::int8_t>& marks,
      std::span<const double> shares = {},
      std::optional<comm::Communicator::PrefixSum> along = std::nullopt) = 0;

  // Collective. Moves the leading leaves of a family that starts on an earlier rank to that
  // rank, so every family that may coarsen is whole on one rank before marks are computed.
  // Returns the blocks sent from here.
  virtual std::int64_t gather_families(mesh::Domain& domain) = 0;

  // This rank's blocks along the ownership curve (indices into domain.leaves) and, for each
  // position, the first position of its family when the whole family may coarsen here.
  struct CurveView {
    std::vector<std::size_t> order;
    std::vector<std::size_t> family_start;
  };
  virtual CurveView curve_view(const mesh::Domain& domain) const = 0;
  // The rank whose range of the curve holds k (or the leaf covering k), as of the last
  // mesh_changed or mesh_adapted: the same answer on every rank.
  virtual int owner(const octree::Key& k) const = 0;

  // Collective. Sends each local block i to rank targets[i] (with its cost record); returns
  // the blocks sent from here.
  virtual std::int64_t migrate_blocks(mesh::Domain& domain, std::span<const int> targets) = 0;

  // This rank's share of the root blocks, in curve order.
  virtual std::vector<octree::Key> initial_roots(const octree::RootGrid& grid) const = 0;

  // Number of ranks this one exchanges ghosts with, per axis and in all.
  virtual CommPartners comm_partners() const = 0;

  // Collective. The stage graph of the current mesh over `stages` stages as Graphviz DOT: the
  // whole graph on rank 0, empty elsewhere.
  virtual std::string graph_dot(const mesh::Domain& domain, bool edges, int stages) = 0;

  // The kernels every stage runs (which back end, and how often each ran).
  virtual const StageKernels& kernels() const = 0;

  // Where task, message, reduction and mesh events go (nullptr: nowhere).
  virtual void set_trace(Trace* trace) = 0;

  // Worker threads per rank.
  virtual int threads() const = 0;

  virtual std::string name() const = 0;
};

}  // namespace miniamr::runtime
