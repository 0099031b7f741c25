// Hand-checked cases for the object tests, movement and --time step. Values are dyadic so every
// expected result can be worked out by hand exactly (comments give the arithmetic).
#include "app/objects.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace miniamr::app {
namespace {

using octree::Box;
using octree::Key;
using octree::RootGrid;

using V3 = std::array<double, 3>;

Box box(V3 lo, V3 hi) {
  return Box{lo, hi};
}

Object make(int type, V3 center, V3 size, V3 move = {0, 0, 0}, V3 inc = {0, 0, 0}, int bounce = 0) {
  Object o;
  o.type = type;
  o.bounce = bounce;
  o.center = center;
  o.move = move;
  o.size = size;
  o.inc = inc;
  return o;
}

// Object centred in the cube with half-size 1/4 in every direction: slabs (0.25, 0.75).
Object centred(int type) {
  return make(type, {0.5, 0.5, 0.5}, {0.25, 0.25, 0.25});
}

// Blocks of width 1/8 relative to the centred object.
constexpr double kIn = 0.375;  // [0.375, 0.5]: inside the slab, touching the centre
const Box kInterior = box({kIn, kIn, kIn}, {0.5, 0.5, 0.5});

// Every level-L key of a one-root grid (for marking whole levels).
std::vector<Key> level_keys(int level) {
  std::vector<Key> keys;
  const std::uint32_t n = 1u << level;
  for (std::uint32_t k = 0; k < n; ++k) {
    for (std::uint32_t j = 0; j < n; ++j) {
      for (std::uint32_t i = 0; i < n; ++i) {
        Key key;
        key.level = static_cast<std::int8_t>(level);
        key.x = {i * octree::side(level), j * octree::side(level), k * octree::side(level)};
        keys.push_back(key);
      }
    }
  }
  return keys;
}

Key level1(std::uint32_t i, std::uint32_t j, std::uint32_t k) {
  Key key;
  key.level = 1;
  const octree::Coord s = octree::side(1);
  key.x = {i * s, j * s, k * s};
  return key;
}

// ------------------------------------------------------------------------------- type 1 (box)

TEST(SolidBox, OverlapInAllDirections) {
  const Object o = centred(object_type::kSolidBox);
  EXPECT_TRUE(intersects(o, box({0, 0, 0}, {0.5, 0.5, 0.5})));
  EXPECT_TRUE(intersects(o, kInterior));
  EXPECT_FALSE(intersects(o, box({0.875, 0, 0}, {1, 0.5, 0.5})));
}

TEST(SolidBox, TouchingFacesDoNotIntersect) {
  const Object o = centred(object_type::kSolidBox);
  // hi_x == c - s = 0.25: hi > 0.25 is false.
  EXPECT_FALSE(intersects(o, box({0.125, kIn, kIn}, {0.25, 0.5, 0.5})));
  // lo_z == c + s = 0.75: lo < 0.75 is false.
  EXPECT_FALSE(intersects(o, box({kIn, kIn, 0.75}, {0.5, 0.5, 0.875})));
  // One ulp further in does intersect.
  EXPECT_TRUE(intersects(o, box({0.125, kIn, kIn}, {std::nextafter(0.25, 1.0), 0.5, 0.5})));
}

// ----------------------------------------------------------------------- type 0 (box surface)

TEST(SurfaceBox, BlockCrossingXFaceIntersects) {
  const Object o = centred(object_type::kSurfaceBox);
  // x: 0 < 0.25 and 0.5 < 0.75 -> crosses_x; y, z overlap.
  EXPECT_TRUE(intersects(o, box({0, 0, 0}, {0.5, 0.5, 0.5})));
}

TEST(SurfaceBox, InteriorBlockDoesNotIntersect) {
  EXPECT_FALSE(intersects(centred(object_type::kSurfaceBox), kInterior));
}

TEST(SurfaceBox, BlockCrossingOnlyYFaceIntersects) {
  EXPECT_TRUE(intersects(centred(object_type::kSurfaceBox), box({kIn, 0, kIn}, {0.5, 0.5, 0.5})));
}

TEST(SurfaceBox, QuirkBoxInsideOneBlockNeverRefinesIt) {
  // A small box entirely inside the root block: the block contains both faces in every
  // direction, so it crosses none of them.
  const std::vector<Object> objs{make(object_type::kSurfaceBox, {0.5, 0.5, 0.5}, {0.1, 0.1, 0.1})};
  EXPECT_FALSE(intersects(objs[0], box({0, 0, 0}, {1, 1, 1})));
  EXPECT_EQ(object_mark(objs, octree::root_key(0, 0, 0), RootGrid{}, 3, {8, 8, 8}, false), -1);
  // The solid box does refine it.
  const std::vector<Object> solid{make(object_type::kSolidBox, {0.5, 0.5, 0.5}, {0.1, 0.1, 0.1})};
  EXPECT_EQ(object_mark(solid, octree::root_key(0, 0, 0), RootGrid{}, 3, {8, 8, 8}, false), 1);
}

TEST(SurfaceBox, QuirkBlockCrossingOnlyZFaceIsMissed) {
  // Inside in x and y, crossing the low z face: overlap_y holds, so the coded test asks for
  // crosses_y, which is false.
  EXPECT_FALSE(intersects(centred(object_type::kSurfaceBox), box({kIn, kIn, 0}, {0.5, 0.5, 0.5})));
}

TEST(SurfaceBox, QuirkBlockOutsideInYCanIntersect) {
  // Inside in x, entirely above the box in y, crossing in z: the last branch fires.
  EXPECT_TRUE(intersects(centred(object_type::kSurfaceBox), box({kIn, 0.875, 0}, {0.5, 1, 0.5})));
  // ... but only with overlap_x.
  EXPECT_FALSE(intersects(centred(object_type::kSurfaceBox), box({0.875, 0.875, 0}, {1, 1, 0.5})));
}

// ----------------------------------------------------------------------------- spheroids 2, 3

TEST(SurfaceSpheroid, BlockContainingCentreAndSurfaceIntersects) {
  // All inside (c = 0.5 == hi is inside); far = lo = 0: q = (-0.5/0.25)^2 = 4, FAR = 12.
  EXPECT_TRUE(intersects(centred(object_type::kSurfaceSpheroid), box({0, 0, 0}, {0.5, 0.5, 0.5})));
}

TEST(SurfaceSpheroid, InteriorBlockDoesNotIntersect) {
  // far = 0.375: q = 0.25 each, FAR = 0.75 is not > 1.
  EXPECT_FALSE(intersects(centred(object_type::kSurfaceSpheroid), kInterior));
}

TEST(SurfaceSpheroid, TwoInsideUsesNearDistance) {
  const Object o = centred(object_type::kSurfaceSpheroid);
  // x below: near 0.625, |0.125| < 0.25; FAR = 1 + 0.25 + 0.25 = 1.5.
  EXPECT_TRUE(intersects(o, box({0.625, kIn, kIn}, {0.75, 0.5, 0.5})));
  // Touching: near 0.75, |0.25| < 0.25 is false.
  EXPECT_FALSE(intersects(o, box({0.75, kIn, kIn}, {0.875, 0.5, 0.5})));
  // Mirror, centre above the block: near = hi = 0.25, touching.
  EXPECT_FALSE(intersects(o, box({kIn, 0.125, kIn}, {0.5, 0.25, 0.5})));
  EXPECT_TRUE(intersects(o, box({kIn, 0.25, kIn}, {0.5, kIn, 0.5})));
}

TEST(SurfaceSpheroid, CornerBlockUsesNearSum) {
  const Object o = centred(object_type::kSurfaceSpheroid);
  // All below, near 0.625: NEAR = 3 * 0.25 = 0.75 < 1; FAR = 3 * 1 = 3.
  EXPECT_TRUE(intersects(o, box({0.625, 0.625, 0.625}, {0.75, 0.75, 0.75})));
  // NEAR = 0.25 + 1 + 1 (y, z near 0.75).
  EXPECT_FALSE(intersects(o, box({0.625, 0.75, 0.75}, {0.75, 0.875, 0.875})));
  // Far away: NEAR = 3 * 2.25.
  EXPECT_FALSE(intersects(o, box({0.875, 0.875, 0.875}, {1, 1, 1})));
  // One inside (x), y and z below: NEAR = 0.25 + 0.25.
  EXPECT_TRUE(intersects(o, box({kIn, 0.625, 0.625}, {0.5, 0.75, 0.75})));
}

TEST(SolidSpheroid, Cases) {
  const Object o = centred(object_type::kSolidSpheroid);
  EXPECT_TRUE(intersects(o, kInterior));  // all inside
  EXPECT_TRUE(intersects(o, box({0, 0, 0}, {0.5, 0.5, 0.5})));
  EXPECT_TRUE(intersects(o, box({0.625, kIn, kIn}, {0.75, 0.5, 0.5})));
  EXPECT_FALSE(intersects(o, box({0.75, kIn, kIn}, {0.875, 0.5, 0.5})));  // touching
  EXPECT_TRUE(intersects(o, box({0.625, 0.625, 0.625}, {0.75, 0.75, 0.75})));
  EXPECT_FALSE(intersects(o, box({0.875, 0.875, 0.875}, {1, 1, 1})));
}

TEST(Spheroid, ZeroSizeMarksTheBlockContainingItsCentre) {
  for (int type : {object_type::kSurfaceSpheroid, object_type::kSolidSpheroid}) {
    const std::vector<Object> objs{make(type, {0.3, 0.3, 0.7}, {0, 0, 0})};
    int marked = 0;
    for (const Key& k : level_keys(2)) {
      const int mark = object_mark(objs, k, RootGrid{}, 4, {8, 8, 8}, false);
      if (mark == 1) {
        ++marked;
        // [0.25,0.5] x [0.25,0.5] x [0.5,0.75]
        EXPECT_EQ(k.index(0), 1u);
        EXPECT_EQ(k.index(1), 1u);
        EXPECT_EQ(k.index(2), 2u);
      } else {
        EXPECT_EQ(mark, -1);
      }
    }
    EXPECT_EQ(marked, 1) << "type " << type;
  }
}

TEST(Spheroid, ZeroSizeOnABoundaryMarksBothBlocks) {
  for (int type : {object_type::kSurfaceSpheroid, object_type::kSolidSpheroid}) {
    const std::vector<Object> objs{make(type, {0.5, 0.3, 0.3}, {0, 0, 0})};
    int marked = 0;
    for (const Key& k : level_keys(1)) {
      if (object_mark(objs, k, RootGrid{}, 4, {8, 8, 8}, false) == 1) ++marked;
    }
    EXPECT_EQ(marked, 2) << "type " << type;
    EXPECT_EQ(object_mark(objs, level1(0, 0, 0), RootGrid{}, 4, {8, 8, 8}, false), 1);
    EXPECT_EQ(object_mark(objs, level1(1, 0, 0), RootGrid{}, 4, {8, 8, 8}, false), 1);
  }
}

// ------------------------------------------------------------------------ hemispheroids 4..15

// A block touching the sphere surface from inside along axis d, on the + or - side.
Box surface_block(int d, bool plus) {
  Box b = kInterior;
  b.lo[d] = plus ? 0.625 : 0.25;
  b.hi[d] = plus ? 0.75 : kIn;
  return b;
}

TEST(Hemispheroid, KeepsTheRightHalf) {
  for (int type = object_type::kFirstHemispheroid; type <= object_type::kLastHemispheroid; ++type) {
    const int pair = (type - 4) / 2;
    const int d = pair / 2;
    const bool keeps_plus = pair % 2 == 0;
    const Object o = centred(type);
    // Both mirror blocks hit the full spheroid (near 0.625 or 0.375, |0.125| < 0.25).
    const Object full = centred(type % 2 == 0 ? 2 : 3);
    ASSERT_TRUE(intersects(full, surface_block(d, true)));
    ASSERT_TRUE(intersects(full, surface_block(d, false)));
    EXPECT_EQ(intersects(o, surface_block(d, true)), keeps_plus) << "type " << type;
    EXPECT_EQ(intersects(o, surface_block(d, false)), !keeps_plus) << "type " << type;
    // Along the other axes both sides are kept.
    for (int e = 0; e < 3; ++e) {
      if (e == d) continue;
      EXPECT_TRUE(intersects(o, surface_block(e, true))) << "type " << type << " axis " << e;
      EXPECT_TRUE(intersects(o, surface_block(e, false))) << "type " << type << " axis " << e;
    }
  }
}

TEST(Hemispheroid, SurfaceVersusSolidInterior) {
  for (int type = object_type::kFirstHemispheroid; type <= object_type::kLastHemispheroid; ++type) {
    // [0.5,0.625]^3 touches the cut plane of every + hemispheroid; [0.375,0.5]^3 of every -.
    // FAR = 3 * 0.25 < 1, so only the solid ones hit it.
    const bool solid = type % 2 == 1;
    EXPECT_EQ(intersects(centred(type), box({0.5, 0.5, 0.5}, {0.625, 0.625, 0.625})), solid)
        << "type " << type;
    EXPECT_EQ(intersects(centred(type), kInterior), solid) << "type " << type;
  }
}

TEST(Hemispheroid, CutPlaneComparisonIsStrict) {
  // hi_x == c_x: 4 keeps it (hi_x < c_x is false), and so does 6 (lo_x = 0.25 < c_x).
  // x inside with far = 0.25 (q 1), y below near 0.625 (|0.125| < 0.25), far 0.75 (q 1),
  // z far 0.375 (q 0.25): FAR = 2.25 > 1.
  const Box b = box({0.25, 0.625, kIn}, {0.5, 0.75, 0.5});
  EXPECT_TRUE(intersects(centred(4), b));
  EXPECT_TRUE(intersects(centred(6), b));
  // One ulp below the cut plane: type 4 throws it away.
  const Box below = box({0.25, 0.625, kIn}, {std::nextafter(0.5, 0.0), 0.75, 0.5});
  EXPECT_FALSE(intersects(centred(4), below));
  EXPECT_TRUE(intersects(centred(6), below));
}

// ----------------------------------------------------------------------------- cylinders 20..25

TEST(Cylinder, SolidNeedsAxisOverlapAndCrossSection) {
  const Object o = centred(object_type::kSolidCylinderX);
  EXPECT_TRUE(intersects(o, kInterior));
  // Beyond the end: hi_x = 0.25 is not > c - s.
  EXPECT_FALSE(intersects(o, box({0.125, kIn, kIn}, {0.25, 0.5, 0.5})));
  EXPECT_TRUE(intersects(o, box({0.25, kIn, kIn}, {kIn, 0.5, 0.5})));
  // Cross section: y below, near 0.625 inside the radius; near 0.75 touching.
  EXPECT_TRUE(intersects(o, box({kIn, 0.625, kIn}, {0.5, 0.75, 0.5})));
  EXPECT_FALSE(intersects(o, box({kIn, 0.75, kIn}, {0.5, 0.875, 0.5})));
  // Corner of the cross section: NEAR2 = 0.25 + 0.25 < 1 (the square's corner is not).
  EXPECT_TRUE(intersects(o, box({kIn, 0.625, 0.625}, {0.5, 0.75, 0.75})));
  EXPECT_FALSE(intersects(o, box({kIn, 0.75, 0.75}, {0.5, 0.875, 0.875})));
  // A long cylinder ignores the axis coordinate inside its length.
  const Object z = make(object_type::kSolidCylinderZ, {0.5, 0.5, 0.5}, {0.25, 0.25, 10});
  EXPECT_TRUE(intersects(z, box({kIn, kIn, 0.875}, {0.5, 0.5, 1})));
  EXPECT_FALSE(intersects(z, box({0.875, kIn, 0.875}, {1, 0.5, 1})));
}

TEST(Cylinder, SolidAlongEachAxis) {
  const int solid[3] = {object_type::kSolidCylinderX, object_type::kSolidCylinderY,
                        object_type::kSolidCylinderZ};
  for (int a = 0; a < 3; ++a) {
    const Object o = centred(solid[a]);
    // Interior in the cross section; along the axis touching the end (no), then inside (yes).
    Box along = kInterior;
    along.lo[a] = 0.75;
    along.hi[a] = 0.875;
    EXPECT_FALSE(intersects(o, along)) << "axis " << a;
    along.lo[a] = 0.625;
    along.hi[a] = 0.75;
    EXPECT_TRUE(intersects(o, along)) << "axis " << a;
  }
}

TEST(Cylinder, SurfaceSideAndInterior) {
  const int surface[3] = {object_type::kSurfaceCylinderX, object_type::kSurfaceCylinderY,
                          object_type::kSurfaceCylinderZ};
  for (int a = 0; a < 3; ++a) {
    const Object o = centred(surface[a]);
    // Interior block, not crossing x: FAR2 = 0.25 + 0.25.
    EXPECT_FALSE(intersects(o, kInterior)) << "axis " << a;
    // Curved side: one cross direction below, near 0.625: FAR2 = 1 + 0.25 > 1.
    Box side = kInterior;
    const int p = (a + 1) % 3;
    side.lo[p] = 0.625;
    side.hi[p] = 0.75;
    EXPECT_TRUE(intersects(o, side)) << "axis " << a;
  }
}

TEST(Cylinder, SurfaceEndCapCountsOnlyAlongX) {
  // A block containing the low end cap and interior in the cross section.
  auto cap_block = [](int a) {
    Box b = kInterior;
    b.lo[a] = 0.125;
    b.hi[a] = kIn;
    return b;
  };
  // Type 20: crosses_x holds, so the solid test decides: hit.
  EXPECT_TRUE(intersects(centred(object_type::kSurfaceCylinderX), cap_block(0)));
  // Types 22 and 24 test crosses_x instead of their own axis (reference bug): the cap block
  // does not cross x, FAR2 = 0.5 is not > 1, so the end cap is missed.
  EXPECT_FALSE(intersects(centred(object_type::kSurfaceCylinderY), cap_block(1)));
  EXPECT_FALSE(intersects(centred(object_type::kSurfaceCylinderZ), cap_block(2)));
  // The solid versions hit all three.
  EXPECT_TRUE(intersects(centred(object_type::kSolidCylinderX), cap_block(0)));
  EXPECT_TRUE(intersects(centred(object_type::kSolidCylinderY), cap_block(1)));
  EXPECT_TRUE(intersects(centred(object_type::kSolidCylinderZ), cap_block(2)));
}

TEST(Cylinder, SurfaceYCrossingXTakesTheSolidTest) {
  // Type 22 (axis y, cross (z,x)) on a block crossing the x slab face at 0.25: crosses_x
  // selects the solid test. x above: near 0.375, |0.125| < 0.25; z inside: hit.
  const Box b = box({0.125, kIn, kIn}, {kIn, 0.5, 0.5});
  EXPECT_TRUE(intersects(centred(object_type::kSurfaceCylinderY), b));
  // The same block hits 24 as well (x is a cross direction there too).
  EXPECT_TRUE(intersects(centred(object_type::kSurfaceCylinderZ), b));
}

// ----------------------------------------------------------------- undefined, negative sizes

TEST(Objects, UndefinedTypesNeverIntersect) {
  const Box everything = box({0, 0, 0}, {1, 1, 1});
  const Box inside = kInterior;
  for (int type : {16, 17, 18, 19, 26, 27, 100, -1}) {
    const Object o = make(type, {0.5, 0.5, 0.5}, {0.25, 0.25, 0.25});
    EXPECT_FALSE(intersects(o, everything)) << type;
    EXPECT_FALSE(intersects(o, inside)) << type;
    EXPECT_FALSE(intersects(o, box({0, 0, 0}, {0.5, 0.5, 0.5}))) << type;
  }
}

TEST(Objects, NegativeSizeIsIgnoredByEveryType) {
  const std::vector<int> types{0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                               11, 12, 13, 14, 15, 20, 21, 22, 23, 24, 25};
  const Box half = box({0, 0, 0}, {0.5, 0.5, 0.5});
  for (int type : types) {
    for (int d = 0; d < 3; ++d) {
      Object o = centred(type);
      ASSERT_TRUE(intersects(o, half)) << type;  // all hit this block when sizes are positive
      o.size[d] = -0.25;
      EXPECT_FALSE(intersects(o, half)) << type << " d " << d;
      EXPECT_FALSE(intersects(o, box({0, 0, 0}, {1, 1, 1}))) << type << " d " << d;
    }
  }
}

TEST(Objects, IntersectsAnyTriesEveryObject) {
  const Box b = kInterior;
  const std::vector<Object> objs{make(1, {0.9, 0.9, 0.9}, {0.01, 0.01, 0.01}),
                                 make(2, {0.5, 0.5, 0.5}, {0.25, 0.25, 0.25}),
                                 make(3, {0.5, 0.5, 0.5}, {0.25, 0.25, 0.25})};
  EXPECT_TRUE(intersects_any(objs, b));
  EXPECT_FALSE(intersects_any(std::span(objs).first(2), b));
  EXPECT_FALSE(intersects_any({}, b));
}

// -------------------------------------------------------------------------------- object_mark

TEST(ObjectMark, WithoutRefineGhost) {
  const std::vector<Object> objs{make(1, {0.75, 0.75, 0.75}, {0.125, 0.125, 0.125})};
  // Solid box (0.625, 0.875)^3: only the (1,1,1) octant block at level 1.
  for (const Key& k : level_keys(1)) {
    const bool hit = k.index(0) == 1 && k.index(1) == 1 && k.index(2) == 1;
    EXPECT_EQ(object_mark(objs, k, RootGrid{}, 2, {4, 4, 4}, false), hit ? 1 : -1);
  }
  EXPECT_EQ(object_mark(objs, octree::root_key(0, 0, 0), RootGrid{}, 2, {4, 4, 4}, false), 1);
  EXPECT_EQ(object_mark({}, octree::root_key(0, 0, 0), RootGrid{}, 2, {4, 4, 4}, false), -1);
}

TEST(ObjectMark, RefineGhostMarginsFollowTheReferenceArithmetic) {
  // R = 2, one root, 4 cells: level 1 has h = 2, M = 8: e = 2*(2/4)/8 = 0.125 = one cell.
  const GhostMargins m = refine_ghost_margins(1, RootGrid{}, 2, {4, 4, 4});
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(m.first[d], 0.125);
    EXPECT_EQ(m.second[d], 0.125);
  }
  // Non-dyadic: R = 5, N = (2,1,3), cells (10,12,6), level 3: h = 4, M = (128, 64, 192).
  const GhostMargins g = refine_ghost_margins(3, RootGrid{{2, 1, 3}}, 5, {10, 12, 6});
  const double h = 4.0;
  const V3 n{10, 12, 6};
  const V3 mesh{128, 64, 192};
  for (std::size_t d = 0; d < 3; ++d) {
    EXPECT_EQ(g.first[d], (2.0 * (h / n[d])) / mesh[d]);
    EXPECT_EQ(g.second[d], ((2.0 * h) / n[d]) / mesh[d]);
  }
  // R = 0 works: h = 1, M = 2 * N.
  const GhostMargins r0 = refine_ghost_margins(0, RootGrid{{2, 1, 1}}, 0, {10, 10, 10});
  EXPECT_EQ(r0.first[0], (2.0 * (1.0 / 10.0)) / 4.0);
  EXPECT_EQ(r0.first[1], (2.0 * (1.0 / 10.0)) / 2.0);
}

