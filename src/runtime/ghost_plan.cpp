#include "runtime/ghost_plan.hpp"

namespace miniamr::runtime {

stencil::Quadrant quadrant_of(const octree::Key& fine, int axis) {
  const int o = fine.octant();
  const int b = axis == 0 ? 1 : 0;  // the two other axes, in x,y,z order
  const int c = axis == 2 ? 1 : 2;
  return {(o >> b) & 1, (o >> c) & 1};
}

GhostPlan build_ghost_plan(const Domain& domain) {
  GhostPlan plan;
  const auto& leaves = domain.leaves;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const octree::Key& k = leaves[i];
    for (const octree::Face f : octree::kFaces) {
      const int face = static_cast<int>(f);
      const int axis = octree::axis(f);
      const octree::FaceLookup across = leaves.across(k, f, domain.grid);
      switch (across.relation) {
        case octree::Relation::kBoundary:
          plan.boundary[std::size_t(axis)].push_back({i, face});
          break;
        case octree::Relation::kSame:
          plan.local[std::size_t(axis)].push_back(
              {i, across.index[0], {stencil::GhostRelation::kSameLevel, face, {}}});
          break;
        case octree::Relation::kCoarser:
          plan.local[std::size_t(axis)].push_back(
              {i,
               across.index[0],
               {stencil::GhostRelation::kCoarseToFine, face, quadrant_of(k, axis)}});
          break;
        case octree::Relation::kFiner:
          for (int n = 0; n < across.count; ++n) {
            const std::size_t j = across.index[std::size_t(n)];
            plan.local[std::size_t(axis)].push_back(
                {i,
                 j,
                 {stencil::GhostRelation::kFineToCoarse, face, quadrant_of(leaves[j], axis)}});
          }
          if (across.count < 4)
            plan.remote[std::size_t(axis)].push_back(
                {k, *octree::face_neighbour(k, f, domain.grid), i, face});
          break;
        case octree::Relation::kNotHere:
          plan.remote[std::size_t(axis)].push_back(
              {k, *octree::face_neighbour(k, f, domain.grid), i, face});
          break;
      }
    }
  }
  return plan;
}

}  // namespace miniamr::runtime
