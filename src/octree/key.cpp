#include "octree/key.hpp"

#include <cassert>
#include <ostream>

#include <fmt/format.h>

namespace miniamr::octree {

int Key::octant() const {
  if (level == 0) return 0;
  const Coord h = side(level);
  return ((x[0] & h) ? 1 : 0) | ((x[1] & h) ? 2 : 0) | ((x[2] & h) ? 4 : 0);
}

Key root_key(int i, int j, int k) {
  return Key{{Coord(i) << kMaxLevel, Coord(j) << kMaxLevel, Coord(k) << kMaxLevel}, 0};
}

Key parent(const Key& k) {
  assert(k.level > 0);
  const Coord mask = ~(side(k.level - 1) - 1);
  return Key{{k.x[0] & mask, k.x[1] & mask, k.x[2] & mask}, static_cast<std::int8_t>(k.level - 1)};
}

Key child(const Key& k, int octant) {
  assert(k.level < kMaxLevel);
  const Coord h = side(k.level + 1);
  return Key{{k.x[0] + ((octant & 1) ? h : 0), k.x[1] + ((octant & 2) ? h : 0),
              k.x[2] + ((octant & 4) ? h : 0)},
             static_cast<std::int8_t>(k.level + 1)};
}

Key sibling(const Key& k, int octant) {
  return child(parent(k), octant);
}

Key last_descendant(const Key& k) {
  const Coord span = side(k.level) - 1;
  return Key{{k.x[0] + span, k.x[1] + span, k.x[2] + span}, static_cast<std::int8_t>(kMaxLevel)};
}

bool contains(const Key& a, const Key& b) {
  if (a.level > b.level) return false;
  const Coord mask = ~(side(a.level) - 1);
  return (b.x[0] & mask) == a.x[0] && (b.x[1] & mask) == a.x[1] && (b.x[2] & mask) == a.x[2];
}

std::optional<Key> face_neighbour(const Key& k, Face f, const RootGrid& grid) {
  const int d = axis(f);
  const Coord h = side(k.level);
  Key n = k;
  if (is_upper(f)) {
    if (std::uint64_t{k.x[d]} + h >= grid.extent(d)) return std::nullopt;
    n.x[d] += h;
  } else {
    if (k.x[d] == 0) return std::nullopt;
    n.x[d] -= h;
  }
  return n;
}

std::string to_string(const Key& k) {
  return fmt::format("L{}({},{},{})", int(k.level), k.index(0), k.index(1), k.index(2));
}

std::ostream& operator<<(std::ostream& os, const Key& k) {
  return os << to_string(k);
}

}  // namespace miniamr::octree
