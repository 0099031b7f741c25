// The octree element: a block named by its level and the integer coordinates of its lower
// corner. Keys are the only way blocks are named (in containers, messages and plans).
#pragma once

#include <array>
#include <bit>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

namespace miniamr::octree {

// Coordinates are counted in units of a block at kMaxLevel, globally over the whole root grid,
// so a root block spans 2^kMaxLevel units per direction. 32-bit coordinates leave
// 32 - kMaxLevel bits for the root grid: up to kMaxRootBlocks root blocks per direction.
inline constexpr int kMaxLevel = 20;
inline constexpr int kMaxRootBlocks = 1 << (32 - kMaxLevel);

using Coord = std::uint32_t;

// Side length, in coordinate units, of a block at `level`.
constexpr Coord side(int level) {
  return Coord{1} << (kMaxLevel - level);
}

enum class Face : int { kWest = 0, kEast, kSouth, kNorth, kDown, kUp };  // -x,+x,-y,+y,-z,+z
inline constexpr std::array<Face, 6> kFaces{Face::kWest,  Face::kEast, Face::kSouth,
                                            Face::kNorth, Face::kDown, Face::kUp};
constexpr int axis(Face f) {
  return static_cast<int>(f) / 2;
}
constexpr bool is_upper(Face f) {
  return (static_cast<int>(f) & 1) != 0;
}
constexpr Face opposite(Face f) {
  return static_cast<Face>(static_cast<int>(f) ^ 1);
}
constexpr Face face_of(int axis, bool upper) {
  return static_cast<Face>(2 * axis + (upper ? 1 : 0));
}

// Number of root blocks per direction (npx*init_x, npy*init_y, npz*init_z).
struct RootGrid {
  std::array<int, 3> n{1, 1, 1};
  std::int64_t count() const { return std::int64_t{n[0]} * n[1] * n[2]; }
  // Extent of the domain per direction, in coordinate units.
  std::uint64_t extent(int d) const { return std::uint64_t(n[d]) << kMaxLevel; }
  friend bool operator==(const RootGrid&, const RootGrid&) = default;
};

struct Key {
  std::array<Coord, 3> x{0, 0, 0};  // lower corner
  std::int8_t level = 0;

  friend bool operator==(const Key&, const Key&) = default;

  // Index of the block in the full lattice of its level, per direction.
  std::uint32_t index(int d) const { return x[d] >> (kMaxLevel - level); }
  // Octant of this block inside its parent: bit 0 = x, bit 1 = y, bit 2 = z.
  int octant() const;
};

// Morton (z-order) comparison over the global coordinates, x least significant; a block sorts
// before its descendants (ancestors first, as p4est orders octants). Inline: sorts and the
// binary searches of LeafSet call it in their inner loops (out of line it was the single
// largest symbol of a refinement profile).
constexpr bool morton_less(const Key& a, const Key& b) {
  // Chan's trick: the axis whose coordinates differ in the most significant bit decides, with
  // z above y above x in the interleaving. `best < diff && best < (best ^ diff)` is
  // "msb(diff) > msb(best)".
  const auto above = [](Coord best, Coord diff) { return best < diff && best < (best ^ diff); };
  int axis_msb = 2;
  Coord best = a.x[2] ^ b.x[2];
  if (const Coord diff = a.x[1] ^ b.x[1]; above(best, diff)) {
    best = diff;
    axis_msb = 1;
  }
  if (const Coord diff = a.x[0] ^ b.x[0]; above(best, diff)) {
    best = diff;
    axis_msb = 0;
  }
  if (best == 0) return a.level < b.level;
  return a.x[std::size_t(axis_msb)] < b.x[std::size_t(axis_msb)];
}
struct MortonLess {
  bool operator()(const Key& a, const Key& b) const { return morton_less(a, b); }
};

Key root_key(int i, int j, int k);
Key parent(const Key& k);
Key child(const Key& k, int octant);
// Child `octant` of the parent of k (k itself for its own octant).
Key sibling(const Key& k, int octant);
// The finest-level (kMaxLevel) descendant at the upper end of k's curve range.
Key last_descendant(const Key& k);
// True when a contains b (a == b counts).
bool contains(const Key& a, const Key& b);
// The same-level block across `f`, or nothing at the domain boundary.
std::optional<Key> face_neighbour(const Key& k, Face f, const RootGrid& grid);
// Whether face f of k lies inside k's parent, so that the block across it is a sibling: covered
// by a leaf of k's level or by finer leaves, never by a coarser one.
constexpr bool face_inside_parent(const Key& k, Face f) {
  if (k.level == 0) return false;
  const Coord h = side(k.level);
  return ((k.x[std::size_t(axis(f))] & h) != 0) != is_upper(f);
}

// Position of a root block on the Morton curve over the root grid (for tests and ordering).
std::string to_string(const Key& k);
std::ostream& operator<<(std::ostream& os, const Key& k);

}  // namespace miniamr::octree

template <>
struct std::hash<miniamr::octree::Key> {
  std::size_t operator()(const miniamr::octree::Key& k) const noexcept {
    std::uint64_t h = (std::uint64_t{k.x[0]} * 0x9E3779B97F4A7C15ull) ^
                      (std::uint64_t{k.x[1]} * 0xC2B2AE3D27D4EB4Full) ^
                      (std::uint64_t{k.x[2]} * 0x165667B19E3779F9ull) ^ std::uint64_t(k.level);
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};