TEST(ObjectMark, RefineGhostGrowsOneCellThenAnother) {
  // Level-1 block [0,0.5]^3, R = 2, 4 cells: e1 = e2 = 0.125, so hi_x grows to 0.625 and then
  // to 0.75. Slabs in x that start just after each growth:
  const Key k = level1(0, 0, 0);
  auto solid_x = [](double lo, double hi) {
    return std::vector<Object>{make(1, {(lo + hi) / 2, 0.5, 0.5}, {(hi - lo) / 2, 0.5, 0.5})};
  };
  const auto near = solid_x(0.5625, 0.59375);  // inside the first ghost cell
  const auto next = solid_x(0.65625, 0.6875);  // inside the second
  const auto far = solid_x(0.8125, 0.875);     // beyond both
  EXPECT_EQ(object_mark(near, k, RootGrid{}, 2, {4, 4, 4}, false), -1);
  EXPECT_EQ(object_mark(near, k, RootGrid{}, 2, {4, 4, 4}, true), 1);
  EXPECT_EQ(object_mark(next, k, RootGrid{}, 2, {4, 4, 4}, true), 0);
  EXPECT_EQ(object_mark(far, k, RootGrid{}, 2, {4, 4, 4}, true), -1);
  // Touching the grown box is not intersecting: slab starting exactly at 0.625, then 0.75.
  EXPECT_EQ(object_mark(solid_x(0.625, 0.6875), k, RootGrid{}, 2, {4, 4, 4}, true), 0);
  EXPECT_EQ(object_mark(solid_x(0.75, 0.8125), k, RootGrid{}, 2, {4, 4, 4}, true), -1);
  // An object hitting the plain block still marks 1.
  EXPECT_EQ(object_mark(solid_x(0.25, 0.375), k, RootGrid{}, 2, {4, 4, 4}, true), 1);
}

