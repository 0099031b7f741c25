#include "runtime/stage_kernels.hpp"

#include <algorithm>
#include <cassert>
#include <utility>

#include "mesh/domain.hpp"
#include "runtime/compute_charge.hpp"
#include "stencil/compact_stencil.hpp"
#include "stencil/stencil_kernels.hpp"
#ifdef MINIAMR_HAVE_KOKKOS
#include "stencil_kokkos/kokkos_stencil.hpp"
#endif

namespace miniamr::runtime {

StageKernels::StageKernels(KernelBackend backend, stencil::Isa isa,
                           std::optional<ComputeModel> model)
    : backend_(backend), native_set_(stencil::kernel_set(isa)), model_(std::move(model)) {
  assert(backend != KernelBackend::kKokkos || has_kokkos());
}

void StageKernels::set_working_set(const mesh::Domain& domain) {
  var_bytes_ =
      double(domain.blocks.size()) * double(domain.shape.var_stride()) * double(sizeof(double));
}

bool StageKernels::has_kokkos() {
#ifdef MINIAMR_HAVE_KOKKOS
  return true;
#else
  return false;
#endif
}

void StageKernels::sweep(stencil::Block& block, const StageWork& work, stencil::VarRange vars,
                         std::span<double> scratch, std::span<double> sums,
                         const stencil::GhostLayers* layers_v0) const {
  assert(layers_v0 == nullptr || work.stencil == 7);
  if (model_) {
    // A stage sweeps one group of variables over every block before the next group, so the
    // data it streams through is the group's variables of all the rank's blocks.
    const ComputeCost cost = model_->at(var_bytes_ * double(vars.count()));
    charge_compute(sweep_seconds(cost, work.stencil, block.shape().interior_cells(), vars.count()));
    std::fill(sums.begin(), sums.end(), 0.0);  // no sum is claimed for values never computed
    return;
  }
  const bool kokkos = backend_ == KernelBackend::kKokkos && work.stencil != 0;
  // Ghost layers read from elsewhere, stepped from variable to variable.
  const bool from = layers_v0 != nullptr;
  stencil::GhostLayers layers = from ? *layers_v0 : stencil::GhostLayers{};
  for (int v = vars.v0; v < vars.v1; ++v) {
    double s = 0;
    if (v > vars.v0 && from) layers.next_var();
    if (work.stencil == 0) {
      s = native_set_.stencil_variable(block, v, work.calc_stage, *work.coeffs, scratch);
#ifdef MINIAMR_HAVE_KOKKOS
    } else if (kokkos) {
      // The Kokkos kernels read the block's own ghosts and copy out no layer: both are done
      // first.
      if (from) {
        stencil::copy_out_layers(block, v, layers);
        stencil::copy_ghost_layers(block, v, layers);
      }
      s = work.stencil == 7 ? stencil_kokkos::stencil7(block, v)
                            : stencil_kokkos::stencil27(block, v);
#endif
    } else if (from) {
      s = native_set_.stencil7_from(block, v, layers, scratch);
    } else {
      s = work.stencil == 7 ? native_set_.stencil7(block, v, scratch)
                            : native_set_.stencil27(block, v, scratch);
    }
    if (!sums.empty()) sums[std::size_t(v - vars.v0)] = s;
  }
  // One relaxed add per block, not per variable: the counters only say which kernels ran.
  auto& counter = work.stencil == 0 ? variable_ : kokkos ? kokkos_ : native_;
  counter.fetch_add(vars.count(), std::memory_order_relaxed);
}

bool StageKernels::compact(const stencil::BlockShape& shape) const {
  return !model_ && backend_ == KernelBackend::kNative &&
         native_set_.isa == stencil::Isa::kAvx512 && stencil::compact_stencil7_supported() &&
         stencil::compact_shape(shape);
}

void StageKernels::sweep_compact(double* u, [[maybe_unused]] const StageWork& work,
                                 stencil::VarRange vars, std::span<double> scratch,
                                 std::span<double> sums, stencil::GhostLayers& layers) const {
  assert(work.stencil == 7 && !model_);
  for (int v = vars.v0; v < vars.v1; ++v, u += stencil::kCompactCells) {
    if (v > vars.v0) layers.next_var();
    const double s = stencil::compact_stencil7(u, layers, scratch);
    if (!sums.empty()) sums[std::size_t(v - vars.v0)] = s;
  }
}

KernelCalls StageKernels::calls() const {
  const std::int64_t compact = compact_.load();
  return {native_.load() + compact, kokkos_.load(), variable_.load(), compact};
}

std::string backend_name(const KernelCalls& c) {
  if (c.kokkos > 0) return c.variable > 0 || c.native > 0 ? "kokkos+native" : "kokkos";
  return "native";
}

}  // namespace miniamr::runtime
