// The partition helpers (the same on every rank; no communication).
// (shared set-up and conventions: runtime_fixtures.hpp)
#include "runtime_fixtures.hpp"

namespace {

using namespace runtime_test;

// ---------------------------------------------------------------------------------------------
// 7. Partition helpers (the same on every rank; no communication)

TEST(Partition, OwnerWithEmptyRanks) {
  const RootGrid grid{{2, 2, 2}};
  const std::vector<Key> keys = random_mesh(grid, 3, 40, 91);
  const LeafSet whole(keys);
  const std::size_t n = keys.size();
  ASSERT_GT(n, 20u);
  // Bounds along the curve: empty ranks in the middle, at the end and at the start.
  const std::vector<std::vector<std::size_t>> layouts{
      {0, n / 3, n / 3, 2 * n / 3, n, n, n},
      {0, 0, n / 2, n / 2, n},
      {0, 0, 0, 1, n - 1, n},
      {0, n},
  };
  for (const sfc::Curve curve : kCurves) {
    const auto space = space_of(curve, grid);
    const auto order = along_curve(keys, space);
    for (const auto& b : layouts) {
      const std::string what = curve_name(curve) + " " + bounds_text(b);
      const auto targets = targets_from_bounds(keys, space, b);
      const int P = int(b.size()) - 1;
      std::vector<sfc::Position> firsts(static_cast<std::size_t>(P), sfc::Partition::kNoLeaf);
      for (std::size_t r = 0; r + 1 < b.size(); ++r)
        if (b[r] < b[r + 1]) firsts[r] = sfc::first_position(keys[order[b[r]]], space);
      const sfc::Partition part = sfc::Partition::from_firsts(space, firsts);
      ASSERT_EQ(part.ranks(), P) << what;
      // The same first positions in 8 bytes (no leaf deeper than 3): the same answers.
      std::vector<std::uint64_t> coarse_firsts;
      for (const sfc::Position f : firsts)
        coarse_firsts.push_back(sfc::Partition::coarse_first(f, 3));
      const sfc::Partition coarse = sfc::Partition::from_coarse_firsts(space, 3, coarse_firsts);
      ASSERT_TRUE(coarse.coarse() && !part.coarse()) << what;
      ASSERT_EQ(coarse.ranks(), P) << what;
      for (int r = 0; r + 1 < P; ++r)
        EXPECT_EQ(coarse.holds_leaves(r), part.holds_leaves(r)) << what << " rank " << r;
      for (const Key& k : keys) {
        for (Key region = k;; region = octree::parent(region)) {
          EXPECT_EQ(coarse.owners(region), part.owners(region)) << what << " " << str(region);
          if (region.level == 0) break;
        }
        EXPECT_EQ(coarse.owner(octree::last_descendant(k)), part.owner(octree::last_descendant(k)))
            << what << " " << str(k);
      }
      for (std::size_t i = 0; i < n; ++i) {
        const Key& k = keys[i];
        // The leaf and every block inside it belong to the leaf's holder.
        EXPECT_EQ(part.owner(k), targets[i]) << what << " leaf " << str(k);
        EXPECT_EQ(part.owner(octree::last_descendant(k)), targets[i]) << what << " " << str(k);
        for (int o = 0; o < 8; ++o)
          EXPECT_EQ(part.owner(octree::child(k, o)), targets[i]) << what << " " << str(k);
        // Every region holding the leaf (its ancestors) lists the leaf's holder, and the
        // region's leaves' holders bound its owners exactly.
        for (Key region = k;; region = octree::parent(region)) {
          const auto [lo, hi] = part.owners(region);
          const auto [first, last] = whole.range_within(region);
          int min_holder = P, max_holder = -1;
          for (std::size_t j = first; j < last; ++j) {
            min_holder = std::min(min_holder, targets[j]);
            max_holder = std::max(max_holder, targets[j]);
          }
          EXPECT_EQ(lo, min_holder) << what << " region " << str(region);
          EXPECT_EQ(hi, max_holder) << what << " region " << str(region);
          if (region.level == 0) break;
        }
      }
      // A face neighbour inside a coarser leaf: owners() of that region name the leaf's holder.
      for (const Key& k : keys)
        for (const octree::Face f : octree::kFaces)
          if (const auto nkey = octree::face_neighbour(k, f, grid))
            if (const auto c = whole.find_covering(*nkey)) {
              EXPECT_EQ(part.owners(*nkey), std::make_pair(targets[*c], targets[*c]))
                  << what << " " << str(*nkey);
            }
    }
  }
}

TEST(Partition, ExchangedInEightBytesWhenNoLeafIsDeeperThanGiven) {
  // The ranks' partition of a random mesh (levels up to 3), exchanged in 16 bytes a rank and in
  // 8 (the deepest level given): the same owner for every leaf, region and corner cell; a root
  // grid too large for 8 bytes at that depth keeps 16.
  const int P = world_size(), me = world_rank();
  for (const sfc::Curve curve : kCurves) {
    for (const RootGrid grid : {RootGrid{{2, 3, 2}}, RootGrid{{5, 1, 2}}}) {
      const auto space = space_of(curve, grid);
      const std::vector<Key> keys = random_mesh(grid, 3, 40, 93);
      const auto targets = cut_whole(keys, space, random_weights(keys.size(), 5, 11), P);
      const Domain d = make_domain(grid, BlockShape{2, 2, 2, 1}, share(keys, targets, me));
      const comm::Communicator comm(MPI_COMM_WORLD);
      const sfc::Partition wide = mesh::exchange_partition(d, space, comm);
      const sfc::Partition narrow = mesh::exchange_partition(d, space, comm, 3);
      const std::string what = curve_name(curve) + " grid " + std::to_string(grid.n[0]);
      EXPECT_FALSE(wide.coarse()) << what;
      EXPECT_TRUE(narrow.coarse()) << what;
      bool same = true;
      for (std::size_t i = 0; i < keys.size(); ++i) {
        same = same && narrow.owner(keys[i]) == targets[i] && wide.owner(keys[i]) == targets[i];
        for (Key region = keys[i];; region = octree::parent(region)) {
          same = same && narrow.owners(region) == wide.owners(region);
          if (region.level == 0) break;
        }
      }
      EXPECT_TRUE(all_ranks(same, what + ": owners differ")) << what;
    }
  }
  // 3 (root bits + deepest) must stay under 64: a 4096-wide grid (12 bits) fits to depth 9.
  EXPECT_TRUE(sfc::Partition::coarse_fits(12, 9));
  EXPECT_FALSE(sfc::Partition::coarse_fits(12, 10));
}

TEST(Partition, CutIsMonotoneBalancedAndSplittable) {
  EXPECT_EQ(sfc::cut(std::vector<std::int64_t>{1, 1, 1, 1}, 0, 4, 2),
            (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(sfc::cut(std::vector<std::int64_t>{3, 1}, 0, 4, 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(sfc::cut(std::vector<std::int64_t>{1, 1}, 0, 2, 4), (std::vector<int>{0, 2}));
  EXPECT_EQ(sfc::cut(std::vector<std::int64_t>{0, 0, 0}, 0, 0, 3), (std::vector<int>{0, 0, 0}));

  Rng rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    const auto n = std::size_t(1 + rng.below(300));
    const int parts = int(1 + rng.below(9));
    const std::int64_t max_w = 1 + rng.below(trial % 2 ? 1000 : 5);
    std::vector<std::int64_t> w(n);
    for (auto& x : w) x = rng.below(max_w + 1);  // zero weights included
    const std::int64_t total = std::accumulate(w.begin(), w.end(), std::int64_t{0});
    const auto t = sfc::cut(w, 0, total, parts);
    ASSERT_EQ(t.size(), n);
    EXPECT_TRUE(std::is_sorted(t.begin(), t.end())) << "trial " << trial;
    EXPECT_TRUE(std::ranges::all_of(t, [&](int x) { return x >= 0 && x < parts; }));
    EXPECT_EQ(t[0], 0);
    if (total == 0) continue;
    // Each part holds its share of the weight, give or take one leaf's.
    std::vector<std::int64_t> load(std::size_t(parts), 0);
    for (std::size_t i = 0; i < n; ++i) load[std::size_t(t[i])] += w[i];
    const std::int64_t wmax = *std::max_element(w.begin(), w.end());
    for (std::size_t p = 0; p < load.size(); ++p) {
      EXPECT_LE(load[p] * parts, total + wmax * parts) << "trial " << trial << " part " << p;
      EXPECT_GE(load[p] * parts, total - wmax * parts) << "trial " << trial << " part " << p;
    }
    // Cutting piecewise (each rank its leaves, with the weight before them) gives the same
    // targets: what rebalance() relies on.
    const auto pieces = std::size_t(1 + rng.below(5));
    std::vector<int> joined;
    std::int64_t offset = 0;
    for (std::size_t p = 0; p < pieces; ++p) {
      const std::size_t lo = n * p / pieces, hi = n * (p + 1) / pieces;
      const auto part = std::span(w).subspan(lo, hi - lo);
      const auto tp = sfc::cut(part, offset, total, parts);
      joined.insert(joined.end(), tp.begin(), tp.end());
      offset += std::accumulate(part.begin(), part.end(), std::int64_t{0});
    }
    EXPECT_EQ(joined, t) << "trial " << trial;
  }
}

TEST(Partition, KeepFamiliesTogetherStaysMonotone) {
  const RootGrid grid{{2, 2, 1}};
  for (const sfc::Curve curve : kCurves) {
    const auto space = space_of(curve, grid);
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      const std::vector<Key> keys = random_mesh(grid, 3, 50, 300 + seed);
      const LeafSet whole(keys);
      const auto order = along_curve(keys, space);
      // family_start along the curve: a complete family is contiguous on either curve.
      std::vector<std::size_t> start(order.size());
      for (std::size_t p = 0; p < order.size(); ++p) {
        const Key& k = keys[order[p]];
        start[p] = p;
        if (whole.family_complete(k))
          for (std::size_t q = p; q-- > 0 && octree::contains(octree::parent(k), keys[order[q]]);)
            start[p] = q;
      }
      const int parts = int(2 + seed % 6);
      std::vector<std::int64_t> w(order.size());
      const auto rw = random_weights(keys.size(), 50, seed);
      for (std::size_t p = 0; p < order.size(); ++p) w[p] = rw[p];
      const std::int64_t total = std::accumulate(w.begin(), w.end(), std::int64_t{0});
      auto t = sfc::cut(w, 0, total, parts);
      const auto original = t;
      sfc::keep_families_together(t, start);
      const std::string what = curve_name(curve) + " seed " + std::to_string(seed);
      EXPECT_TRUE(std::is_sorted(t.begin(), t.end())) << what;
      for (std::size_t p = 0; p < order.size(); ++p) {
        EXPECT_EQ(t[p], original[start[p]]) << what << " " << str(keys[order[p]]);
        if (start[p] == p && !whole.family_complete(keys[order[p]])) {
          EXPECT_EQ(t[p], original[p]) << what << ": a leaf outside families moved";
        }
      }
    }
  }
}

}  // namespace
