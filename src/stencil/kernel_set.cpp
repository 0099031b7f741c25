#include "stencil/kernel_set.hpp"

#include <cassert>

#include "stencil/isa_variants.hpp"
#include "stencil/stencil_kernels.hpp"

namespace miniamr::stencil {

namespace {

#define MINIAMR_KERNEL_SET(isa, ns)                                                    \
  KernelSet {                                                                          \
    isa, &ns::stencil7, &ns::stencil7_from, &ns::stencil27, &ns::stencil_variable,     \
        &ns::fill_direct, &ns::fill_boundary, &ns::pack, &ns::unpack, &ns::fill_layer, \
        &ns::pack_compact, &ns::unpack_layer                                           \
  }

constexpr KernelSet kBaselineSet = MINIAMR_KERNEL_SET(Isa::kBaseline, ::miniamr::stencil);
#ifdef MINIAMR_ISA_VARIANTS
constexpr KernelSet kAvx2Set = MINIAMR_KERNEL_SET(Isa::kAvx2, avx2);
constexpr KernelSet kAvx512Set = MINIAMR_KERNEL_SET(Isa::kAvx512, avx512);
#endif

}  // namespace

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::kAvx2:
      return "x86-64-v3";
    case Isa::kAvx512:
      return "x86-64-v4";
    case Isa::kBaseline:
      break;
  }
  return "x86-64";
}

std::optional<Isa> parse_isa(std::string_view name) {
  for (const Isa isa : {Isa::kBaseline, Isa::kAvx2, Isa::kAvx512})
    if (name == isa_name(isa)) return isa;
  return std::nullopt;
}

bool isa_supported(Isa isa) {
#ifdef MINIAMR_ISA_VARIANTS
  switch (isa) {
    // The features of the levels that code generation may use (names both GCC and clang know).
    case Isa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
    case Isa::kAvx512:
      return isa_supported(Isa::kAvx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512cd") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    case Isa::kBaseline:
      return true;
  }
#endif
  return isa == Isa::kBaseline;
}

Isa best_isa() {
  for (const Isa isa : {Isa::kAvx512, Isa::kAvx2})
    if (isa_supported(isa)) return isa;
  return Isa::kBaseline;
}

const KernelSet& kernel_set(Isa isa) {
  assert(isa_supported(isa));
#ifdef MINIAMR_ISA_VARIANTS
  if (isa == Isa::kAvx2) return kAvx2Set;
  if (isa == Isa::kAvx512) return kAvx512Set;
#endif
  return kBaselineSet;
}

}  // namespace miniamr::stencil
