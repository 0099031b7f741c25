#include "app/mesh_forecast.hpp"

#include <algorithm>

#include "app/objects.hpp"
#include "octree/key.hpp"
#include "octree/refine.hpp"

namespace miniamr::app {

namespace {

// Whether refinement follows timestep ts (as the driver decides it).
bool refines_at(const Config& c, int ts) {
  return c.uniform_refine == 0 && c.refine_freq > 0 && ts % c.refine_freq == 0;
}

}  // namespace

std::int64_t model_leaves(const Config& config, std::span<const Object> objects,
                          std::int64_t& budget) {
  const octree::RootGrid grid{config.root_blocks()};
  // Each mark tested spends one of the budget; once it is spent no leaf refines.
  const auto wanted = [&](const octree::Key& key) {
    if (budget <= 0) return 0;
    --budget;
    return object_mark(objects, key, grid, config.num_refine, config.block_cells(),
                       config.refine_ghost);
  };
  std::int64_t n = 0;
  for (int k = 0; k < grid.n[2]; ++k)
    for (int j = 0; j < grid.n[1]; ++j)
      for (int i = 0; i < grid.n[0]; ++i)
        n += octree::leaves_after(octree::root_key(i, j, k), config.num_refine, config.num_refine,
                                  wanted);
  return budget > 0 ? n : 0;
}

MeshForecast::MeshForecast(const Config& config, std::vector<Object> objects, int first,
                           double delta)
    : first_(first) {
  // A mesh refined uniformly, or never again, keeps its blocks: no forecast needed.
  if (config.uniform_refine != 0 || config.refine_freq <= 0 || config.num_tsteps < first) return;
  std::int64_t budget = std::int64_t{1} << 20;
  // The mesh as it is (that of the objects where they are now), then after each timestep.
  double now = double(model_leaves(config, objects, budget));
  if (now == 0) return;
  leaves_.reserve(std::size_t(config.num_tsteps - first + 2));
  leaves_.push_back(now);
  for (int ts = first; ts <= config.num_tsteps; ++ts) {
    move_objects(objects, delta);
    if (refines_at(config, ts) && budget > 0) {
      const std::int64_t n = model_leaves(config, objects, budget);
      if (n > 0) now = double(n);
    }
    leaves_.push_back(now);
  }
}

double MeshForecast::leaves(int ts) const {
  if (leaves_.empty()) return 0;
  const int i = std::clamp(ts - first_ + 1, 0, int(leaves_.size()) - 1);
  return leaves_[std::size_t(i)];
}

}  // namespace miniamr::app
