// The numerics of one block's stage, shared by every mapper: which kernel a variable uses
// (7-point, 27-point, the variable-work kernels; native or Kokkos) and the per-block cost
// record. Both runtimes call exactly this, so they cannot compute different bits.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "runtime/compute_model.hpp"
#include "stencil/block.hpp"
#include "stencil/ghost_fill.hpp"
#include "stencil/ghost_layers.hpp"
#include "stencil/kernel_set.hpp"
#include "stencil/variable_kernels.hpp"

namespace miniamr::mesh {
struct Domain;
}  // namespace miniamr::mesh

namespace miniamr::runtime {

// One stage: fill the ghosts of `vars` and apply the stencil to each, exchanging ghosts in
// groups of `group` variables (comm_vars).
struct StageWork {
  int stencil = 7;              // 7, 27 or 0 ("variable work")
  stencil::VarRange vars;       // all variables of the stage
  int group = 0;                // variables per ghost-exchange group (0: all at once)
  int num_vars = 0;             // all variables (the variable kernels mix them)
  std::int64_t calc_stage = 0;  // running stage counter (selects the variable kernel)
  bool checksum = false;        // reduce each variable's new global sum at the end of the stage
  const stencil::VariableCoeffs* coeffs = nullptr;  // stencil 0 only
  bool measure_cost = false;  // keep mesh::Domain::cost up to date (measured load-balance weights)

  // Stencils that read edge and corner ghosts fill them axis by axis (x, then y, then z).
  bool reads_edges() const { return stencil != 7; }
};

enum class KernelBackend { kNative, kKokkos };

// Calls of each back end's kernels, so a report can say which one actually ran.
struct KernelCalls {
  std::int64_t native = 0;    // native 7- and 27-point sweeps
  std::int64_t kokkos = 0;    // Kokkos 7- and 27-point sweeps
  std::int64_t variable = 0;  // variable-work kernels (always native)
  std::int64_t compact = 0;   // of the native ones, 7-point sweeps of compact interiors
};

// "native", "kokkos", or "kokkos+native" (--kokkos with the variable-work kernels): which
// kernels those calls ran.
std::string backend_name(const KernelCalls& calls);

class StageKernels {
 public:
  // With a `model`, sweeps compute nothing and charge the model's cost instead (--compute
  // model): block values and sums then stay as they were.
  explicit StageKernels(KernelBackend backend = KernelBackend::kNative,
                        stencil::Isa isa = stencil::Isa::kBaseline,
                        std::optional<ComputeModel> model = std::nullopt);
  StageKernels(const StageKernels&) = delete;
  StageKernels& operator=(const StageKernels&) = delete;

  KernelBackend backend() const { return backend_; }
  // The native kernels (stencils and ghost fills) of the chosen instruction-set level.
  const stencil::KernelSet& native() const { return native_set_; }
  // Whether this build has the Kokkos back end.
  static bool has_kokkos();

  // Applies the stage's stencil to variables `vars` of `block` (ghosts filled) and writes each
  // variable's new interior sum to sums[v - vars.v0] when `sums` is not empty. Thread-safe.
  // `scratch` holds stencil::stencil_scratch_size(shape) doubles. A 7-point stage may read
  // ghost faces from other layers (`layers`, those of variable vars.v0, stepped from variable to
  // variable; stencil/ghost_layers.hpp), and copies out the layers `layers.copy` asks for.
  void sweep(stencil::Block& block, const StageWork& work, stencil::VarRange vars,
             std::span<double> scratch, std::span<double> sums,
             const stencil::GhostLayers* layers = nullptr) const;

  // Whether 7-point stages of blocks of `shape` can be swept compact (stencil/compact_stencil.hpp):
  // 8^3 blocks, the native kernels at the AVX-512 level, sweeps computed.
  bool compact(const stencil::BlockShape& shape) const;
  // sweep() of a 7-point stage for a block whose variables `vars` are stored compact, variable
  // vars.v0 at `u` and the next ones every stencil::kCompactCells doubles; `layers` as above,
  // stepped on to each variable in turn (so left at the last one). Counts nothing: a caller
  // adds its compact sweeps with count_compact() once it has made them, as an atomic add per
  // block would drain the store buffer of the sweep's stores.
  void sweep_compact(double* u, const StageWork& work, stencil::VarRange vars,
                     std::span<double> scratch, std::span<double> sums,
                     stencil::GhostLayers& layers) const;
  // Adds `sweeps` block-variable sweeps of sweep_compact() to calls().
  void count_compact(std::int64_t sweeps) const {
    compact_.fetch_add(sweeps, std::memory_order_relaxed);
  }

  // Whether the sweeps are modelled rather than computed.
  bool modelled() const { return model_.has_value(); }
  // The modelled cost follows the rank's block storage (cache or memory): called whenever the
  // rank's blocks change.
  void set_working_set(const mesh::Domain& domain);

  KernelCalls calls() const;
  std::string backend_name() const { return runtime::backend_name(calls()); }

 private:
  KernelBackend backend_;
  const stencil::KernelSet& native_set_;
  std::optional<ComputeModel> model_;
  double var_bytes_ = 0;  // storage of one variable of all the rank's blocks
  // native_: padded native sweeps; calls() adds compact_ to them.
  mutable std::atomic<std::int64_t> native_{0}, kokkos_{0}, variable_{0}, compact_{0};
};

// Blends one stage's measured seconds into a block's cost record (a moving average).
inline double blend_cost(double record, double seconds) {
  return record == 0.0 ? seconds : 0.75 * record + 0.25 * seconds;
}

}  // namespace miniamr::runtime