TEST(ObjectMark, RefineGhostSecondGrowthSkippedAtLevelZero) {
  // Root [0,1]^3, R = 2, 4 cells: h = 4, e = 2*(4/4)/8 = 0.25: grown to [-0.25, 1.25], then
  // (not at level 0) to [-0.5, 1.5].
  const Key root = octree::root_key(0, 0, 0);
  const std::vector<Object> first{make(1, {1.2, 0.5, 0.5}, {0.0625, 0.5, 0.5})};
  const std::vector<Object> second{make(1, {1.375, 0.5, 0.5}, {0.0625, 0.5, 0.5})};
  EXPECT_EQ(object_mark(first, root, RootGrid{}, 2, {4, 4, 4}, true), 1);
  EXPECT_EQ(object_mark(second, root, RootGrid{}, 2, {4, 4, 4}, true), -1);
  // The same geometry at level 1 does give 0 (block [0.5,1] x ..., e = 0.125: second hit).
  const std::vector<Object> l1{make(1, {1.1875, 0.5, 0.5}, {0.0625, 0.5, 0.5})};
  EXPECT_EQ(object_mark(l1, level1(1, 0, 0), RootGrid{}, 2, {4, 4, 4}, true), 0);
  EXPECT_EQ(object_mark(l1, level1(1, 0, 0), RootGrid{}, 2, {4, 4, 4}, false), -1);
}

