#include "mesh/merge_family.hpp"

#include <array>

#include "stencil/split_coarsen.hpp"

namespace miniamr::mesh {

MergedFamily merge_family(std::span<stencil::Block, 8> children, std::span<const double, 8> costs,
                          stencil::BlockPool& pool) {
  std::array<const stencil::Block*, 8> from{};
  MergedFamily m;
  for (std::size_t c = 0; c < 8; ++c) {
    from[c] = &children[c];
    m.cost += costs[c] / 8;
  }
  m.block = pool.take(children[0].shape());
  stencil::coarsen_into(from, m.block);
  for (stencil::Block& child : children) pool.give(child);
  return m;
}

}  // namespace miniamr::mesh
