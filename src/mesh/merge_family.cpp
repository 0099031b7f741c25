#include "mesh/merge_family.hpp"

#include <array>

#include "stencil/split_coarsen.hpp"

namespace miniamr::mesh {

double merged_cost(std::span<const double, 8> costs) {
  double cost = 0.0;
  for (const double c : costs) cost += c / 8;
  return cost;
}

void merge_into(std::span<stencil::Block, 8> children, stencil::Block& parent,
                stencil::BlockPool& pool) {
  std::array<const stencil::Block*, 8> from{};
  for (std::size_t c = 0; c < 8; ++c) from[c] = &children[c];
  stencil::coarsen_into(from, parent);
  for (stencil::Block& child : children) pool.give(child);
}

MergedFamily merge_family(std::span<stencil::Block, 8> children, std::span<const double, 8> costs,
                          stencil::BlockPool& pool) {
  MergedFamily m{pool.take(children[0].shape()), merged_cost(costs)};
  merge_into(children, m.block, pool);
  return m;
}

}  // namespace miniamr::mesh
