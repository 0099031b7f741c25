#include "sfc/curve.hpp"

#include <algorithm>
#include <numeric>

#include "octree/morton_code.hpp"

namespace miniamr::sfc {

namespace {

// Interleaves three b-bit words, the first most significant at each bit: bit j of word i goes
// to bit 3j + 2 - i. Positions are made for every neighbour a refinement step looks up, so
// this is shifts and masks rather than a loop over the 96 bits.
Position interleave(const std::array<std::uint32_t, 3>& w, int b) {
  const std::uint32_t mask = b >= 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << b) - 1;
  using octree::spread3;
  return spread3(w[0] & mask) << 2 | spread3(w[1] & mask) << 1 | spread3(w[2] & mask);
}

// Skilling's transform ("Programming the Hilbert curve", AIP Conf. Proc. 707, 2004): lattice
// coordinates to the transposed Hilbert index, in place, b bits per coordinate.
void axes_to_transpose(std::array<std::uint32_t, 3>& x, int b) {
  const std::uint32_t m = std::uint32_t{1} << (b - 1);
  for (std::uint32_t q = m; q > 1; q >>= 1) {  // inverse undo
    const std::uint32_t p = q - 1;
    for (std::size_t i = 0; i < 3; ++i) {
      if (x[i] & q) {
        x[0] ^= p;
      } else {
        const std::uint32_t t = (x[0] ^ x[i]) & p;
        x[0] ^= t;
        x[i] ^= t;
      }
    }
  }
  for (std::size_t i = 1; i < 3; ++i) x[i] ^= x[i - 1];  // Gray encode
  std::uint32_t t = 0;
  for (std::uint32_t q = m; q > 1; q >>= 1)
    if (x[2] & q) t ^= q - 1;
  for (auto& c : x) c ^= t;
}

// Position of the finest cell at the block's lower corner.
Position corner_position(const octree::Key& k, const CurveSpace& s) {
  if (s.curve == Curve::kMorton) return octree::morton_corner(k);
  std::array<std::uint32_t, 3> x{k.x[0], k.x[1], k.x[2]};
  axes_to_transpose(x, s.bits);
  return interleave(x, s.bits);
}

// Positions below this mask vary inside a block of level `level`.
Position inner_mask(int level) {
  return (Position(1) << (3 * (octree::kMaxLevel - level))) - 1;
}

}  // namespace

int root_bits(const octree::RootGrid& grid) {
  int bits = 0;
  while ((1 << bits) < std::max({grid.n[0], grid.n[1], grid.n[2]})) ++bits;
  return bits;
}

CurveSpace CurveSpace::make(Curve curve, const octree::RootGrid& grid) {
  if (curve == Curve::kMorton) return {curve, 32};
  return {curve, std::max(1, root_bits(grid) + octree::kMaxLevel)};
}

// On either curve a block is one node of the curve's recursive subdivision, so its cells share
// the high bits of their positions: the corner's position with the low bits cleared is the
// first, with them set the last.
Position first_position(const octree::Key& k, const CurveSpace& s) {
  return corner_position(k, s) & ~inner_mask(k.level);
}

Position last_position(const octree::Key& k, const CurveSpace& s) {
  return corner_position(k, s) | inner_mask(k.level);
}

std::vector<std::size_t> curve_order(const octree::LeafSet& leaves, const CurveSpace& s) {
  std::vector<std::size_t> order(leaves.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (s.curve == Curve::kMorton) return order;
  std::vector<Position> pos(leaves.size());
  for (std::size_t i = 0; i < leaves.size(); ++i) pos[i] = first_position(leaves[i], s);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return pos[a] < pos[b]; });
  return order;
}

}  // namespace miniamr::sfc
