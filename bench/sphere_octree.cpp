#include "sphere_octree.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace miniamr::bench {

namespace {

using octree::Coord;
using octree::Key;
using octree::kMaxLevel;

// reserve() plus a transparent-huge-page hint for the 2 MiB pages inside the buffer. Page
// faults were most of the run time at level 9 (70 ms system vs 33 ms user): every new
// buffer of this code is touched once, front to back, so 4 KiB faults dominate.
template <class T>
void reserve_huge(std::vector<T>& v, std::size_t n) {
  if (v.capacity() >= n) return;
  v.reserve(n);
  constexpr std::uintptr_t kHuge = std::uintptr_t{1} << 21;
  const auto begin = (reinterpret_cast<std::uintptr_t>(v.data()) + kHuge - 1) & ~(kHuge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(v.data() + v.capacity())) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

// Bit i of a byte moved to bit 3i: three table look-ups spread a 20-bit coordinate, far cheaper
// than the shift-and-mask ladder when a million keys are encoded.
constexpr std::array<std::uint32_t, 256> make_spread_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t b = 0; b < 256; ++b)
    for (std::uint32_t i = 0; i < 8; ++i) t[b] |= ((b >> i) & 1u) << (3 * i);
  return t;
}
constexpr auto kSpread = make_spread_table();

std::uint64_t spread3(Coord x) {
  return std::uint64_t{kSpread[x & 255u]} | (std::uint64_t{kSpread[(x >> 8) & 255u]} << 24) |
         (std::uint64_t{kSpread[(x >> 16) & 255u]} << 48);
}

// Inverse of spread3 on bits 0, 3, 6, ...
Coord compact3(std::uint64_t x) {
  x &= 0x1249249249249249ull;
  x = (x ^ (x >> 2)) & 0x10c30c30c30c30c3ull;
  x = (x ^ (x >> 4)) & 0x100f00f00f00f00full;
  x = (x ^ (x >> 8)) & 0x001f0000ff0000ffull;
  x = (x ^ (x >> 16)) & 0x001f00000000ffffull;
  x = (x ^ (x >> 32)) & 0x00000000001fffffull;
  return Coord(x);
}

// Shift from a kMaxLevel code to the code of the level-`level` octant containing it.
constexpr int shift_to(int level) {
  return 3 * (kMaxLevel - level);
}

