#include "app/objects.hpp"

#include <cmath>
#include <cstddef>

namespace miniamr::app {

namespace {

using octree::Box;

// ---------------------------------------------------------------------------------------------
// Per-direction predicates. The slab of an object in direction d is (c_d - s_d, c_d + s_d),
// each bound computed as one double operation, exactly as the reference does.

// The block's range and the slab share an open interval.
bool overlap(const Object& o, const Box& b, int d) {
  return b.hi[d] > o.center[d] - o.size[d] && b.lo[d] < o.center[d] + o.size[d];
}

// Exactly one face of the slab lies strictly inside the block's range. A block that contains
// the whole slab does not count as crossing it (the root of the surface-box quirk).
bool crosses(const Object& o, const Box& b, int d) {
  const double slab_lo = o.center[d] - o.size[d];
  const double slab_hi = o.center[d] + o.size[d];
  return (b.lo[d] < slab_lo && b.hi[d] < slab_hi) || (b.lo[d] > slab_lo && b.hi[d] > slab_hi);
}

bool has_negative_size(const Object& o) {
  return o.size[0] < 0.0 || o.size[1] < 0.0 || o.size[2] < 0.0;
}

// ---------------------------------------------------------------------------------------------
// Boxes.

// As coded in the reference: the y test is applied only when x does not cross, and the z test
// only when the block does not overlap in y. So a box inside a single block never refines it,
// a block crossing only the z faces is missed, and a block outside the box in y can be hit.
bool surface_box(const Object& o, const Box& b) {
  if (!overlap(o, b, 0)) return false;
  if (crosses(o, b, 0)) return overlap(o, b, 1) && overlap(o, b, 2);
  if (overlap(o, b, 1)) return crosses(o, b, 1) && overlap(o, b, 2);
  return overlap(o, b, 2) && crosses(o, b, 2);
}

bool solid_box(const Object& o, const Box& b) {
  return overlap(o, b, 0) && overlap(o, b, 1) && overlap(o, b, 2);
}

// ---------------------------------------------------------------------------------------------
// Spheroids and cylinder cross-sections.

// Where the centre lies relative to the block in one direction, with the block faces nearest
// to it (when outside) and farthest from it.
struct Side {
  bool inside = false;
  double near = 0.0;  // unused when inside
  double far = 0.0;
};

Side classify(double c, double lo, double hi) {
  if (c < lo) return {false, lo, hi};
  if (c > hi) return {false, hi, lo};
  return {true, 0.0, c < (lo + hi) / 2.0 ? hi : lo};
}

// ((p - c)/s)^2: the quotient first, then squared, as the reference does.
double scaled_square(double p, double c, double s) {
  const double t = (p - c) / s;
  return t * t;
}

// The spheroid test over the directions `dirs` (3 for spheroids, the 2 cross directions for
// cylinders), sums taken in the order of `dirs`. The solid test: all inside; or all but one
// inside and that one's near face within the size; or the near corner/edge inside (NEAR < 1).
// The surface test additionally requires the far corner outside (FAR > 1).
template <std::size_t K>
bool spheroid_test(const Object& o, const Box& b, const std::array<int, K>& dirs, bool surface) {
  std::array<Side, K> sides;
  std::size_t n_inside = 0;
  for (std::size_t k = 0; k < K; ++k) {
    const int d = dirs[k];
    sides[k] = classify(o.center[d], b.lo[d], b.hi[d]);
    if (sides[k].inside) ++n_inside;
  }
  if (surface) {
    double far = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
      far += scaled_square(sides[k].far, o.center[dirs[k]], o.size[dirs[k]]);
    }
    if (!(far > 1.0)) return false;
  }
  if (n_inside == K) return true;
  if (n_inside == K - 1) {
    for (std::size_t k = 0; k < K; ++k) {
      if (!sides[k].inside) {
        const int d = dirs[k];
        return std::abs(sides[k].near - o.center[d]) < o.size[d];
      }
    }
  }
  double near = 0.0;
  for (std::size_t k = 0; k < K; ++k) {
    if (!sides[k].inside) near += scaled_square(sides[k].near, o.center[dirs[k]], o.size[dirs[k]]);
  }
  return near < 1.0;
}

constexpr std::array<int, 3> kXyz{0, 1, 2};

// Hemispheroid `type` (4..15) discards hits on the removed side: pairs (4,5),(6,7) cut in x,
// (8,9),(10,11) in y, (12,13),(14,15) in z; the first pair of each axis keeps the + half.
bool on_removed_side(int type, const Object& o, const Box& b) {
  const int pair = (type - object_type::kFirstHemispheroid) / 2;  // 0..5
  const int d = pair / 2;
  const bool keeps_plus = pair % 2 == 0;
  return keeps_plus ? b.hi[d] < o.center[d] : b.lo[d] > o.center[d];
}

bool hemispheroid(const Object& o, const Box& b) {
  const bool surface = o.type % 2 == 0;
  return spheroid_test(o, b, kXyz, surface) && !on_removed_side(o.type, o, b);
}

// Cylinders 20..25: axis x, y, z with cross directions (y,z), (z,x), (x,y).
bool cylinder(const Object& o, const Box& b) {
  const int axis = (o.type - object_type::kSurfaceCylinderX) / 2;
  const bool surface = o.type % 2 == 0;
  const std::array<int, 2> cross{(axis + 1) % 3, (axis + 2) % 3};
  if (!overlap(o, b, axis)) return false;
  // Reference bug kept: the end-cap check uses crosses in x whatever the axis, so it is right
  // only for type 20. For 22/24 the caps of an interior cross-section are never surface.
  if (surface && !crosses(o, b, 0)) return spheroid_test(o, b, cross, true);
  return spheroid_test(o, b, cross, false);
}

// ---------------------------------------------------------------------------------------------
// Reference integer units (spec 2.1): a level-L block has half-width h = 2^(R-L) and the cube
// spans M_d = N_d * 2^(R+1) of them; both are exact in double.

double half_width(int level, int num_refine) {
  return std::ldexp(1.0, num_refine - level);
}

double mesh_size(const octree::RootGrid& grid, int num_refine, int d) {
  return std::ldexp(double(grid.n[d]), num_refine + 1);
}

void grow(Box& b, const std::array<double, 3>& e) {
  for (int d = 0; d < 3; ++d) {
    b.lo[d] -= e[d];
    b.hi[d] += e[d];
  }
}

bool entirely_outside_cube(const Object& o) {
  for (int d = 0; d < 3; ++d) {
    const double c = o.center[d];
    const double s = o.size[d];
    if ((c < 0.0 && c + s < 0.0) || (c > 1.0 && c - s > 1.0)) return true;
  }
  return false;
}

}  // namespace