TEST(ObjectMark, RefineGhostUsesOnlyTheGrownBox) {
  // A surface-box that the plain root block misses (box inside one block) but the grown box
  // also contains entirely: still not marked.
  const std::vector<Object> objs{make(0, {0.5, 0.5, 0.5}, {0.1, 0.1, 0.1})};
  EXPECT_EQ(object_mark(objs, octree::root_key(0, 0, 0), RootGrid{}, 2, {4, 4, 4}, true), -1);
  // Non-cubic root grid: x cells are twice as fine, so the x margin is half the y margin.
  const GhostMargins m = refine_ghost_margins(1, RootGrid{{2, 1, 1}}, 2, {4, 4, 4});
  EXPECT_EQ(m.first[0], 0.0625);
  EXPECT_EQ(m.first[1], 0.125);
}

// ----------------------------------------------------------------------------------- movement

TEST(Movement, RepeatedAdditionNotMultiplication) {
  std::vector<Object> objs{make(1, {0.3, 0.1, 0.5}, {0.1, 0.1, 0.1}, {0.1, 0.1, 0}, {0.01, 0, 0})};
  V3 c = objs[0].center;
  double s = objs[0].size[0];
  for (int step = 0; step < 7; ++step) {
    move_objects(objs, 1.0);
    c[0] += 0.1;
    c[1] += 0.1;
    s += 0.01;
  }
  EXPECT_EQ(objs[0].center[0], c[0]);
  EXPECT_EQ(objs[0].center[1], c[1]);
  EXPECT_EQ(objs[0].size[0], s);
  EXPECT_EQ(objs[0].center[2], 0.5);
  // 0.3 + 0.1 added seven times is 0.9999999999999999, not 0.3 + 7*0.1 = 1.0.
  EXPECT_EQ(objs[0].center[0], 0.9999999999999999);
  EXPECT_NE(objs[0].center[0], 0.3 + 7 * 0.1);
}