// LSD radix sort of values below 2^bits (11-bit digits, so at most 3 passes for the 8-level
// keys of a level-9 mesh), then duplicates dropped. Same-level codes compare like keys, and
// this is several times faster than std::sort on a million of them.
void sort_unique(std::vector<std::uint64_t>& v, int bits) {
  constexpr int kDigit = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kDigit;
  std::vector<std::uint64_t> tmp;
  reserve_huge(tmp, v.size());
  tmp.resize(v.size());
  std::vector<std::size_t> count(kBuckets);
  for (int s = 0; s < bits; s += kDigit) {
    std::fill(count.begin(), count.end(), 0);
    for (const auto x : v) ++count[(x >> s) & (kBuckets - 1)];
    std::size_t sum = 0;
    for (auto& c : count) {
      const std::size_t n = c;
      c = sum;
      sum += n;
    }
    for (const auto x : v) tmp[count[(x >> s) & (kBuckets - 1)]++] = x;
    v.swap(tmp);
  }
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// The leaf array during balance: kMaxLevel codes and levels side by side, so the scans stream
// 9 bytes per leaf and never run Chan's comparison.
struct Linear {
  std::vector<std::uint64_t> code;
  std::vector<std::int8_t> level;
  std::size_t size() const { return code.size(); }
  void clear() {
    code.clear();
    level.clear();
  }
  void reserve(std::size_t n) {
    reserve_huge(code, n);
    reserve_huge(level, n);
  }
};

// The balance constraints still to apply, per level p: codes of level-p octants that must be
// octants of the mesh (split or leaf). A refined octant at level p forces its six face
// neighbours at level p to exist: that is 2:1 face balance restated on refined octants. Every
// leaf at level l >= 2 adds its parent's neighbours to level l-1 (its siblings would add the
// same: `last` skips a parent just seen at that level).
class Constraints {
 public:
  explicit Constraints(int finest) : req_(std::size_t(finest) + 1), last_(req_.size(), ~0ull) {}

  void add_leaf(std::uint64_t code, int level) {
    if (level < 2) return;  // the root has no neighbours
    const int p = level - 1;
    const std::uint64_t pc = code >> shift_to(p);
    if (pc == last_[std::size_t(p)]) return;
    last_[std::size_t(p)] = pc;
    const std::uint64_t mx = spread3((Coord{1} << p) - 1);  // x digits of a level-p code
    auto& out = req_[std::size_t(p)];
    for (const std::uint64_t a : {mx, mx << 1, mx << 2}) {
      const std::uint64_t on = pc & a, off = pc & ~a;
      // Dilated-integer step along one axis: the other axes' bits are set so the carry (or
      // borrow) crosses them; none past the domain's faces.
      if (on != a) out.push_back((((pc | ~a) + 1) & a) | off);
      if (on != 0) out.push_back(((on - 1) & a) | off);
    }
  }
  // The level-p constraints, sorted and unique (no more are added at p once it is taken).
  std::vector<std::uint64_t>& take(int p) {
    auto& v = req_[std::size_t(p)];
    sort_unique(v, 3 * p);
    return v;
  }

 private:
  std::vector<std::vector<std::uint64_t>> req_;
  std::vector<std::uint64_t> last_;
};

// Emits the leaves that split the leaf (code, level) just enough for every level-`target` code
// in req[0..n) (sorted, all inside it) to be an octant, in Morton order; the new leaves' own
// constraints go to `cons` (all at levels below target, so still to be applied).
void complete(std::uint64_t code, int level, int target, const std::uint64_t* req, std::size_t n,
              Linear& out, Constraints& cons) {
  if (n == 0 || level == target) {
    out.code.push_back(code);
    out.level.push_back(std::int8_t(level));
    cons.add_leaf(code, level);
    return;
  }
  const int child_shift = shift_to(level + 1);
  const int req_shift = 3 * (target - level - 1);  // the child's digit inside a target code
  std::size_t i = 0;
  for (std::uint64_t o = 0; o < 8; ++o) {
    std::size_t j = i;
    while (j < n && ((req[j] >> req_shift) & 7u) == o) ++j;
    complete(code | (o << child_shift), level + 1, target, req + i, j - i, out, cons);
    i = j;
  }
}

// The last index i >= from with code[i] <= c (code[from] <= c), by galloping: O(log distance),
// so one sweep over sorted queries costs O(q log(n/q)) rather than O(n) per level.
std::size_t gallop(const std::vector<std::uint64_t>& code, std::size_t from, std::uint64_t c) {
  std::size_t step = 1, lo = from, hi = from + 1;
  while (hi < code.size() && code[hi] <= c) {
    lo = hi;
    step *= 2;
    hi = from + step;
  }
  hi = std::min(hi, code.size());  // code[lo] <= c < code[hi] (or hi = end)
  return std::size_t(std::upper_bound(code.begin() + std::ptrdiff_t(lo) + 1,
                                      code.begin() + std::ptrdiff_t(hi), c) -
                     code.begin()) -
         1;
}

struct Sphere {
  std::array<double, 3> c;
  double r2;
  int max_level;
};

// Depth-first in octant order, so leaves come out in Morton order. Children are made inline
// (octree::child is out of line and was a tenth of the run time).
void refine_rec(Coord x, Coord y, Coord z, int level, const Sphere& s, std::vector<Key>& out) {
  const std::array<Coord, 3> lo_i{x, y, z};
  if (level < s.max_level) {
    const double h = std::ldexp(1.0, -level);
    double near2 = 0.0, far2 = 0.0;
    for (std::size_t d = 0; d < 3; ++d) {
      const double lo = double(lo_i[d]) / double(std::uint64_t{1} << kMaxLevel);
      const double a = lo - s.c[d];
      const double b = lo + h - s.c[d];
      const double near = a > 0 ? a : (b < 0 ? -b : 0.0);
      const double far = std::max(std::fabs(a), std::fabs(b));
      near2 += near * near;
      far2 += far * far;
    }
    if (near2 <= s.r2 && far2 >= s.r2) {
      const Coord hc = octree::side(level + 1);
      for (Coord o = 0; o < 8; ++o)
        refine_rec(x + (o & 1 ? hc : 0), y + (o & 2 ? hc : 0), z + (o & 4 ? hc : 0), level + 1, s,
                   out);
      return;
    }
  }
  if (out.size() == out.capacity()) reserve_huge(out, std::max<std::size_t>(4096, 2 * out.size()));
  out.push_back(Key{lo_i, std::int8_t(level)});
}

}  // namespace

std::uint64_t code_in_root(const Key& k) {
  return spread3(k.x[0]) | (spread3(k.x[1]) << 1) | (spread3(k.x[2]) << 2);
}

Key key_from_code(std::uint64_t code, int level) {
  return Key{{compact3(code), compact3(code >> 1), compact3(code >> 2)}, std::int8_t(level)};
}

std::vector<Key> refine_sphere_surface(int max_level, double cx, double cy, double cz,
                                       double radius) {
  std::vector<Key> out;
  refine_rec(0, 0, 0, 0, Sphere{{cx, cy, cz}, radius * radius, max_level}, out);
  return out;
}