bool intersects(const Object& obj, const Box& box) {
  if (has_negative_size(obj)) return false;
  namespace t = object_type;
  switch (obj.type) {
    case t::kSurfaceBox:
      return surface_box(obj, box);
    case t::kSolidBox:
      return solid_box(obj, box);
    case t::kSurfaceSpheroid:
      return spheroid_test(obj, box, kXyz, true);
    case t::kSolidSpheroid:
      return spheroid_test(obj, box, kXyz, false);
    default:
      break;
  }
  if (obj.type >= t::kFirstHemispheroid && obj.type <= t::kLastHemispheroid) {
    return hemispheroid(obj, box);
  }
  if (obj.type >= t::kSurfaceCylinderX && obj.type <= t::kSolidCylinderZ) {
    return cylinder(obj, box);
  }
  // Undefined (16..19 and anything else). The reference prints "undefined object" on every
  // test; the option parser reports it once instead.
  return false;
}

bool intersects_any(std::span<const Object> objs, const Box& box) {
  for (const Object& o : objs) {
    if (intersects(o, box)) return true;
  }
  return false;
}

GhostMargins refine_ghost_margins(int level, const octree::RootGrid& grid, int num_refine,
                                  std::array<int, 3> cells) {
  const double h = half_width(level, num_refine);
  GhostMargins m;
  for (int d = 0; d < 3; ++d) {
    const double n = double(cells[d]);
    const double mesh = mesh_size(grid, num_refine, d);
    m.first[d] = (2.0 * (h / n)) / mesh;
    m.second[d] = ((2.0 * h) / n) / mesh;
  }
  return m;
}