TEST(Movement, DeltaScalesMoveAndGrowth) {
  std::vector<Object> objs{
      make(2, {0.5, 0.5, 0.5}, {0.25, 0.25, 0.25}, {0.25, -0.5, 0}, {0.125, 0, -0.5})};
  move_objects(objs, 0.5);
  EXPECT_EQ(objs[0].center, (V3{0.625, 0.25, 0.5}));
  EXPECT_EQ(objs[0].size, (V3{0.3125, 0.25, 0.0}));
  move_objects(objs, 0.5);
  EXPECT_EQ(objs[0].size[2], -0.25);  // sizes may go negative (object then ignored)
  EXPECT_EQ(objs[0].move, (V3{0.25, -0.5, 0}));
}

TEST(Movement, EveryObjectMoves) {
  std::vector<Object> objs{make(1, {0, 0, 0}, {1, 1, 1}, {0.25, 0, 0}),
                           make(1, {0, 0, 0}, {1, 1, 1}, {0, 0, 0.5})};
  move_objects(objs, 1.0);
  EXPECT_EQ(objs[0].center, (V3{0.25, 0, 0}));
  EXPECT_EQ(objs[1].center, (V3{0, 0, 0.5}));
}

TEST(Movement, BounceOneReflectsAtBothEnds) {
  std::vector<Object> objs{
      make(2, {0.875, 0.125, 0.5}, {0.1, 0.1, 0.1}, {0.25, -0.25, 0}, {0, 0, 0}, 1)};
  move_objects(objs, 1.0);
  // x: 1.125 >= 1 -> 2 - 1.125; y: -0.125 <= 0 -> 0 - (-0.125).
  EXPECT_EQ(objs[0].center, (V3{0.875, 0.125, 0.5}));
  EXPECT_EQ(objs[0].move, (V3{-0.25, 0.25, 0}));
  move_objects(objs, 1.0);
  EXPECT_EQ(objs[0].center, (V3{0.625, 0.375, 0.5}));
  EXPECT_EQ(objs[0].move, (V3{-0.25, 0.25, 0}));
}

