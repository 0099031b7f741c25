// Kokkos back end of the fixed stencils (MINIAMR_ENABLE_KOKKOS; the runtime sees
// MINIAMR_HAVE_KOKKOS). Kokkos stays out of this header, so callers need neither its headers nor
// its flags.
//
// Results are bitwise those of the native stencil::stencil7 / stencil27: every cell is computed
// with the same additions in the same order (-ffp-contract=off here, --fmad=false for CUDA), and
// the returned sum is stencil::interior_sum of the updated block, which is the order the native
// kernels' fused checksums use.
//
// Blocks live in host memory. On a host memory space (Serial, OpenMP, Threads) the kernels work
// on the block's own storage through an unmanaged View, one work item per row; on a device space
// (CUDA, HIP, SYCL) each call copies the variable to a device View and the result back
// (deep_copy), one work item per cell. Both paths build for any Kokkos; the tests run both.
//
// Threads: calls are serialised by a lock (one Kokkos kernel at a time; parallelism comes from
// the execution space), so calling from several host threads is safe but gains nothing.
#pragma once

#include <string>

#include "stencil/block.hpp"

namespace miniamr::stencil_kokkos {

// Initialises Kokkos (it takes its --kokkos-* arguments out of argv) unless it already is;
// call after MPI_Init. Further calls do nothing.
void initialize(int& argc, char** argv);

// Releases this back end's work Views and finalises Kokkos if initialize() started it; call
// before MPI_Finalize. Does nothing when not initialised.
void finalize();

// True between initialize() and finalize(): the stencils below may be called.
bool available();

// The Kokkos this back end was built with, e.g. "3.4.1 (Serial)".
std::string version();

// Name of the execution space the kernels run on ("Serial", "OpenMP", "Cuda", ...).
const char* execution_space_name();

// Same contracts and bitwise the same results as stencil::stencil7 / stencil27 (ghosts filled;
// edge and corner ghosts for the 27-point one): updates the interior of `var` in place and
// returns the sum of the new interior values in stencil::interior_sum's order. No scratch
// argument: the back end keeps its own work Views, grown on demand.
double stencil7(stencil::Block& block, int var);
double stencil27(stencil::Block& block, int var);

}  // namespace miniamr::stencil_kokkos