// Balance, level by level from the finest. One pass encodes the leaves and collects every
// leaf's constraint (see Constraints). Then for p = finest-1 .. 1: the level-p constraints,
// sorted, are swept once over the leaf array (galloping) to find the leaves coarser than p
// holding a constrained octant; each is replaced by its completion. New leaves are at levels
// <= p and their constraints at levels < p, so the later passes apply them: the ripple ends
// after one pass per level, with no per-leaf searches.
std::vector<Key> balance_faces(std::span<const Key> leaves) {
  const std::size_t n0 = leaves.size();
  Linear orig;
  orig.reserve(n0);
  int finest = 0;
  for (const Key& k : leaves) finest = std::max(finest, int(k.level));
  Constraints cons(finest);
  for (const Key& k : leaves) {
    assert(k.x[0] < octree::side(0) && k.x[1] < octree::side(0) && k.x[2] < octree::side(0));
    const std::uint64_t c = code_in_root(k);
    orig.code.push_back(c);
    orig.level.push_back(k.level);
    cons.add_leaf(c, k.level);
  }

  const Linear* cur = &orig;
  Linear buf[2];
  int next_buf = 0;
  struct Split {
    std::size_t leaf, first, last;  // leaf index, its constraints req[first, last)
  };
  std::vector<Split> splits;
  for (int p = finest - 1; p >= 1; --p) {
    const std::vector<std::uint64_t>& req = cons.take(p);
    if (req.empty()) continue;
    const int sh = shift_to(p);
    splits.clear();
    std::size_t i = 0;
    for (std::size_t j = 0; j < req.size();) {
      // The leaf holding the constrained octant's first cell; it satisfies the constraint
      // unless it is coarser than p, and then it holds every constraint up to its end.
      i = gallop(cur->code, i, req[j] << sh);
      const int l = cur->level[i];
      if (l >= p) {
        ++j;
        continue;
      }
      const std::uint64_t end = (cur->code[i] >> sh) + (std::uint64_t{1} << (3 * (p - l)));
      const std::size_t first = j;
      while (j < req.size() && req[j] < end) ++j;
      splits.push_back({i, first, j});
    }
    if (splits.empty()) continue;

    Linear& next = buf[next_buf];
    next_buf ^= 1;
    next.clear();
    next.reserve(cur->size() + cur->size() / 8);
    std::size_t copied = 0;
    for (const Split& s : splits) {
      next.code.insert(next.code.end(), cur->code.begin() + std::ptrdiff_t(copied),
                       cur->code.begin() + std::ptrdiff_t(s.leaf));
      next.level.insert(next.level.end(), cur->level.begin() + std::ptrdiff_t(copied),
                        cur->level.begin() + std::ptrdiff_t(s.leaf));
      complete(cur->code[s.leaf], cur->level[s.leaf], p, req.data() + s.first, s.last - s.first,
               next, cons);
      copied = s.leaf + 1;
    }
    next.code.insert(next.code.end(), cur->code.begin() + std::ptrdiff_t(copied), cur->code.end());
    next.level.insert(next.level.end(), cur->level.begin() + std::ptrdiff_t(copied),
                      cur->level.end());
    cur = &next;
  }

  // Most leaves are unchanged: copy their keys and decode only the new ones. Balance only
  // splits, so the input leaf holding each output leaf is found by one forward sweep.
  std::vector<Key> out;
  reserve_huge(out, cur->size());
  std::size_t j = 0;
  for (std::size_t i = 0; i < cur->size(); ++i) {
    const std::uint64_t c = cur->code[i];
    while (j + 1 < n0 && orig.code[j + 1] <= c) ++j;
    if (orig.code[j] == c && orig.level[j] == cur->level[i])
      out.push_back(leaves[j]);
    else
      out.push_back(key_from_code(c, cur->level[i]));
  }
  return out;
}

std::int64_t count_face_balance_violations(const octree::LeafSet& leaves) {
  const octree::RootGrid grid{};
  std::int64_t bad = 0;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const Key& k = leaves[i];
    for (const auto f : octree::kFaces) {
      const auto a = leaves.across(k, f, grid);
      switch (a.relation) {
        case octree::Relation::kBoundary:
        case octree::Relation::kSame:
          break;
        case octree::Relation::kCoarser:
          bad += leaves[a.index[0]].level < k.level - 1;
          break;
        case octree::Relation::kFiner:
          bad += a.count != 4;  // some child across is split again: two levels finer
          break;
        case octree::Relation::kNotHere:
          ++bad;
          break;
      }
    }
  }
  return bad;
}

}  // namespace miniamr::bench