TEST(Movement, BounceOneReflectsExactlyOnTheFaces) {
  std::vector<Object> objs{
      make(2, {0.75, 0.25, 0.5}, {0.1, 0.1, 0.1}, {0.25, -0.25, 0}, {0, 0, 0}, 1)};
  move_objects(objs, 1.0);
  // x reaches 1.0 (>= 1): 2 - 1 = 1, move flips; y reaches 0 (<= 0): 0 - 0 = 0, flips.
  EXPECT_EQ(objs[0].center, (V3{1.0, 0.0, 0.5}));
  EXPECT_EQ(objs[0].move, (V3{-0.25, 0.25, 0}));
  move_objects(objs, 1.0);
  EXPECT_EQ(objs[0].center, (V3{0.75, 0.25, 0.5}));
}

TEST(Movement, BounceOneUsesTheCentreNotTheSurface) {
  // The surface leaves the cube; only the centre crossing a face reflects.
  std::vector<Object> objs{make(2, {0.75, 0.5, 0.5}, {0.5, 0.1, 0.1}, {0.125, 0, 0}, {0, 0, 0}, 1)};
  move_objects(objs, 1.0);
  EXPECT_EQ(objs[0].center[0], 0.875);
  EXPECT_EQ(objs[0].move[0], 0.125);
}

