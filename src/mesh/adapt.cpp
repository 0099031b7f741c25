#include "mesh/adapt.hpp"

#include <span>
#include <utility>
#include <vector>

#include "mesh/merge_family.hpp"
#include "stencil/split_coarsen.hpp"

namespace miniamr::mesh {

void adapt_blocks(Domain& domain, const octree::AdaptPlan& plan) {
  std::vector<stencil::Block> old = std::move(domain.blocks);
  const std::vector<double> old_cost = std::move(domain.cost);
  const std::size_t n = plan.keys.size();
  std::vector<stencil::Block> fresh(n);
  std::vector<double> cost(n, 0.0);
  stencil::BlockPool& pool = domain.spare;
  // Every new block depends only on old ones, so the order of making them changes no value.
  for (std::size_t i = 0; i < n; ++i) {
    const octree::Origin& o = plan.origin[i];
    if (o.kind == octree::Origin::kKept) {
      fresh[i] = std::move(old[o.old_index]);
      cost[i] = old_cost[o.old_index];
    } else if (o.kind == octree::Origin::kMerged) {
      MergedFamily m = merge_family(std::span(old).subspan(o.old_index).first<8>(),
                                    std::span(old_cost).subspan(o.old_index).first<8>(), pool);
      fresh[i] = std::move(m.block);
      cost[i] = m.cost;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const octree::Origin& o = plan.origin[i];
    if (o.kind != octree::Origin::kSplit) continue;
    fresh[i] = pool.take(domain.shape);
    stencil::split_child_into(old[o.old_index], o.octant, fresh[i]);
    cost[i] = old_cost[o.old_index];                 // same cells, same work
    if (o.octant == 7) pool.give(old[o.old_index]);  // the eighth child was the last reader
  }
  domain.blocks = std::move(fresh);
  domain.cost = std::move(cost);
  domain.leaves = octree::LeafSet(plan.keys);
}

}  // namespace miniamr::mesh
