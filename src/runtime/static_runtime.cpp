#include "runtime/static_runtime.hpp"

#include "stencil/plane_sweep.hpp"
#include "stencil/stencil_kernels.hpp"

namespace miniamr::runtime {

StaticRuntime::StaticRuntime(MPI_Comm parent) : comm_(parent) {}

void StaticRuntime::mesh_changed(const Domain& domain) {
  plan_ = build_ghost_plan(domain);
  scratch_.resize(stencil::stencil_scratch_size(domain.shape));
}

void StaticRuntime::fill_ghosts(Domain& domain, const StageWork& work) {
  MINIAMR_TIMED(timers_, kCommunicate);
  // Edges and corners are needed by the 27-point kernels (also inside the variable work);
  // they fill in sequence when the axes go x, y, z.
  const bool edges = work.stencil != 7;
  for (int axis = 0; axis < 3; ++axis) {
    for (const LocalLink& l : plan_.local[std::size_t(axis)])
      stencil::fill_direct(domain.blocks[l.dst], domain.blocks[l.src], l.link, work.vars, edges);
    for (const BoundaryFace& b : plan_.boundary[std::size_t(axis)])
      stencil::fill_boundary(domain.blocks[b.block], b.face, work.vars, edges);
  }
}

void StaticRuntime::sweep(Domain& domain, const StageWork& work,
                          std::span<stencil::ExactSum> sums) {
  MINIAMR_TIMED(timers_, kCompute);
  for (stencil::Block& b : domain.blocks) {
    for (int v = work.vars.v0; v < work.vars.v1; ++v) {
      double s = 0;
      switch (work.stencil) {
        case 7:
          s = stencil::stencil7(b, v, scratch_);
          break;
        case 27:
          s = stencil::stencil27(b, v, scratch_);
          break;
        default:
          s = stencil::stencil_variable(b, v, work.calc_stage, *work.coeffs, scratch_);
          break;
      }
      if (work.checksum) sums[std::size_t(v - work.vars.v0)].add(s);
    }
  }
}

void StaticRuntime::advance(Domain& domain, const StageWork& work,
                            std::span<stencil::ExactSum> sums) {
  fill_ghosts(domain, work);
  sweep(domain, work, sums);
}

}  // namespace miniamr::runtime
