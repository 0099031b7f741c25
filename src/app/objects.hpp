// The refinement-driving objects of the reference miniAMR: the block/object intersection tests,
// the per-block initial refinement mark, movement and the --time step size.
//
// Everything here reproduces the reference's floating-point evaluation exactly (strict
// comparisons, quotient-then-square, left-to-right sums, movement by repeated addition),
// because one flipped comparison changes the mesh and so every block count after it.
// Its known quirks are kept on purpose and named where they occur.
#pragma once

#include <array>
#include <span>
#include <string>
#include <vector>

#include "app/config.hpp"
#include "octree/geometry.hpp"
#include "octree/key.hpp"

namespace miniamr::app {

// Object types, numbered as in the reference (--object's first integer).
namespace object_type {
inline constexpr int kSurfaceBox = 0;
inline constexpr int kSolidBox = 1;
inline constexpr int kSurfaceSpheroid = 2;
inline constexpr int kSolidSpheroid = 3;
// 4..15: hemispheroids; even = surface, odd = solid. Pairs (4,5), (6,7), ... keep the +x, -x,
// +y, -y, +z, -z half respectively.
inline constexpr int kFirstHemispheroid = 4;
inline constexpr int kLastHemispheroid = 15;
// 16..19 are undefined. Cylinders: even = surface, odd = solid; axis x, y, z.
inline constexpr int kSurfaceCylinderX = 20;
inline constexpr int kSolidCylinderX = 21;
inline constexpr int kSurfaceCylinderY = 22;
inline constexpr int kSolidCylinderY = 23;
inline constexpr int kSurfaceCylinderZ = 24;
inline constexpr int kSolidCylinderZ = 25;
}  // namespace object_type

// Bounce modes (--object's second integer).
namespace bounce_mode {
inline constexpr int kNone = 0;           // the object may leave the cube
inline constexpr int kReflectCentre = 1;  // the centre reflects off the cube's faces
// The reference's `ref/` code means "the surface reflects" but a dangling `else` attaches that
// branch to the bounce-1 test, so it can never run: bounce 2 moves exactly like bounce 0.
// We reproduce that, since the block counts depend on it.
inline constexpr int kReflectSurfaceInert = 2;
}  // namespace bounce_mode

// True when the block box intersects the object per the reference's test for its type, quirks
// included (surface box, surface cylinder crosses_x bug). Objects with any size < 0 and
// undefined types never intersect.
bool intersects(const Object& obj, const octree::Box& box);
// True when any object intersects the box; objects are tried in order.
bool intersects_any(std::span<const Object> objs, const octree::Box& box);

// How far --refine_ghost grows a block's box per side, in the reference's own units and order:
// first[d] = e1 = (2*(h/n_d))/M_d, second[d] = e2 = ((2h)/n_d)/M_d, with h = 2^(R-L) and
// M_d = N_d*2^(R+1) (both one cell of a level-L block).
struct GhostMargins {
  std::array<double, 3> first{};
  std::array<double, 3> second{};
};
GhostMargins refine_ghost_margins(int level, const octree::RootGrid& grid, int num_refine,
                                  std::array<int, 3> cells);

// Initial refinement mark of a leaf from the objects: 1 = refine, 0 = keep, -1 = may coarsen.
// Without refine_ghost: 1 if the block's box intersects any object, else -1.
// With refine_ghost: the box grown by e1 -> 1 if it intersects; else if level > 0, grown again
// by e2 -> 0 if it intersects; else -1. The caller applies the level-R cap and family rules.
int object_mark(std::span<const Object> objs, const octree::Key& key, const octree::RootGrid& grid,
                int num_refine, std::array<int, 3> cells, bool refine_ghost);

// Advances every object by one timestep of length delta: objects in order, directions x, y, z;
// centre += delta*move, size += delta*inc, then bounce.
void move_objects(std::vector<Object>& objs, double delta);

// The --time mode step: 1 / max over objects and directions of (|m_d|+|inc_d|)*M_d*n_d, or 1 if
// that maximum is 0. The scan stops at the first object with a negative size or lying
// entirely outside the cube in some direction.
double time_step(std::span<const Object> objs, const octree::RootGrid& grid, int num_refine,
                 std::array<int, 3> cells);

// Human-readable names for the report.
std::string object_type_name(int type);
std::string bounce_name(int bounce);

}  // namespace miniamr::app