int object_mark(std::span<const Object> objs, const octree::Key& key, const octree::RootGrid& grid,
                int num_refine, std::array<int, 3> cells, bool refine_ghost) {
  Box box = octree::extent(key, grid);
  if (!refine_ghost) return intersects_any(objs, box) ? 1 : -1;

  const GhostMargins m = refine_ghost_margins(key.level, grid, num_refine, cells);
  grow(box, m.first);
  if (intersects_any(objs, box)) return 1;
  // A ghost-cell-wide hit one cell further out: the parent would refine, so do not coarsen.
  // Root blocks cannot coarsen anyway, so the reference skips the test there.
  if (key.level > 0) {
    grow(box, m.second);
    if (intersects_any(objs, box)) return 0;
  }
  return -1;
}

void move_objects(std::vector<Object>& objs, double delta) {
  for (Object& o : objs) {
    for (int d = 0; d < 3; ++d) {
      o.center[d] += delta * o.move[d];
      o.size[d] += delta * o.inc[d];
      // Only bounce 1 acts; bounce 2 is inert like in the reference (see kReflectSurfaceInert).
      if (o.bounce == bounce_mode::kReflectCentre) {
        if (o.center[d] >= 1.0) {
          o.center[d] = 2.0 - o.center[d];
          o.move[d] = -o.move[d];
        } else if (o.center[d] <= 0.0) {
          o.center[d] = 0.0 - o.center[d];
          o.move[d] = -o.move[d];
        }
      }
    }
  }
}

double time_step(std::span<const Object> objs, const octree::RootGrid& grid, int num_refine,
                 std::array<int, 3> cells) {
  double max_rate = 0.0;
  for (const Object& o : objs) {
    // The reference breaks out of the scan here (later objects are not considered either).
    if (has_negative_size(o) || entirely_outside_cube(o)) break;
    for (int d = 0; d < 3; ++d) {
      const double rate = (std::abs(o.move[d]) + std::abs(o.inc[d])) *
                          mesh_size(grid, num_refine, d) * double(cells[d]);
      if (rate > max_rate) max_rate = rate;
    }
  }
  return max_rate == 0.0 ? 1.0 : 1.0 / max_rate;
}

std::string object_type_name(int type) {
  namespace t = object_type;
  switch (type) {
    case t::kSurfaceBox:
      return "surface of box";
    case t::kSolidBox:
      return "solid box";
    case t::kSurfaceSpheroid:
      return "surface of spheroid";
    case t::kSolidSpheroid:
      return "solid spheroid";
    default:
      break;
  }
  static constexpr std::array<const char*, 3> kAxis{"x", "y", "z"};
  if (type >= t::kFirstHemispheroid && type <= t::kLastHemispheroid) {
    const int pair = (type - t::kFirstHemispheroid) / 2;
    const std::string half = std::string(pair % 2 == 0 ? "+" : "-") + kAxis[std::size_t(pair / 2)];
    return "hemispheroid (" + half + " half) " + (type % 2 == 0 ? "surface" : "solid");
  }
  if (type >= t::kSurfaceCylinderX && type <= t::kSolidCylinderZ) {
    const int axis = (type - t::kSurfaceCylinderX) / 2;
    return std::string("cylinder along ") + kAxis[std::size_t(axis)] +
           (type % 2 == 0 ? " surface" : " solid");
  }
  return "undefined object " + std::to_string(type);
}

std::string bounce_name(int bounce) {
  switch (bounce) {
    case bounce_mode::kReflectCentre:
      return "bounces off the domain faces (centre reflects)";
    case bounce_mode::kReflectSurfaceInert:
      return "surface bounce (inert, as in the reference: moves like no bounce)";
    default:
      return "no bounce (may leave the domain)";
  }
}

}  // namespace miniamr::app