TEST(Movement, BounceTwoMovesLikeBounceZero) {
  const Object start =
      make(3, {0.8, 0.2, 0.5}, {0.3, 0.3, 0.1}, {0.07, -0.03, 0.1}, {0.01, 0.02, -0.001}, 0);
  std::vector<Object> zero{start};
  Object two_obj = start;
  two_obj.bounce = bounce_mode::kReflectSurfaceInert;
  std::vector<Object> two{two_obj};
  for (int step = 0; step < 40; ++step) {
    move_objects(zero, 1.0);
    move_objects(two, 1.0);
    ASSERT_EQ(zero[0].center, two[0].center) << "step " << step;
    ASSERT_EQ(zero[0].move, two[0].move) << "step " << step;
    ASSERT_EQ(zero[0].size, two[0].size) << "step " << step;
  }
  EXPECT_GT(zero[0].center[0], 1.0);  // it left the cube
  EXPECT_EQ(zero[0].move, start.move);
}

// ---------------------------------------------------------------------------------- time_step

TEST(TimeStep, MaximumOverObjectsAndDirections) {
  // N = (2,1,1), R = 2: M = (16, 8, 8); cells (8, 4, 2).
  const RootGrid grid{{2, 1, 1}};
  const std::array<int, 3> cells{8, 4, 2};
  // x: 0.25 * 16 * 8 = 32; y: (0.5 + 0.25) * 8 * 4 = 24; z: 1 * 8 * 2 = 16.
  const std::vector<Object> objs{
      make(1, {0.5, 0.5, 0.5}, {0.1, 0.1, 0.1}, {0.25, 0.5, 0}, {0, -0.25, 1})};
  EXPECT_EQ(time_step(objs, grid, 2, cells), 1.0 / 32.0);
  // A second, faster object (y: 2 * 8 * 4 = 64) wins.
  std::vector<Object> two = objs;
  two.push_back(make(2, {0.5, 0.5, 0.5}, {0.1, 0.1, 0.1}, {0, 2, 0}));
  EXPECT_EQ(time_step(two, grid, 2, cells), 1.0 / 64.0);
}

