// How many blocks the mesh will have at each coming timestep, from the objects' own motion:
// what the progress line's time left needs (the work of a timestep follows its blocks).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "app/config.hpp"

namespace miniamr::app {

// The leaves of the octree refined wherever object_mark asks for refinement, down to
// num_refine levels. Without the 2:1 closure and the limit on levels per step this is the
// mesh's shape rather than its count; `budget` bounds the marks tested (0 when exceeded).
std::int64_t model_leaves(const Config& config, std::span<const Object> objects,
                          std::int64_t& budget);

// model_leaves after each timestep from `first` to the run's last, the objects moved as the run
// moves them (every timestep by `delta`; the mesh changes at refinement steps only). A forecast
// that would test more than about a million marks stops early and holds its last count.
class MeshForecast {
 public:
  MeshForecast() = default;
  // `objects` as they are before timestep `first` moves them.
  MeshForecast(const Config& config, std::vector<Object> objects, int first, double delta);
  bool empty() const { return leaves_.empty(); }
  // The model's leaves after timestep ts (first - 1: as the mesh is now; clamped to the range).
  double leaves(int ts) const;

 private:
  int first_ = 0;
  std::vector<double> leaves_;  // [ts - first_ + 1]: after timestep ts; [0] before first_
};

}  // namespace miniamr::app
