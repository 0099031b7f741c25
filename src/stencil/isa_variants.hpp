// Declarations of the instruction-set variants of the kernels (see kernel_set.hpp); each kernel
// file defines its functions' variants with MINIAMR_KERNEL_VARIANT (the 7-point stencil's own,
// which divide differently: stencil_kernels.cpp), and kernel_set.cpp collects them. Internal to
// the stencil layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "stencil/block.hpp"
#include "stencil/ghost_fill.hpp"
#include "stencil/ghost_layers.hpp"
#include "stencil/variable_kernels.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MINIAMR_ISA_VARIANTS 1
// X(namespace, target attribute) for every level above the baseline.
#define MINIAMR_FOR_EACH_WIDER_ISA(X) X(avx2, "arch=x86-64-v3") X(avx512, "arch=x86-64-v4")
#else
#define MINIAMR_FOR_EACH_WIDER_ISA(X)
#endif

// Defines the variant of kernel `name` (returning `ret`, with the parenthesised `params` and
// `args`) declared below: the baseline function, inlined whole into a copy compiled for `tgt`.
#define MINIAMR_KERNEL_VARIANT(ns, target, ret, name, params, args) \
  namespace ns {                                                    \
  ret name params {                                                 \
    return ::miniamr::stencil::name args;                           \
  }                                                                 \
  }

#define MINIAMR_DECLARE_KERNELS(ns, tgt)                                                          \
  namespace ns {                                                                                  \
  [[gnu::target(tgt), gnu::flatten]] double stencil7(Block&, int, std::span<double>);             \
  [[gnu::target(tgt), gnu::flatten]] double stencil7_from(Block&, int, const GhostLayers&,        \
                                                          std::span<double>);                     \
  [[gnu::target(tgt), gnu::flatten]] double stencil27(Block&, int, std::span<double>);            \
  [[gnu::target(tgt), gnu::flatten]] double stencil_variable(Block&, int, std::int64_t,           \
                                                             const VariableCoeffs&,               \
                                                             std::span<double>);                  \
  [[gnu::target(tgt), gnu::flatten]] void fill_direct(Block&, const Block&, const FaceLink&,      \
                                                      VarRange, bool);                            \
  [[gnu::target(tgt), gnu::flatten]] void fill_boundary(Block&, int, VarRange, bool);             \
  [[gnu::target(tgt), gnu::flatten]] std::size_t pack(const Block&, const FaceLink&, VarRange,    \
                                                      bool, std::span<double>);                   \
  [[gnu::target(tgt), gnu::flatten]] std::size_t unpack(Block&, const FaceLink&, VarRange, bool,  \
                                                        std::span<const double>);                 \
  [[gnu::target(tgt), gnu::flatten]] void fill_layer(double*, std::ptrdiff_t, const double*,      \
                                                     std::ptrdiff_t, const BlockShape&,           \
                                                     const FaceLink&, VarRange);                  \
  [[gnu::target(tgt), gnu::flatten]] std::size_t pack_compact(const double*, std::ptrdiff_t,      \
                                                              const BlockShape&, const FaceLink&, \
                                                              VarRange, std::span<double>);       \
  [[gnu::target(tgt), gnu::flatten]] std::size_t unpack_layer(double*, std::ptrdiff_t,            \
                                                              const BlockShape&, const FaceLink&, \
                                                              VarRange, std::span<const double>); \
  }

namespace miniamr::stencil {
MINIAMR_FOR_EACH_WIDER_ISA(MINIAMR_DECLARE_KERNELS)
}  // namespace miniamr::stencil