TEST(TimeStep, NonDyadicValue) {
  const std::vector<Object> objs{
      make(1, {0.5, 0.5, 0.5}, {0.1, 0.1, 0.1}, {0.0013, 0, 0}, {0.0007, 0, 0})};
  const double expect = 1.0 / ((0.0013 + 0.0007) * 96.0 * 10.0);  // M = 3 * 2^5
  EXPECT_EQ(time_step(objs, RootGrid{{3, 1, 1}}, 4, {10, 10, 10}), expect);
}

TEST(TimeStep, ZeroMaximumGivesOne) {
  EXPECT_EQ(time_step({}, RootGrid{}, 3, {8, 8, 8}), 1.0);
  const std::vector<Object> still{make(2, {0.5, 0.5, 0.5}, {0.1, 0.1, 0.1})};
  EXPECT_EQ(time_step(still, RootGrid{}, 3, {8, 8, 8}), 1.0);
}

TEST(TimeStep, ScanStopsAtNegativeSize) {
  const Object slow = make(1, {0.5, 0.5, 0.5}, {0.1, 0.1, 0.1}, {0.125, 0, 0});  // 0.125*8*8 = 8
  const Object fast = make(1, {0.5, 0.5, 0.5}, {0.1, 0.1, 0.1}, {1, 0, 0});      // 64
  Object negative = make(1, {0.5, 0.5, 0.5}, {0.1, -0.1, 0.1}, {2, 0, 0});
  const RootGrid grid{};
  const std::array<int, 3> cells{8, 8, 8};  // R = 2: M = 8
  EXPECT_EQ(time_step(std::vector<Object>{slow, fast}, grid, 2, cells), 1.0 / 64.0);
  // Break, not skip: the fast object after the negative one is not considered.
  EXPECT_EQ(time_step(std::vector<Object>{slow, negative, fast}, grid, 2, cells), 1.0 / 8.0);
  EXPECT_EQ(time_step(std::vector<Object>{negative, fast}, grid, 2, cells), 1.0);
}

TEST(TimeStep, ScanStopsAtObjectOutsideTheCube) {
  const Object fast = make(1, {0.5, 0.5, 0.5}, {0.1, 0.1, 0.1}, {1, 0, 0});
  const RootGrid grid{};
  const std::array<int, 3> cells{8, 8, 8};
  // Below: c = -0.5, c + s = -0.25 < 0.
  const Object below = make(1, {0.5, -0.5, 0.5}, {0.1, 0.25, 0.1}, {4, 0, 0});
  EXPECT_EQ(time_step(std::vector<Object>{below, fast}, grid, 2, cells), 1.0);
  // Above: c = 1.5, c - s = 1.25 > 1.
  const Object above = make(1, {0.5, 0.5, 1.5}, {0.1, 0.1, 0.25}, {4, 0, 0});
  EXPECT_EQ(time_step(std::vector<Object>{above, fast}, grid, 2, cells), 1.0);
  // Touching the cube (c + s == 0, c - s == 1) still counts: 4 * 8 * 8 = 256.
  const Object touch_lo = make(1, {-0.5, 0.5, 0.5}, {0.5, 0.1, 0.1}, {4, 0, 0});
  const Object touch_hi = make(1, {1.5, 0.5, 0.5}, {0.5, 0.1, 0.1}, {4, 0, 0});
  EXPECT_EQ(time_step(std::vector<Object>{touch_lo, fast}, grid, 2, cells), 1.0 / 256.0);
  EXPECT_EQ(time_step(std::vector<Object>{touch_hi, fast}, grid, 2, cells), 1.0 / 256.0);
}

// -------------------------------------------------------------------------------------- names

TEST(Names, ObjectTypes) {
  EXPECT_EQ(object_type_name(0), "surface of box");
  EXPECT_EQ(object_type_name(1), "solid box");
  EXPECT_EQ(object_type_name(2), "surface of spheroid");
  EXPECT_EQ(object_type_name(3), "solid spheroid");
  EXPECT_EQ(object_type_name(4), "hemispheroid (+x half) surface");
  EXPECT_EQ(object_type_name(7), "hemispheroid (-x half) solid");
  EXPECT_EQ(object_type_name(10), "hemispheroid (-y half) surface");
  EXPECT_EQ(object_type_name(13), "hemispheroid (+z half) solid");
  EXPECT_EQ(object_type_name(20), "cylinder along x surface");
  EXPECT_EQ(object_type_name(23), "cylinder along y solid");
  EXPECT_EQ(object_type_name(25), "cylinder along z solid");
  EXPECT_EQ(object_type_name(17), "undefined object 17");
}

TEST(Names, Bounce) {
  EXPECT_NE(bounce_name(0), bounce_name(1));
  EXPECT_NE(bounce_name(1), bounce_name(2));
  EXPECT_NE(bounce_name(2).find("inert"), std::string::npos);
}

}  // namespace
}  // namespace miniamr::app
