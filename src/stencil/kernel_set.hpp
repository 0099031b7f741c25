// The stencil layer's hot kernels, compiled once per x86-64 instruction-set level and chosen at
// run time (--isa), so one portable binary uses AVX2 or AVX-512 where the machine has them.
//
// A variant is the baseline function compiled again with a target attribute and `flatten`, so
// every helper it calls (the row kernels, LaneSum, the ghost-fill rules) is inlined into it and
// compiled for that level; the helpers' own out-of-line copies stay baseline code, which keeps a
// binary safe on machines without the wider units. The variants do the same operations in the
// same order (explicit vector types and lanes, never a reassociated sum, no FMA contraction:
// -ffp-contract=off), so their results are bitwise those of the baseline. The compact 8^3 sweep
// (compact_stencil.hpp) is not in the set: it is AVX-512 code, used where
// compact_stencil7_supported().
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "stencil/block.hpp"
#include "stencil/ghost_fill.hpp"
#include "stencil/ghost_layers.hpp"
#include "stencil/variable_kernels.hpp"

namespace miniamr::stencil {

enum class Isa {
  kBaseline,  // x86-64 (SSE2); the only level on other architectures
  kAvx2,      // x86-64-v3: AVX2
  kAvx512,    // x86-64-v4: AVX-512
};

// "x86-64", "x86-64-v3", "x86-64-v4" (the compilers' names of the levels).
std::string_view isa_name(Isa isa);
std::optional<Isa> parse_isa(std::string_view name);
// Whether this build has the variant and this machine runs it.
bool isa_supported(Isa isa);
// The widest supported level.
Isa best_isa();

struct KernelSet {
  Isa isa = Isa::kBaseline;
  double (*stencil7)(Block& block, int var, std::span<double> scratch);
  double (*stencil7_from)(Block& block, int var, const GhostLayers& layers,
                          std::span<double> scratch);
  double (*stencil27)(Block& block, int var, std::span<double> scratch);
  double (*stencil_variable)(Block& block, int var, std::int64_t calc_stage,
                             const VariableCoeffs& coeffs, std::span<double> scratch);
  void (*fill_direct)(Block& dst, const Block& src, const FaceLink& link, VarRange vars,
                      bool with_edges);
  void (*fill_boundary)(Block& block, int face, VarRange vars, bool with_edges);
  std::size_t (*pack)(const Block& src, const FaceLink& link, VarRange vars, bool with_edges,
                      std::span<double> out);
  std::size_t (*unpack)(Block& dst, const FaceLink& link, VarRange vars, bool with_edges,
                        std::span<const double> in);
  // The forms between compact senders and dense ghost layers (ghost_fill.hpp).
  void (*fill_layer)(double* layer, std::ptrdiff_t layer_next, const double* src,
                     std::ptrdiff_t src_next, const BlockShape& shape, const FaceLink& link,
                     VarRange vars);
  std::size_t (*pack_compact)(const double* src, std::ptrdiff_t src_next, const BlockShape& shape,
                              const FaceLink& link, VarRange vars, std::span<double> out);
  std::size_t (*unpack_layer)(double* layer, std::ptrdiff_t layer_next, const BlockShape& shape,
                              const FaceLink& link, VarRange vars, std::span<const double> in);
};

// The kernels of `isa`, which must be supported.
const KernelSet& kernel_set(Isa isa);

}  // namespace miniamr::stencil
