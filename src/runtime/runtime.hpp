// The seam between the driver and the back ends: what to run, not how.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "octree/refine.hpp"
#include "runtime/domain.hpp"
#include "runtime/mpi.hpp"
#include "runtime/timers.hpp"
#include "stencil/exact_sum.hpp"
#include "stencil/ghost_fill.hpp"
#include "stencil/variable_kernels.hpp"

namespace miniamr::runtime {

// One stage: fill the ghosts of `vars` and apply the stencil to each, exchanging ghosts in
// groups of `group` variables (comm_vars).
struct StageWork {
  int stencil = 7;              // 7, 27 or 0 ("variable work")
  stencil::VarRange vars;       // all variables of the stage
  int group = 0;                // variables per ghost-exchange group (0: all at once)
  int num_vars = 0;             // all variables (the variable kernels mix them)
  std::int64_t calc_stage = 0;  // running stage counter (selects the variable kernel)
  bool checksum = false;        // also add each variable's new block sums to `sums`
  const stencil::VariableCoeffs* coeffs = nullptr;  // stencil 0 only
  bool measure_cost = false;  // keep Domain::cost up to date (measured load-balance weights)
};

struct CommPartners {
  std::array<int, 3> axis{0, 0, 0};
  int total = 0;   // sum over axes (the reference's "total")
  int unique = 0;  // distinct ranks
};

class Runtime {
 public:
  virtual ~Runtime() = default;

  virtual const Communicator& comm() const = 0;
  virtual Timers& timers() = 0;

  // Called after every change of the local leaves (adapt, migration) to rebuild plans.
  virtual void mesh_changed(const Domain& domain) = 0;

  // Advances every local block by one stage. When work.checksum is set, sums[v - vars.v0]
  // gains the sum of each block's new values of variable v.
  virtual void advance(Domain& domain, const StageWork& work,
                       std::span<stencil::ExactSum> sums) = 0;

  // The mailbox the refinement consensus talks through.
  virtual octree::MarkMailbox& mailbox() = 0;

  // Collective. Redistributes the blocks so each rank holds an equal share of the total weight
  // along the curve (families that may coarsen stay together); returns blocks sent from here.
  virtual std::int64_t rebalance(Domain& domain, std::span<const std::int64_t> weights) = 0;

  // Collective. Moves the leading leaves of a family that starts on an earlier rank to that
  // rank, so every family that may coarsen is whole on one rank before marks are computed.
  // Returns the blocks sent from here.
  virtual std::int64_t gather_families(Domain& domain) = 0;

  // This rank's share of the root blocks, in curve order.
  virtual std::vector<octree::Key> initial_roots(const octree::RootGrid& grid) const = 0;

  // Number of ranks this one exchanges ghosts with, per axis and in all.
  virtual CommPartners comm_partners() const = 0;

  virtual std::string name() const = 0;
};

}  // namespace miniamr::runtime
