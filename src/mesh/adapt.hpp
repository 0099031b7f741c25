// The local half of an adaptation: this rank's blocks of the adapted mesh made from its old ones.
#pragma once

#include "mesh/domain.hpp"
#include "octree/refine.hpp"

namespace miniamr::mesh {

// Replaces the domain's leaves, blocks and cost records by those of `plan` (made from the
// domain's leaves): kept blocks move over, a merged family becomes its parent (its cost the
// children's mean), a split block's children take its values and its cost. Involves no other
// rank; Mesh::adapted then rebuilds the plans (collective). Storage comes from and returns to
// domain.spare; merges come first, so that the splits after them take storage already mapped,
// and the peak is the old blocks plus 7 per split plus the parent being split. Throws
// std::bad_alloc when storage runs out, leaving the domain's blocks unusable (its leaves are
// then the old ones): the caller ends the run (app::LocalAttempt, whose vote rides on
// Mesh::adapted's exchange).
void adapt_blocks(Domain& domain, const octree::AdaptPlan& plan);

}  // namespace miniamr::mesh
