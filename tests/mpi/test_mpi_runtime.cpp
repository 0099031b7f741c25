// The MPI runtimes on 1..4 ranks: migration, the refinement consensus across rank
// boundaries, family gathering, empty ranks, the halo exchange and the partition helpers.
//
// Every distributed result is compared with the same computation on the whole mesh, done
// redundantly on every rank (a LocalMailbox, or a StaticRuntime on MPI_COMM_SELF), so the tests
// are generic in the rank count: on one rank they still run every code path that needs no
// remote peer, and on more ranks the rank boundaries fall at different places of the curve.
// Tests that depend on who owns what run with both ownership curves (Morton and Hilbert).
//
// Only rank 0 prints GoogleTest's report (mpi_main.cpp), so checks of rank-local facts go
// through all_ranks(): every rank reaches the same verdict (no rank leaves a collective early)
// and a failing rank prints its own details to stderr.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "mpi_checks.hpp"
#include "octree/key.hpp"
#include "octree/leaf_set.hpp"
#include "octree/refine.hpp"
#include "runtime/domain.hpp"
#include "runtime/dynamic_runtime.hpp"
#include "runtime/exact_reduce.hpp"
#include "runtime/ghost_plan.hpp"
#include "runtime/migrate.hpp"
#include "runtime/mpi.hpp"
#include "runtime/neighbourhood.hpp"
#include "runtime/static_runtime.hpp"
#include "sfc/curve.hpp"
#include "sfc/partition.hpp"
#include "stencil/block.hpp"
#include "stencil/compact_stencil.hpp"
#include "stencil/exact_sum.hpp"
#include "stencil/hash.hpp"
#include "stencil/init_values.hpp"
#include "stencil/split_coarsen.hpp"
#include "stencil/stencil_kernels.hpp"
#include "stencil/variable_kernels.hpp"

namespace {

namespace octree = miniamr::octree;
namespace runtime = miniamr::runtime;
namespace sfc = miniamr::sfc;
namespace stencil = miniamr::stencil;

using octree::Key;
using octree::LeafSet;
using octree::RootGrid;
using runtime::Domain;
using stencil::Block;
using stencil::BlockShape;

constexpr std::uint64_t kDataSeed = 0x7465737473ull;

// One OpenMP thread per rank unless OMP_NUM_THREADS says otherwise, as the driver does
// (app/run.cpp): OpenMP's default of a thread per core would have 4 oversubscribed ranks' spinning
// threads fight over the cores. Set before main(), so before any parallel region.
[[maybe_unused]] const bool kOneThreadPerRank = [] {
  if (std::getenv("OMP_NUM_THREADS") == nullptr) omp_set_num_threads(1);
  return true;
}();

// Sets the OpenMP thread count for a scope (when `n` > 0).
class ThreadScope {
 public:
  explicit ThreadScope(int n) : saved_(omp_get_max_threads()) {
    if (n > 0) omp_set_num_threads(n);
  }
  ~ThreadScope() { omp_set_num_threads(saved_); }
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int saved_;
};
constexpr std::array<sfc::Curve, 2> kCurves{sfc::Curve::kMorton, sfc::Curve::kHilbert};

std::string curve_name(sfc::Curve c) {
  return c == sfc::Curve::kMorton ? "morton" : "hilbert";
}

// ---------------------------------------------------------------------------------------------
// Ranks and collective verdicts

using mpi_checks::all_ranks;
using mpi_checks::world_rank;
using mpi_checks::world_size;
using mpi_checks::world_sum;

// Collects the first few problems of one check into a message.
class Problems {
 public:
  void add(const std::string& what) {
    if (count_++ < 6) text_ += what + "; ";
  }
  bool none() const { return count_ == 0; }
  std::string text() const {
    return none() ? std::string{} : std::to_string(count_) + " problem(s): " + text_;
  }

 private:
  int count_ = 0;
  std::string text_;
};

std::string str(const Key& k) {
  return octree::to_string(k);
}

// Every rank's keys, in rank order, on every rank.
std::vector<std::vector<Key>> allgather_keys(std::span<const Key> mine) {
  const int p = world_size();
  const int bytes = int(mine.size() * sizeof(Key));
  std::vector<int> counts(std::size_t(p), 0), displs(std::size_t(p), 0);
  MPI_Allgather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (std::size_t r = 1; r < counts.size(); ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::vector<Key> flat(std::size_t(displs.back() + counts.back()) / sizeof(Key));
  MPI_Allgatherv(mine.data(), bytes, MPI_BYTE, flat.data(), counts.data(), displs.data(), MPI_BYTE,
                 MPI_COMM_WORLD);
  std::vector<std::vector<Key>> out;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    const auto first = flat.begin() + displs[r] / int(sizeof(Key));
    out.emplace_back(first, first + counts[r] / int(sizeof(Key)));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Deterministic randomness (identical on every rank)

std::uint64_t key_hash(const Key& k, std::uint64_t seed) {
  std::uint64_t h = stencil::hash_combine(seed, std::uint64_t(k.level));
  for (int d = 0; d < 3; ++d) h = stencil::hash_combine(h, k.x[std::size_t(d)]);
  return h;
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : seed_(seed) {}
  std::uint64_t next() { return stencil::hash_combine(seed_, counter_++); }
  // Uniform enough in [0, n) for tests.
  std::int64_t below(std::int64_t n) { return std::int64_t(next() % std::uint64_t(n)); }

 private:
  std::uint64_t seed_;
  std::uint64_t counter_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Whole meshes (built identically on every rank; keys in Morton order)

// Splits every leaf `want` picks plus what the 2:1 closure forces.
std::vector<Key> refine_where(const std::vector<Key>& keys, const RootGrid& grid,
                              const std::function<bool(const Key&)>& want) {
  const LeafSet leaves(keys);
  std::vector<std::int8_t> marks(keys.size(), octree::kStay);
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (want(keys[i])) marks[i] = octree::kRefine;
  octree::LocalMailbox local;
  octree::close_marks(leaves, marks, grid, local);
  return octree::plan_adapt(leaves, marks).keys;
}

// Roots refined at random, level by level, up to `max_level` (each leaf with `percent` chance).
std::vector<Key> random_mesh(const RootGrid& grid, int max_level, int percent, std::uint64_t seed) {
  std::vector<Key> keys = octree::root_leaves(grid);
  for (int l = 0; l < max_level; ++l) {
    keys = refine_where(keys, grid, [&](const Key& k) {
      return k.level == l && int(key_hash(k, seed) % 100) < percent;
    });
  }
  return keys;
}

std::vector<Key> refine_all(const std::vector<Key>& keys, const RootGrid& grid) {
  return refine_where(keys, grid, [](const Key&) { return true; });
}

std::size_t index_of(const std::vector<Key>& sorted, const Key& k) {
  const auto it = std::lower_bound(sorted.begin(), sorted.end(), k, octree::MortonLess{});
  return std::size_t(it - sorted.begin());
}

// The octant-0 key of every complete family (8 sibling leaves) of a whole mesh.
std::vector<Key> complete_families(const std::vector<Key>& keys) {
  const LeafSet leaves(keys);
  std::vector<Key> firsts;
  for (const Key& k : keys)
    if (k.level > 0 && k.octant() == 0 && leaves.family_complete(k)) firsts.push_back(k);
  return firsts;
}

// ---------------------------------------------------------------------------------------------
// Distributions: rank r holds a contiguous range of the ownership curve

sfc::CurveSpace space_of(sfc::Curve curve, const RootGrid& grid) {
  return sfc::CurveSpace::make(curve, grid);
}

// Indices of `keys` (Morton order) along the curve.
std::vector<std::size_t> along_curve(const std::vector<Key>& keys, const sfc::CurveSpace& space) {
  return sfc::curve_order(LeafSet(keys), space);
}

// Target of each key (indexed like keys) when rank r holds curve positions [bounds[r],
// bounds[r+1]) of the leaves along the curve.
std::vector<int> targets_from_bounds(const std::vector<Key>& keys, const sfc::CurveSpace& space,
                                     std::span<const std::size_t> bounds) {
  const auto order = along_curve(keys, space);
  std::vector<int> t(keys.size());
  for (std::size_t r = 0; r + 1 < bounds.size(); ++r)
    for (std::size_t p = bounds[r]; p < bounds[r + 1]; ++p) t[order[p]] = int(r);
  return t;
}

// Targets of the curve cut into `parts` ranges of equal weight (weights indexed like keys).
std::vector<int> cut_whole(const std::vector<Key>& keys, const sfc::CurveSpace& space,
                           std::span<const std::int64_t> weights, int parts) {
  const auto order = along_curve(keys, space);
  std::vector<std::int64_t> along(order.size());
  for (std::size_t p = 0; p < order.size(); ++p) along[p] = weights[order[p]];
  const std::int64_t total = std::accumulate(along.begin(), along.end(), std::int64_t{0});
  const auto cut = sfc::cut(along, 0, total, parts);
  std::vector<int> t(keys.size());
  for (std::size_t p = 0; p < order.size(); ++p) t[order[p]] = cut[p];
  return t;
}

// Targets of the Morton curve cut into one range of equal leaf count per rank.
std::vector<int> even_cut(const std::vector<Key>& keys, const RootGrid& grid) {
  return cut_whole(keys, space_of(sfc::Curve::kMorton, grid),
                   std::vector<std::int64_t>(keys.size(), 1), world_size());
}

// Random weights in 1..max_weight, one per leaf.
std::vector<std::int64_t> random_weights(std::size_t n, std::int64_t max_weight,
                                         std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::int64_t> w(n);
  for (auto& x : w) x = 1 + rng.below(max_weight);
  return w;
}

// Rank `rank`'s leaves (Morton order) when leaf i goes to targets[i].
std::vector<Key> share(const std::vector<Key>& all, std::span<const int> targets, int rank) {
  std::vector<Key> mine;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (targets[i] == rank) mine.push_back(all[i]);
  return mine;
}

// Problems with the ranks' holdings as a partition of `keys` along the curve: every leaf on
// exactly one rank, and each non-empty rank's range wholly after the previous non-empty one's
// (for Morton: its first key morton_less-after the previous rank's last key).
std::string partition_problems(const std::vector<std::vector<Key>>& per_rank,
                               const std::vector<Key>& keys, const sfc::CurveSpace& space) {
  Problems p;
  std::vector<Key> joined;
  bool have_last = false;
  sfc::Position last = 0;
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    std::vector<Key> mine = per_rank[r];
    if (!std::is_sorted(mine.begin(), mine.end(), octree::MortonLess{}))
      p.add("rank " + std::to_string(r) + ": leaves not in Morton order");
    std::sort(mine.begin(), mine.end(), [&](const Key& a, const Key& b) {
      return sfc::first_position(a, space) < sfc::first_position(b, space);
    });
    for (const Key& k : mine) {
      if (have_last && !(last < sfc::first_position(k, space)))
        p.add("rank " + std::to_string(r) + ": " + str(k) + " does not follow the leaves before");
      last = sfc::last_position(k, space);
      have_last = true;
      joined.push_back(k);
    }
  }
  std::sort(joined.begin(), joined.end(), octree::MortonLess{});
  if (joined != keys)
    p.add("the ranks hold " + std::to_string(joined.size()) + " leaves, not the " +
          std::to_string(keys.size()) + " of the mesh");
  return p.text();
}

// ---------------------------------------------------------------------------------------------
// Domains and data

Block initial_block(const Key& k, const BlockShape& s) {
  Block b(s);
  stencil::fill_initial(b,
                        {std::int64_t(k.index(0)) * s.nx, std::int64_t(k.index(1)) * s.ny,
                         std::int64_t(k.index(2)) * s.nz},
                        k.level, kDataSeed);
  return b;
}

// A cost value that identifies its block (so a cost travelling with the wrong block shows).
double key_cost(const Key& k) {
  return stencil::to_unit(key_hash(k, 17));
}

Domain make_domain(const RootGrid& grid, const BlockShape& shape, std::span<const Key> keys) {
  Domain d;
  d.grid = grid;
  d.shape = shape;
  d.leaves = LeafSet(std::vector<Key>(keys.begin(), keys.end()));
  for (const Key& k : keys) {
    d.blocks.push_back(initial_block(k, shape));
    d.cost.push_back(key_cost(k));
  }
  return d;
}

std::vector<Key> keys_of(const Domain& d) {
  return {d.leaves.keys().begin(), d.leaves.keys().end()};
}

// The first cell where two blocks differ bitwise (every variable; interior or every cell).
std::optional<std::string> first_difference(const Block& a, const Block& b, bool interior_only) {
  const BlockShape& s = a.shape();
  if (!(s == b.shape())) return "shapes differ";
  const int lo = interior_only ? 1 : 0;
  for (int v = 0; v < s.num_vars; ++v) {
    const auto x = a.var(v), y = b.var(v);
    for (int i = lo; i <= s.nx + 1 - lo; ++i)
      for (int j = lo; j <= s.ny + 1 - lo; ++j)
        for (int k = lo; k <= s.nz + 1 - lo; ++k) {
          const std::size_t at = s.at(i, j, k);
          if (std::bit_cast<std::uint64_t>(x[at]) != std::bit_cast<std::uint64_t>(y[at])) {
            std::ostringstream os;
            os.precision(17);
            os << "var " << v << " cell (" << i << "," << j << "," << k << "): " << x[at] << " vs "
               << y[at];
            return os.str();
          }
        }
  }
  return std::nullopt;
}

// Compares every local block with the reference block of the same key (the whole mesh).
std::string compare_with_reference(const Domain& d, const Domain& ref, bool interior_only) {
  Problems p;
  for (std::size_t i = 0; i < d.leaves.size(); ++i) {
    const auto j = ref.leaves.find(d.leaves[i]);
    if (!j) {
      p.add("leaf " + str(d.leaves[i]) + " not in the reference");
      continue;
    }
    if (const auto diff = first_difference(d.blocks[i], ref.blocks[*j], interior_only))
      p.add("block " + str(d.leaves[i]) + " " + *diff);
  }
  return p.text();
}

// Checks that `d` holds exactly `expected` (Morton order), each block with its initial
// interior and its own cost.
std::string check_holdings(const Domain& d, const std::vector<Key>& expected) {
  Problems p;
  const auto keys = d.leaves.keys();
  if (!std::is_sorted(keys.begin(), keys.end(), octree::MortonLess{})) p.add("leaves not sorted");
  if (!std::equal(keys.begin(), keys.end(), expected.begin(), expected.end()))
    p.add("holds " + std::to_string(keys.size()) + " leaves, expected " +
          std::to_string(expected.size()) + " others");
  if (d.blocks.size() != keys.size() || d.cost.size() != keys.size())
    p.add("blocks/cost not one per leaf");
  for (std::size_t i = 0; i < std::min(keys.size(), d.blocks.size()); ++i) {
    if (const auto diff = first_difference(d.blocks[i], initial_block(keys[i], d.shape), true))
      p.add("block " + str(keys[i]) + " " + *diff);
    if (i < d.cost.size() && d.cost[i] != key_cost(keys[i]))
      p.add("cost of " + str(keys[i]) + " travelled with another block");
  }
  return p.text();
}

// The totals over all ranks of `comm` of per-rank exact sums, rounded once (as the driver).
std::vector<double> reduce_sums(std::span<stencil::ExactSum> sums, MPI_Comm comm) {
  const runtime::Communicator c(comm);
  return runtime::global_sums(c, sums);
}

// The driver's checksum: per-block interior sums added exactly and reduced over `comm`.
std::vector<double> checksums(const Domain& d, MPI_Comm comm) {
  std::vector<stencil::ExactSum> sums(std::size_t(d.shape.num_vars));
  for (const Block& b : d.blocks)
    for (int v = 0; v < d.shape.num_vars; ++v)
      sums[std::size_t(v)].add(stencil::interior_sum(b, v));
  return reduce_sums(sums, comm);
}

bool same_bits(std::span<const double> a, std::span<const double> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](double x, double y) {
    return std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(y);
  });
}

// Splits or merges the local blocks as the driver does (Simulation::apply_plan).
void apply_plan(Domain& d, const octree::AdaptPlan& plan) {
  std::vector<Block> fresh;
  for (std::size_t i = 0; i < plan.keys.size(); ++i) {
    const octree::Origin& o = plan.origin[i];
    switch (o.kind) {
      case octree::Origin::kKept:
        fresh.push_back(d.blocks[o.old_index]);
        break;
      case octree::Origin::kSplit:
        fresh.push_back(stencil::split_child(d.blocks[o.old_index], o.octant));
        break;
      case octree::Origin::kMerged: {
        std::array<const Block*, 8> children{};
        for (std::size_t c = 0; c < 8; ++c) children[c] = &d.blocks[o.old_index + c];
        fresh.push_back(stencil::coarsen(children));
        break;
      }
    }
  }
  d.blocks = std::move(fresh);
  d.cost.assign(d.blocks.size(), 0.0);
  d.leaves = LeafSet(plan.keys);
}

runtime::StaticOptions options(sfc::Curve curve, bool blocking = false) {
  runtime::StaticOptions o;
  o.blocking_send = blocking;
  o.ownership = curve;
  return o;
}

// ---------------------------------------------------------------------------------------------
// 1. Migration

TEST(Migration, CarriesMarksCostsAndEveryBitOfTheStorage) {
  // Every block moves one rank on. Unequal extents catch a row/plane mix-up; special values
  // (in ghosts too: the whole storage travels) catch any arithmetic on the way.
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{2, 2, 1}};
  const std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);
  const BlockShape shape{4, 6, 2, 3};
  const auto home = even_cut(keys, grid);
  runtime::Communicator comm(MPI_COMM_WORLD);
  Domain d = make_domain(grid, shape, share(keys, home, me));
  const auto mark_of = [](const Key& k) { return std::int8_t(int(key_hash(k, 5) % 3) - 1); };
  const auto cost_of = [](const Key& k) { return 0.1234567890123 * double(key_hash(k, 7) % 97); };
  const auto special = [](Block& b) {
    const BlockShape& s = b.shape();
    b.var(1)[s.at(1, 1, 1)] = -0.0;
    b.var(2)[s.at(4, 6, 2)] = std::numeric_limits<double>::denorm_min();
    b.var(0)[s.at(0, 3, 1)] = std::bit_cast<double>(0x7ff8dead0000beefull);  // NaN, in a ghost
  };
  std::vector<std::int8_t> marks;
  std::vector<int> targets;
  for (std::size_t i = 0; i < d.blocks.size(); ++i) {
    special(d.blocks[i]);
    d.cost[i] = cost_of(d.leaves[i]);
    marks.push_back(mark_of(d.leaves[i]));
    targets.push_back((me + 1) % P);
  }
  runtime::migrate(d, targets, comm, &marks);

  Problems p;
  if (marks.size() != d.leaves.size()) p.add("marks do not match the leaves");
  for (std::size_t i = 0; p.none() && i < d.blocks.size(); ++i) {
    const Key& k = d.leaves[i];
    Block expected = initial_block(k, shape);
    special(expected);
    if (!std::ranges::equal(d.blocks[i].var(0), expected.var(0), [](double a, double b) {
          return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
        }))
      p.add(str(k) + " variable 0 differs bitwise");
    if (const auto diff = first_difference(d.blocks[i], expected, /*interior_only=*/true))
      p.add(str(k) + " " + *diff);
    if (std::bit_cast<std::uint64_t>(d.cost[i]) != std::bit_cast<std::uint64_t>(cost_of(k)))
      p.add(str(k) + " cost changed");
    if (marks[i] != mark_of(k)) p.add(str(k) + " mark changed");
  }
  EXPECT_TRUE(all_ranks(p.none(), p.text()));
}

// Moves every block of `d` to `target(key)` and checks what each rank then holds.
void migrate_and_check(Domain& d, const runtime::Communicator& comm,
                       const std::function<int(const Key&)>& target,
                       const std::vector<Key>& all_keys, const std::string& what) {
  std::vector<int> targets;
  std::int64_t leaving = 0;
  for (const Key& k : d.leaves.keys()) {
    targets.push_back(target(k));
    if (targets.back() != comm.rank()) ++leaving;
  }
  const std::int64_t sent = runtime::migrate(d, targets, comm);
  std::vector<Key> expected;
  for (const Key& k : all_keys)
    if (target(k) == comm.rank()) expected.push_back(k);
  EXPECT_TRUE(all_ranks(sent == leaving, what + ": migrate reported " + std::to_string(sent) +
                                             " blocks sent, expected " + std::to_string(leaving)))
      << what;
  const std::string problems = check_holdings(d, expected);
  EXPECT_TRUE(all_ranks(problems.empty(), what + ": " + problems)) << what;
  EXPECT_EQ(world_sum(std::int64_t(d.leaves.size())), std::int64_t(all_keys.size())) << what;
}

TEST(Migration, RoundTripThroughAnotherCutRestoresEveryBlock) {
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{4, 2, 1}};
  // Roots refined once, then some level-2 leaves, so keys of several levels travel.
  std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);
  keys = refine_where(keys, grid, [](const Key& k) { return key_hash(k, 3) % 4 == 0; });
  const BlockShape shape{4, 4, 4, 2};
  const auto space = space_of(sfc::Curve::kMorton, grid);

  const auto home = cut_whole(keys, space, std::vector<std::int64_t>(keys.size(), 1), P);
  const auto away = cut_whole(keys, space, random_weights(keys.size(), 9, 11), P);
  if (P > 1) {
    ASSERT_NE(home, away) << "the second cut must move blocks";
  }
  auto target_in = [&keys](const std::vector<int>& t) {
    return [&keys, &t](const Key& k) { return t[index_of(keys, k)]; };
  };

  runtime::Communicator comm(MPI_COMM_WORLD);
  Domain d = make_domain(grid, shape, share(keys, home, me));
  const Domain before = d;
  migrate_and_check(d, comm, target_in(away), keys, "to the weighted cut");
  migrate_and_check(d, comm, target_in(home), keys, "back home");

  // Bitwise the blocks from before the round trip (interior: ghosts are not sent).
  Problems p;
  if (!std::ranges::equal(d.leaves.keys(), before.leaves.keys())) p.add("keys changed");
  for (std::size_t i = 0; p.none() && i < d.blocks.size(); ++i) {
    if (const auto diff = first_difference(d.blocks[i], before.blocks[i], true))
      p.add(str(d.leaves[i]) + " " + *diff);
    if (d.cost[i] != before.cost[i]) p.add(str(d.leaves[i]) + " cost changed");
  }
  EXPECT_TRUE(all_ranks(p.none(), p.text()));
}

TEST(Migration, ScatteredTargetsArriveSorted) {
  // migrate() must merge arrivals into curve order whatever the targets: scatter the blocks by
  // a hash of their keys (ranges interleave), gather them back, pile them on the last rank
  // (all others empty) and send them home again.
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{2, 2, 2}};
  const std::vector<Key> keys = random_mesh(grid, 2, 40, 5);
  const BlockShape shape{2, 4, 6, 1};
  const auto home = even_cut(keys, grid);
  auto go_home = [&](const Key& k) { return home[index_of(keys, k)]; };

  runtime::Communicator comm(MPI_COMM_WORLD);
  Domain d = make_domain(grid, shape, share(keys, home, me));
  migrate_and_check(
      d, comm, [P](const Key& k) { return int(key_hash(k, 23) % std::uint64_t(P)); }, keys,
      "scattered");
  migrate_and_check(d, comm, go_home, keys, "gathered");
  migrate_and_check(
      d, comm, [P](const Key&) { return P - 1; }, keys, "all to the last rank");
  migrate_and_check(d, comm, go_home, keys, "back from the last rank");
}

// ---------------------------------------------------------------------------------------------
// 2. The refinement consensus across rank boundaries

// The first violations of the closure rules R1..R4 by `marks` on a whole mesh.
std::string closure_violation(const LeafSet& leaves, std::span<const std::int8_t> marks,
                              const RootGrid& grid) {
  Problems p;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const Key& k = leaves[i];
    for (const octree::Face f : octree::kFaces) {
      const octree::FaceLookup across = leaves.across(k, f, grid);
      const std::size_t j = across.index[0];
      if (across.relation == octree::Relation::kSame && marks[i] == octree::kRefine &&
          marks[j] < octree::kStay)
        p.add("R1: " + str(leaves[j]) + " may coarsen next to refining " + str(k));
      if (across.relation == octree::Relation::kCoarser) {
        const int need = marks[i] == octree::kRefine ? octree::kRefine : octree::kStay;
        if (marks[j] < need)
          p.add("R1-R3: coarser " + str(leaves[j]) + " too low next to " + str(k));
      }
    }
    if (k.level > 0 && marks[i] >= octree::kStay) {
      const auto [first, last] = leaves.range_within(octree::parent(k));
      for (std::size_t j = first; j < last; ++j)
        if (leaves[j].level == k.level && marks[j] < octree::kStay)
          p.add("R4: sibling " + str(leaves[j]) + " of " + str(k) + " may coarsen");
    }
  }
  return p.text();
}

struct ClosureOutcome {
  std::vector<std::int8_t> reference;  // whole mesh, one rank
  int rounds = 0;                      // of the distributed closure
};

// Closes `marks` (initial marks of the whole mesh `keys`) on the whole mesh with a LocalMailbox
// and, distributed by `targets`, through StaticRuntime's mailbox; checks that every rank's
// marks equal the reference's for its leaves.
ClosureOutcome check_distributed_closure(const RootGrid& grid, sfc::Curve curve,
                                         const std::vector<Key>& keys,
                                         const std::vector<std::int8_t>& marks,
                                         const std::vector<int>& targets, const std::string& what) {
  const int me = world_rank();
  ClosureOutcome out;
  const LeafSet whole(keys);
  out.reference = marks;
  octree::LocalMailbox local;
  octree::close_marks(whole, out.reference, grid, local);
  const std::string violation = closure_violation(whole, out.reference, grid);
  EXPECT_TRUE(violation.empty()) << what << ": reference closure: " << violation;

  // Tiny blocks: the closure looks at keys only.
  Domain d = make_domain(grid, BlockShape{2, 2, 2, 1}, share(keys, targets, me));
  runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve));
  rt.mesh_changed(d);
  std::vector<std::int8_t> mine, expected;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (targets[i] != me) continue;
    mine.push_back(marks[i]);
    expected.push_back(out.reference[i]);
  }
  out.rounds = octree::close_marks(d.leaves, mine, grid, rt.mailbox()).rounds;
  Problems p;
  for (std::size_t i = 0; i < mine.size(); ++i)
    if (mine[i] != expected[i])
      p.add(str(d.leaves[i]) + " closed to " + std::to_string(mine[i]) + ", reference " +
            std::to_string(expected[i]));
  EXPECT_TRUE(all_ranks(p.none(), what + ": " + p.text())) << what;
  return out;
}

TEST(Consensus, RefinementWaveCrossesRanks) {
  const int P = world_size();
  const RootGrid grid{{4, 2, 1}};
  // Meshes refined to level 4 around one corner, near the start of the Morton curve (the wave
  // runs towards later ranks) and near its end (towards earlier ranks).
  const std::array<Key, 2> corners{
      Key{{0, 0, 0}, octree::kMaxLevel},
      octree::last_descendant(octree::root_key(3, 1, 0)),
  };
  for (const sfc::Curve curve : kCurves) {
    for (const Key& corner : corners) {
      const std::string what = curve_name(curve) + " wave from " + str(corner);
      std::vector<Key> keys = octree::root_leaves(grid);
      for (int l = 0; l < 4; ++l)
        keys = refine_where(
            keys, grid, [&](const Key& k) { return k.level == l && octree::contains(k, corner); });
      const LeafSet whole(keys);

      // The finest leaf whose refinement forces the most coarser leaves to refine.
      std::vector<std::int8_t> marks, wave;
      std::size_t wave_size = 0;
      for (std::size_t i = 0; i < keys.size(); ++i) {
        if (keys[i].level != 4) continue;
        std::vector<std::int8_t> m(keys.size(), octree::kStay);
        m[i] = octree::kRefine;
        const auto start = m;
        octree::LocalMailbox local;
        octree::close_marks(whole, m, grid, local);
        const auto n = std::size_t(std::count(m.begin(), m.end(), octree::kRefine));
        if (n > wave_size) {
          wave_size = n;
          marks = start;
          wave = m;
        }
      }
      std::set<int> levels;
      for (std::size_t i = 0; i < keys.size(); ++i)
        if (wave[i] == octree::kRefine) levels.insert(keys[i].level);
      ASSERT_GE(levels.size(), 4u) << what << ": the wave must run from level 4 down to level 1";

      // Heavy weights on the refined leaves make the cut fall between them, so the wave
      // crosses rank boundaries at every opportunity.
      std::vector<std::int64_t> w(keys.size(), 1);
      for (std::size_t i = 0; i < keys.size(); ++i)
        if (wave[i] == octree::kRefine) w[i] = 1000;
      const auto targets = cut_whole(keys, space_of(curve, grid), w, P);
      std::set<int> ranks_in_wave;
      for (std::size_t i = 0; i < keys.size(); ++i)
        if (wave[i] == octree::kRefine) ranks_in_wave.insert(targets[i]);
      EXPECT_EQ(int(ranks_in_wave.size()), std::min(P, int(wave_size))) << what;

      const ClosureOutcome out = check_distributed_closure(grid, curve, keys, marks, targets, what);
      EXPECT_EQ(out.reference, wave) << what;
      // Each crossing costs a round: the wave cannot settle in one.
      if (P > 1) {
        EXPECT_GE(out.rounds, 2) << what;
      }
    }
  }
}

TEST(Consensus, RandomMeshesMatchOneRankClosure) {
  const int P = world_size();
  for (const sfc::Curve curve : kCurves) {
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      const RootGrid grid{{int(1 + seed % 3), 2, int(1 + seed % 2)}};
      const std::vector<Key> keys = random_mesh(grid, 3, 45, seed);
      // Mostly coarsen, so R2-R4 matter as much as R1; initial_marks on the whole mesh lets
      // every complete family coarsen wherever its leaves lie.
      const auto marks = octree::initial_marks(LeafSet(keys), 3, [seed](const Key& k) {
        const auto h = key_hash(k, 100 + seed) % 20;
        return h < 2 ? 1 : h < 5 ? 0 : -1;
      });
      const auto targets =
          cut_whole(keys, space_of(curve, grid), random_weights(keys.size(), 20, 200 + seed), P);
      check_distributed_closure(grid, curve, keys, marks, targets,
                                curve_name(curve) + " seed " + std::to_string(seed));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 3. Families split over ranks

// Checks the ranks' holdings after a gather: the whole mesh in curve order, every complete
// family on one rank where initial_marks lets it coarsen, and the data with its keys.
void check_gathered(const Domain& d, const std::vector<Key>& keys, const sfc::CurveSpace& space,
                    const std::string& what) {
  const auto per_rank = allgather_keys(d.leaves.keys());
  EXPECT_EQ(partition_problems(per_rank, keys, space), "") << what;
  const auto families = complete_families(keys);
  for (const Key& first : families) {
    int holders = 0;
    for (const auto& r : per_rank)
      if (std::ranges::any_of(r, [&](const Key& k) {
            return k.level == first.level && octree::parent(k) == octree::parent(first);
          }))
        ++holders;
    EXPECT_EQ(holders, 1) << what << ": the family of " << str(first) << " is still split";
  }
  const auto marks =
      octree::initial_marks(d.leaves, octree::kMaxLevel, [](const Key&) { return -1; });
  EXPECT_EQ(world_sum(std::count(marks.begin(), marks.end(), octree::kCoarsen)),
            std::int64_t(8 * families.size()))
      << what << ": leaves marked coarsen";
  const std::string data = check_holdings(d, keys_of(d));
  EXPECT_TRUE(all_ranks(data.empty(), what + ": " + data)) << what;
}

// Distributes `keys` by `bounds` (along the curve), gathers families and checks the result; a
// second gather finds nothing left to move.
void check_gather(const RootGrid& grid, sfc::Curve curve, const std::vector<Key>& keys,
                  std::span<const std::size_t> bounds, const std::string& what) {
  const auto space = space_of(curve, grid);
  Domain d = make_domain(grid, BlockShape{2, 2, 2, 1},
                         share(keys, targets_from_bounds(keys, space, bounds), world_rank()));
  runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve));
  rt.mesh_changed(d);
  rt.gather_families(d);
  check_gathered(d, keys, space, what + " (first gather)");

  const std::vector<Key> before = keys_of(d);
  rt.gather_families(d);
  check_gathered(d, keys, space, what + " (second gather)");
  Problems p;
  for (const Key& k : before)
    if (!d.leaves.find(k)) p.add(str(k) + " moved again");
  EXPECT_TRUE(all_ranks(p.none(), what + ": " + p.text())) << what;
}

// Every cut of n leaves into P contiguous ranges when there are at most `max_count`, else a
// deterministic sample of them.
std::vector<std::vector<std::size_t>> distributions(std::size_t n, int P, std::size_t max_count,
                                                    std::uint64_t seed) {
  std::vector<std::vector<std::size_t>> out;
  std::vector<std::size_t> b(std::size_t(P) + 1, 0);
  b.back() = n;
  // There are C(n + P - 1, P - 1) of them.
  double count = 1;
  for (int j = 1; j < P; ++j) count = count * double(n + std::size_t(j)) / j;
  if (count > double(max_count)) {
    Rng rng(seed);
    for (std::size_t i = 0; i < max_count; ++i) {
      for (std::size_t r = 1; r + 1 < b.size(); ++r)
        b[r] = std::size_t(rng.below(std::int64_t(n) + 1));
      std::sort(b.begin() + 1, b.end() - 1);
      out.push_back(b);
    }
    return out;
  }
  std::function<void(std::size_t, std::size_t)> rec = [&](std::size_t r, std::size_t lo) {
    if (r + 1 == b.size()) {
      out.push_back(b);
      return;
    }
    for (std::size_t v = lo; v <= n; ++v) {
      b[r] = v;
      rec(r + 1, v);
    }
  };
  rec(1, 0);
  return out;
}

std::string bounds_text(std::span<const std::size_t> b) {
  std::string s = "bounds";
  for (auto x : b) {
    s += ' ';
    s += std::to_string(x);
  }
  return s;
}

TEST(GatherFamilies, CompleteFamilySplitOverRanksEndsWhole) {
  const int P = world_size();
  const RootGrid grid{{2, 1, 1}};
  // The 8 children of root 0, then root 1: 9 leaves.
  const std::vector<Key> keys =
      refine_where(octree::root_leaves(grid), grid, [](const Key& k) { return k.index(0) == 0; });
  ASSERT_EQ(keys.size(), 9u);
  for (const sfc::Curve curve : kCurves) {
    // Every cut of the 9 leaves into P ranges: the family over up to 4 ranks, with empty ranks
    // between, before and after.
    for (const auto& b : distributions(keys.size(), P, 120, 1))
      check_gather(grid, curve, keys, b, curve_name(curve) + " " + bounds_text(b));

    // Once gathered, the family coarsens through the distributed closure and plan.
    if (P >= 2) {
      std::vector<std::size_t> b(std::size_t(P) + 1, keys.size());
      b[0] = 0;
      b[1] = 3;  // 3 children | 5 children and root 1 | empty ranks
      const auto space = space_of(curve, grid);
      Domain d = make_domain(grid, BlockShape{2, 2, 2, 1},
                             share(keys, targets_from_bounds(keys, space, b), world_rank()));
      runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve));
      rt.mesh_changed(d);
      EXPECT_EQ(world_sum(rt.gather_families(d)), 5) << curve_name(curve);
      auto marks = octree::initial_marks(d.leaves, 3, [](const Key&) { return -1; });
      octree::close_marks(d.leaves, marks, grid, rt.mailbox());
      EXPECT_EQ(world_sum(octree::plan_adapt(d.leaves, marks).merges), 1) << curve_name(curve);
    }
  }
}

TEST(GatherFamilies, RefinedSiblingKeepsCurveOrder) {
  const int P = world_size();
  const RootGrid grid{{2, 1, 1}};
  // Root 0's family is incomplete (child 3 refined, its own family complete); root 1 is
  // refined into a complete family: c0 c1 c2 g0..g7 c4..c7 d0..d7 in Morton order.
  std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);
  const Key c3 = octree::child(octree::root_key(0, 0, 0), 3);
  keys = refine_where(keys, grid, [&](const Key& k) { return k == c3; });
  ASSERT_EQ(keys.size(), 23u);
  for (const sfc::Curve curve : kCurves)
    for (const auto& b : distributions(keys.size(), P, 80, 2))
      check_gather(grid, curve, keys, b, curve_name(curve) + " " + bounds_text(b));
}

TEST(GatherFamilies, RandomMeshesAndCuts) {
  const int P = world_size();
  for (const sfc::Curve curve : kCurves) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const RootGrid grid{{2, 2, 1}};
      const std::vector<Key> keys = random_mesh(grid, 3, 50, 40 + seed);
      for (const auto& b : distributions(keys.size(), P, 10, seed))
        check_gather(grid, curve, keys, b,
                     curve_name(curve) + " seed " + std::to_string(seed) + " " + bounds_text(b));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 4. Empty ranks

// Compares every local block with the reference's, ghosts included (both sides fill the same
// ghosts, and blocks that arrived by migration have had theirs refilled since).
void compare_blocks(const Domain& d, const Domain& whole, const std::string& what,
                    bool interior_only = false) {
  const std::string diff = compare_with_reference(d, whole, interior_only);
  EXPECT_TRUE(all_ranks(diff.empty(), what + ": " + diff)) << what;
}

// One stage on the distributed and the reference domain; compares the stage's checksums and,
// with `blocks`, every block.
void stage_and_compare(runtime::StaticRuntime& rt, Domain& d, runtime::StaticRuntime& ref,
                       Domain& whole, const runtime::StageWork& work, const std::string& what,
                       bool blocks = true) {
  const auto got = rt.advance(d, work);
  std::vector<double> want;
  {
    const ThreadScope one(1);  // the reference always runs one thread
    want = ref.advance(whole, work);
  }
  EXPECT_TRUE(same_bits(got, want)) << what << ": stage checksum " << got[0] << " vs " << want[0];
  if (blocks) compare_blocks(d, whole, what);
}

TEST(EmptyRanks, TwoRootsAdvanceRefineAndRebalance) {
  const int P = world_size();
  const RootGrid grid{{2, 1, 1}};
  const BlockShape shape{4, 4, 4, 2};
  for (const sfc::Curve curve : kCurves) {
    const std::string name = curve_name(curve);
    runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve)), ref(MPI_COMM_SELF, options(curve));
    Domain d = make_domain(grid, shape, rt.initial_roots(grid));
    Domain whole = make_domain(grid, shape, ref.initial_roots(grid));
    ASSERT_EQ(whole.leaves.size(), 2u);
    EXPECT_EQ(
        partition_problems(allgather_keys(d.leaves.keys()), keys_of(whole), space_of(curve, grid)),
        "")
        << name;
    EXPECT_EQ(world_sum(d.leaves.empty() ? 1 : 0), std::max(0, P - 2)) << name;
    rt.mesh_changed(d);
    ref.mesh_changed(whole);
    EXPECT_TRUE(same_bits(checksums(d, MPI_COMM_WORLD), checksums(whole, MPI_COMM_SELF))) << name;

    runtime::StageWork work;
    work.stencil = 7;
    work.vars = {0, 2};
    work.num_vars = 2;
    work.checksum = true;
    for (int s = 0; s < 2; ++s)
      stage_and_compare(rt, d, ref, whole, work, name + " roots stage " + std::to_string(s));
    EXPECT_EQ(world_sum(rt.gather_families(d)), 0) << name;

    // Refine everything (the closure runs through the mailbox with empty ranks), split the data.
    auto refine = [](runtime::StaticRuntime& r, Domain& dom) {
      auto marks = octree::initial_marks(dom.leaves, 1, [](const Key&) { return 1; });
      octree::close_marks(dom.leaves, marks, dom.grid, r.mailbox());
      apply_plan(dom, octree::plan_adapt(dom.leaves, marks));
      r.mesh_changed(dom);
    };
    refine(rt, d);
    refine(ref, whole);
    EXPECT_EQ(world_sum(std::int64_t(d.leaves.size())), 16) << name;
    stage_and_compare(rt, d, ref, whole, work, name + " refined stage");

    // Rebalance by block count: families stay together, so with P > 2 ranks stay empty.
    rt.rebalance(d, std::vector<std::int64_t>(d.leaves.size(), 1));
    const auto space = space_of(curve, grid);
    EXPECT_EQ(partition_problems(allgather_keys(d.leaves.keys()), keys_of(whole), space), "")
        << name;
    EXPECT_TRUE(all_ranks(d.leaves.size() % 8 == 0, "a family was split by rebalance")) << name;
    stage_and_compare(rt, d, ref, whole, work, name + " rebalanced stage");

    // All the weight on the last leaf along the curve: every leaf starts at weight 0, so all
    // go to rank 0 and every other rank is empty.
    const auto order = along_curve(keys_of(whole), space);
    const Key last = whole.leaves[order.back()];
    std::vector<std::int64_t> w(d.leaves.size(), 0);
    for (std::size_t i = 0; i < w.size(); ++i)
      if (d.leaves[i] == last) w[i] = 1;
    rt.rebalance(d, w);
    EXPECT_TRUE(all_ranks(d.leaves.size() == (world_rank() == 0 ? 16u : 0u), "not all on rank 0"))
        << name;
    stage_and_compare(rt, d, ref, whole, work, name + " after a skewed rebalance");
    EXPECT_TRUE(same_bits(checksums(d, MPI_COMM_WORLD), checksums(whole, MPI_COMM_SELF))) << name;
  }
}

TEST(Rebalance, MatchesTheGlobalCutWithFamiliesKeptTogether) {
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{3, 2, 1}};
  for (const sfc::Curve curve : kCurves) {
    const auto space = space_of(curve, grid);
    runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve));
    // The initial roots: contiguous along the curve, in equal shares.
    const auto roots = rt.initial_roots(grid);
    EXPECT_EQ(partition_problems(allgather_keys(roots), octree::root_leaves(grid), space), "")
        << curve_name(curve);
    EXPECT_TRUE(all_ranks(std::int64_t(roots.size()) * P >= grid.count() - P &&
                              std::int64_t(roots.size()) * P <= grid.count() + P,
                          "unequal share of roots"))
        << curve_name(curve);

    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
      const std::string what = curve_name(curve) + " seed " + std::to_string(seed);
      const std::vector<Key> keys = random_mesh(grid, 2, 50, 500 + seed);
      const auto before = cut_whole(keys, space, random_weights(keys.size(), 3, 600 + seed), P);
      Domain d = make_domain(grid, BlockShape{2, 2, 2, 1}, share(keys, before, me));
      rt.mesh_changed(d);

      // The oracle: the whole curve cut by the weights, then every complete family that was on
      // one rank sent where its first leaf along the curve goes.
      const auto weights = random_weights(keys.size(), 10, 700 + seed);
      auto expected = cut_whole(keys, space, weights, P);
      const auto order = along_curve(keys, space);
      std::vector<std::size_t> position(keys.size());
      for (std::size_t p = 0; p < order.size(); ++p) position[order[p]] = p;
      for (const Key& first : complete_families(keys)) {
        std::vector<std::size_t> members;
        for (int o = 0; o < 8; ++o) members.push_back(index_of(keys, octree::sibling(first, o)));
        if (!std::ranges::all_of(members,
                                 [&](std::size_t i) { return before[i] == before[members[0]]; }))
          continue;
        const std::size_t lead = *std::ranges::min_element(
            members, [&](std::size_t a, std::size_t b) { return position[a] < position[b]; });
        for (const std::size_t i : members) expected[i] = expected[lead];
      }

      std::vector<std::int64_t> local_weights;
      std::int64_t leaving = 0;
      for (const Key& k : d.leaves.keys()) {
        local_weights.push_back(weights[index_of(keys, k)]);
        if (expected[index_of(keys, k)] != me) ++leaving;
      }
      const std::int64_t sent = rt.rebalance(d, local_weights);
      EXPECT_TRUE(all_ranks(sent == leaving, what + ": sent " + std::to_string(sent) +
                                                 " blocks, expected " + std::to_string(leaving)))
          << what;
      const std::string holdings = check_holdings(d, share(keys, expected, me));
      EXPECT_TRUE(all_ranks(holdings.empty(), what + ": " + holdings)) << what;
      EXPECT_EQ(partition_problems(allgather_keys(d.leaves.keys()), keys, space), "") << what;
    }
  }
}

TEST(Rebalance, BeforeAdaptLeavesNothingForTheBalanceAfter) {
  // Leaves marked at random (splits, merges of whole families, and some that stay), balanced for
  // what they become, then adapted: the adapted mesh is the one the marks make, each rank's
  // leaves carry their own marks, and the balance after the adaptation moves nothing.
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{3, 2, 1}};
  const BlockShape shape{2, 2, 2, 1};
  for (const sfc::Curve curve : kCurves) {
    const auto space = space_of(curve, grid);
    runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve));
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      const std::string what = curve_name(curve) + " seed " + std::to_string(seed);
      const std::vector<Key> keys = random_mesh(grid, 2, 50, 800 + seed);
      const auto before = cut_whole(keys, space, random_weights(keys.size(), 4, 900 + seed), P);
      // A family merges when it is whole on one rank and its parent is drawn.
      std::set<Key, octree::MortonLess> merging;
      for (const Key& first : complete_families(keys)) {
        bool whole = key_hash(octree::parent(first), 37 + seed) % 2 == 0;
        for (int o = 0; o < 8; ++o)
          whole = whole && before[index_of(keys, octree::sibling(first, o))] ==
                               before[index_of(keys, first)];
        if (whole)
          for (int o = 0; o < 8; ++o) merging.insert(octree::sibling(first, o));
      }
      const auto mark_of = [&](const Key& k) -> std::int8_t {
        if (merging.count(k)) return octree::kCoarsen;
        return key_hash(k, 31 + seed) % 4 == 0 ? octree::kRefine : octree::kStay;
      };
      Domain d = make_domain(grid, shape, share(keys, before, me));
      rt.mesh_changed(d);
      std::vector<std::int8_t> marks;
      for (const Key& k : d.leaves.keys()) marks.push_back(mark_of(k));
      const octree::AdaptPlan plan = octree::plan_adapt(d.leaves, marks);
      std::vector<Key> adapted_keys;
      for (const auto& part : allgather_keys(plan.keys))
        adapted_keys.insert(adapted_keys.end(), part.begin(), part.end());
      std::sort(adapted_keys.begin(), adapted_keys.end(), octree::MortonLess{});

      rt.rebalance_for_adapt(d, plan, std::vector<std::int64_t>(plan.keys.size(), 1), marks);
      Problems p;
      if (marks.size() != d.leaves.size()) p.add("marks do not match the leaves");
      for (std::size_t i = 0; p.none() && i < d.leaves.size(); ++i)
        if (marks[i] != mark_of(d.leaves[i]))
          p.add(str(d.leaves[i]) + " arrived with another mark");
      EXPECT_TRUE(all_ranks(p.none(), what + ": " + p.text())) << what;

      const octree::AdaptPlan again = octree::plan_adapt(d.leaves, marks);
      std::vector<Key> now;
      for (const auto& part : allgather_keys(again.keys))
        now.insert(now.end(), part.begin(), part.end());
      std::sort(now.begin(), now.end(), octree::MortonLess{});
      EXPECT_TRUE(now == adapted_keys) << what << ": the balance changed the adapted mesh";
      EXPECT_EQ(partition_problems(allgather_keys(again.keys), adapted_keys, space), "") << what;

      Domain after = make_domain(grid, shape, again.keys);
      rt.mesh_changed(after);
      const std::int64_t sent =
          rt.rebalance(after, std::vector<std::int64_t>(after.leaves.size(), 1));
      EXPECT_TRUE(all_ranks(sent == 0, what + ": the balance after the adaptation sent " +
                                           std::to_string(sent) + " blocks"))
          << what;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 5. Halo exchange against a one-rank reference

// Remote ghost links of each relation (same, coarse->fine, fine->coarse), summed over ranks.
std::array<std::int64_t, 3> remote_links(const Domain& d, sfc::Curve curve) {
  runtime::Communicator comm(MPI_COMM_WORLD);
  const runtime::Neighbourhood nb = runtime::build_neighbourhood(d, space_of(curve, d.grid), comm);
  const runtime::GhostPlan plan = runtime::build_ghost_plan(d, nb);
  std::array<std::int64_t, 3> n{0, 0, 0};
  for (const auto& peer : plan.peers)
    for (const auto& axis : peer.recv)
      for (const auto& l : axis) ++n[std::size_t(l.link.relation)];
  for (auto& x : n) x = world_sum(x);
  return n;
}

TEST(Halo, AdaptiveMeshMatchesOneRank) {
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{3, 2, 1}};
  const std::vector<Key> keys = random_mesh(grid, 2, 45, 77);
  // Unequal extents, so a face exchanged along the wrong axis cannot fit.
  const BlockShape shape{4, 2, 6, 4};

  // The mesh has every kind of face.
  {
    const LeafSet whole(keys);
    std::array<int, 5> relations{};
    for (const Key& k : keys)
      for (const octree::Face f : octree::kFaces)
        ++relations[std::size_t(whole.across(k, f, grid).relation)];
    for (const auto r : {octree::Relation::kBoundary, octree::Relation::kSame,
                         octree::Relation::kCoarser, octree::Relation::kFiner})
      ASSERT_GT(relations[std::size_t(r)], 0) << "relation " << int(r) << " missing";
  }

  const stencil::VariableCoeffs coeffs = stencil::make_variable_coeffs(shape.num_vars, 9);
  for (const sfc::Curve curve : kCurves) {
    const auto targets =
        cut_whole(keys, space_of(curve, grid), random_weights(keys.size(), 6, 78), P);
    // Non-blocking and blocking sends, and (Morton only, to keep the run short) two OpenMP
    // threads on every rank against the one-thread reference.
    struct Variant {
      bool blocking;
      int threads;
    };
    for (const Variant v : {Variant{false, 0}, Variant{true, 0}, Variant{false, 2}}) {
      if (v.threads > 0 && curve != sfc::Curve::kMorton) continue;
      const bool blocking = v.blocking;
      const std::string how = curve_name(curve) + (blocking ? " blocking" : " non-blocking") +
                              (v.threads > 0 ? " 2 threads" : "");
      // The distributed runtime runs with the variant's threads throughout (its plans are
      // built for the thread count of mesh_changed); the reference with one.
      const ThreadScope threads(v.threads);
      Domain d = make_domain(grid, shape, share(keys, targets, me));
      Domain whole = make_domain(grid, shape, keys);
      runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve, blocking));
      runtime::StaticRuntime ref(MPI_COMM_SELF, options(curve));
      rt.mesh_changed(d);
      {
        const ThreadScope one(1);
        ref.mesh_changed(whole);
      }
      // With P > 1 every kind of face crosses ranks, so every kind of message is tested.
      if (P > 1) {
        const auto links = remote_links(d, curve);
        for (std::size_t r = 0; r < 3; ++r)
          EXPECT_GT(links[r], 0) << how << ": no remote link of relation " << r;
      }

      runtime::StageWork work;
      work.num_vars = shape.num_vars;
      work.checksum = true;
      work.coeffs = &coeffs;
      std::int64_t stage = 0;
      auto run = [&](int stencil_id, stencil::VarRange vars, std::int64_t calc_stage, bool blocks) {
        work.stencil = stencil_id;
        work.vars = vars;
        work.calc_stage = calc_stage;
        stage_and_compare(rt, d, ref, whole, work,
                          how + " stage " + std::to_string(stage++) + " stencil " +
                              std::to_string(stencil_id) + " vars " + std::to_string(vars.v0) +
                              ".." + std::to_string(vars.v1),
                          blocks);
      };
      // Stencil 7 on all variables, then by comm groups.
      run(7, {0, 4}, 0, true);
      if (!blocking) {
        run(7, {0, 1}, 0, false);
        run(7, {1, 4}, 0, true);
        // Blocks move in the middle of the run: the ghosts must follow the new partition.
        rt.rebalance(d, random_weights(d.leaves.size(), 5, 79 + std::uint64_t(me)));
        run(7, {0, 4}, 0, true);
      }
      // The variable kernels exchange per axis with edges, here across level changes: the line
      // kernel along x and the 27-point kernel (which reads the edges).
      run(0, {0, 4}, 1, false);
      run(0, {0, 4}, 5, true);
    }
  }
}

TEST(Halo, Stencil27OnUniformMeshMatchesOneRank) {
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{2, 2, 2}};
  const std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);  // 64 leaves
  const BlockShape shape{4, 6, 2, 2};
  for (const sfc::Curve curve : kCurves) {
    const auto targets =
        cut_whole(keys, space_of(curve, grid), random_weights(keys.size(), 4, 81), P);
    for (const bool blocking : {false, true}) {
      const std::string how = curve_name(curve) + (blocking ? " blocking" : " non-blocking");
      Domain d = make_domain(grid, shape, share(keys, targets, me));
      Domain whole = make_domain(grid, shape, keys);
      runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve, blocking));
      runtime::StaticRuntime ref(MPI_COMM_SELF, options(curve));
      rt.mesh_changed(d);
      ref.mesh_changed(whole);
      runtime::StageWork work;
      work.stencil = 27;
      work.num_vars = 2;
      work.checksum = true;
      for (int s = 0; s < 3; ++s) {
        work.vars = s == 1 ? stencil::VarRange{1, 2} : stencil::VarRange{0, 2};
        stage_and_compare(rt, d, ref, whole, work, how + " stencil 27 stage " + std::to_string(s),
                          /*blocks=*/s == 2);
      }
    }
  }
}

// The thread count may change between two mesh changes (omp_set_num_threads is the host's to
// call): a stage must still give the reference's bits.
TEST(Threads, MoreThreadsAfterMeshChangedGiveTheSameBits) {
  const int me = world_rank();
  const RootGrid grid{{2, 1, 1}};
  const std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);
  const BlockShape shape{4, 4, 4, 1};
  const auto targets = even_cut(keys, grid);
  Domain d = make_domain(grid, shape, share(keys, targets, me));
  Domain whole = make_domain(grid, shape, keys);
  runtime::StaticRuntime rt(MPI_COMM_WORLD), ref(MPI_COMM_SELF);
  {
    const ThreadScope one(1);
    rt.mesh_changed(d);
    ref.mesh_changed(whole);
  }
  runtime::StageWork work;
  work.num_vars = 1;
  work.vars = {0, 1};
  work.checksum = true;
  const ThreadScope two(2);
  for (const int stencil_id : {7, 27})
    stage_and_compare(rt, d, ref, whole, (work.stencil = stencil_id, work),
                      "stencil " + std::to_string(stencil_id) + " on 2 threads");
}

// ---------------------------------------------------------------------------------------------
// 6. Conformance: every mapper of the stage graph, through the seam, against the one-rank static
//    reference. A mapper that loses a dependency edge, a face or a message shows here.

// One way of running the graph: a runtime, its worker threads, and (dynamic) a seed that runs
// ready tasks in a random order, orders a work-stealing scheduler rarely produces.
template <class Runtime, int Threads, std::uint64_t Seed = 0>
struct Mapper {
  static constexpr int kThreads = Threads;
  static constexpr std::uint64_t kSeed = Seed;
  using Type = Runtime;
};
using StaticMapper = Mapper<runtime::StaticRuntime, 1>;
using StaticTwoThreads = Mapper<runtime::StaticRuntime, 2>;
using DynamicMapper = Mapper<runtime::DynamicRuntime, 1>;
using DynamicTwoThreads = Mapper<runtime::DynamicRuntime, 2>;
using DynamicRandomOrder = Mapper<runtime::DynamicRuntime, 2, 23>;
using DynamicOneWorkerRandomOrder = Mapper<runtime::DynamicRuntime, 1, 29>;  // deferred faces

template <class Mapper>
class Conformance : public ::testing::Test {
 protected:
  static std::unique_ptr<runtime::Runtime> make(sfc::Curve curve) {
    runtime::RuntimeOptions o = options(curve);
    o.threads = Mapper::kThreads;
    o.order_seed = Mapper::kSeed;
    return std::make_unique<typename Mapper::Type>(MPI_COMM_WORLD, o);
  }
};
using Mappers = ::testing::Types<StaticMapper, StaticTwoThreads, DynamicMapper, DynamicTwoThreads,
                                 DynamicRandomOrder, DynamicOneWorkerRandomOrder>;
TYPED_TEST_SUITE(Conformance, Mappers);

// Runs `stages` as one batch on the distributed domain and one stage at a time on the
// reference; the checksums of every checksum stage and every block (ghosts included) must agree.
void batch_and_compare(runtime::Runtime& rt, Domain& d, runtime::Runtime& ref, Domain& whole,
                       std::span<const runtime::StageWork> stages, const std::string& what,
                       bool interior_only = false) {
  const auto got = rt.run_stages(d, stages);
  ASSERT_EQ(got.size(), stages.size());
  for (std::size_t s = 0; s < stages.size(); ++s) {
    std::vector<double> want;
    {
      const ThreadScope one(1);
      want = ref.advance(whole, stages[s]);
    }
    EXPECT_EQ(got[s].size(), stages[s].checksum ? std::size_t(stages[s].vars.count()) : 0u);
    EXPECT_TRUE(same_bits(got[s], want)) << what << ": checksums of stage " << s;
  }
  compare_blocks(d, whole, what, interior_only);
}

std::vector<runtime::StageWork> stage_batch(int stencil_id, int num_vars, int group, int stages,
                                            const stencil::VariableCoeffs* coeffs) {
  std::vector<runtime::StageWork> out;
  for (int s = 0; s < stages; ++s) {
    runtime::StageWork& w = out.emplace_back();
    w.stencil = stencil_id;
    w.vars = {0, num_vars};
    w.num_vars = num_vars;
    w.group = group;
    w.calc_stage = s;
    w.checksum = s % 2 == 0;
    w.coeffs = coeffs;
  }
  return out;
}

TYPED_TEST(Conformance, BatchesOfStagesOnAnAdaptiveMeshMatchOneRank) {
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{3, 2, 1}};
  const std::vector<Key> keys = random_mesh(grid, 2, 45, 177);
  const BlockShape shape{4, 2, 6, 4};
  const stencil::VariableCoeffs coeffs = stencil::make_variable_coeffs(shape.num_vars, 5);
  for (const sfc::Curve curve : kCurves) {
    const auto targets =
        cut_whole(keys, space_of(curve, grid), random_weights(keys.size(), 6, 178), P);
    Domain d = make_domain(grid, shape, share(keys, targets, me));
    Domain whole = make_domain(grid, shape, keys);
    const ThreadScope threads(TypeParam::kThreads);
    auto rt = TestFixture::make(curve);
    runtime::StaticRuntime ref(MPI_COMM_SELF, options(curve));
    rt->mesh_changed(d);
    {
      const ThreadScope one(1);
      ref.mesh_changed(whole);
    }
    const std::string how = curve_name(curve) + " " + rt->name();
    // 7-point in comm groups of 1 and 3 variables (the dynamic mapper's independent graphs),
    // the 27-point and the variable-work kernels (all stages of the variable kernels' cycle).
    batch_and_compare(*rt, d, ref, whole, stage_batch(7, 4, 1, 5, &coeffs), how + " 7-point");
    batch_and_compare(*rt, d, ref, whole, stage_batch(7, 4, 3, 4, &coeffs), how + " 7 by 3");
    batch_and_compare(*rt, d, ref, whole, stage_batch(27, 4, 2, 3, &coeffs), how + " 27-point");
    batch_and_compare(*rt, d, ref, whole, stage_batch(0, 4, 0, 7, &coeffs), how + " variable");
    // Blocks move between two batches: the graph must follow the new partition.
    rt->rebalance(d, random_weights(d.leaves.size(), 5, 179 + std::uint64_t(me)));
    batch_and_compare(*rt, d, ref, whole, stage_batch(7, 4, 2, 3, &coeffs), how + " moved");
    // Every block has a cost record of its measured time.
    const bool costed = std::ranges::all_of(d.cost, [](double c) { return c > 0; });
    if (std::string(rt->name()) == "dynamic") {
      EXPECT_TRUE(all_ranks(costed, "a block without a measured cost")) << how;
    }
  }
}

TYPED_TEST(Conformance, EmptyRanksAndBlocksThatNeedNoMessage) {
  const int me = world_rank();
  const RootGrid grid{{2, 1, 1}};
  const BlockShape shape{4, 4, 4, 2};
  const std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);
  // Everything on rank 0 and the other ranks empty, then an even share.
  for (const bool skewed : {true, false}) {
    std::vector<int> targets(keys.size(), 0);
    if (!skewed) targets = even_cut(keys, grid);
    Domain d = make_domain(grid, shape, share(keys, targets, me));
    Domain whole = make_domain(grid, shape, keys);
    const ThreadScope threads(TypeParam::kThreads);
    auto rt = TestFixture::make(sfc::Curve::kMorton);
    runtime::StaticRuntime ref(MPI_COMM_SELF, options(sfc::Curve::kMorton));
    rt->mesh_changed(d);
    {
      const ThreadScope one(1);
      ref.mesh_changed(whole);
    }
    batch_and_compare(*rt, d, ref, whole, stage_batch(7, 2, 1, 6, nullptr),
                      std::string(skewed ? "skewed " : "even ") + rt->name());
  }
}

// The Kokkos back end really runs when asked for, and gives the native bits.
TYPED_TEST(Conformance, KernelsReportTheBackEndThatRan) {
  const int me = world_rank();
  const RootGrid grid{{2, 2, 1}};
  const std::vector<Key> keys = random_mesh(grid, 1, 50, 191);
  const BlockShape shape{4, 4, 4, 2};
  const auto targets = even_cut(keys, grid);
  Domain d = make_domain(grid, shape, share(keys, targets, me));
  const ThreadScope threads(TypeParam::kThreads);
  auto rt = TestFixture::make(sfc::Curve::kMorton);
  rt->mesh_changed(d);
  rt->run_stages(d, stage_batch(7, 2, 0, 2, nullptr));
  const runtime::KernelCalls calls = rt->kernels().calls();
  EXPECT_EQ(world_sum(calls.native), world_sum(std::int64_t(d.blocks.size())) * 2 * 2);
  EXPECT_EQ(calls.kokkos, 0);
  EXPECT_EQ(rt->kernels().backend_name(), "native");
}

// Both mappers sweep 8^3 blocks stored compact where the AVX-512 kernels run on one thread
// (stencil/compact_stencil.hpp): same-level faces from the compact copies, level changes into
// dense ghost layers, messages packed from the copies. Bitwise the padded AVX2 kernels' results
// on one rank, with comm groups of one and three variables and passes of one variable (the
// interiors: the compact sweep writes no ghost into the padded blocks). The dynamic mapper runs
// a batch per variable group: seven of one variable, or three, three and one; and its tasks
// also in a seeded random order.
template <class Mapper>
void compact_sweeps_match_the_padded_kernels() {
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{2, 2, 1}};
  const std::vector<Key> keys = random_mesh(grid, 2, 40, 203);
  constexpr int kVars = 7;
  const BlockShape shape{8, 8, 8, kVars};
  struct Case {
    int sweep_vars, chunk_vars;
    std::uint64_t order_seed;
  };
  for (const auto& [sweep_vars, chunk_vars, order_seed] :
       {Case{4, 0, 0}, Case{1, 3, 0}, Case{4, 0, 37}}) {
    const auto targets = cut_whole(keys, space_of(sfc::Curve::kMorton, grid),
                                   random_weights(keys.size(), 6, 204), P);
    Domain d = make_domain(grid, shape, share(keys, targets, me));
    Domain whole = make_domain(grid, shape, keys);
    const ThreadScope one(1);
    runtime::RuntimeOptions o = options(sfc::Curve::kMorton);
    o.sweep_vars = sweep_vars;
    o.chunk_vars = chunk_vars;  // 3: three chunks (static) or groups of at most three (dynamic)
    o.order_seed = order_seed;  // dynamic
    o.isa = stencil::Isa::kAvx512;
    Mapper rt(MPI_COMM_WORLD, o);
    o.isa = stencil::Isa::kAvx2;
    runtime::StaticRuntime ref(MPI_COMM_SELF, o);
    rt.mesh_changed(d);
    ref.mesh_changed(whole);
    const std::string how = rt.name() + " sweep_vars " + std::to_string(sweep_vars) +
                            " chunk_vars " + std::to_string(chunk_vars) + " order_seed " +
                            std::to_string(order_seed);
    batch_and_compare(rt, d, ref, whole, stage_batch(7, kVars, 1, 5, nullptr), how + " groups of 1",
                      true);
    batch_and_compare(rt, d, ref, whole, stage_batch(7, kVars, 3, 4, nullptr), how + " groups of 3",
                      true);
    // Every 7-point sweep of the batches ran compact; none of the reference's did.
    const std::int64_t block_vars = world_sum(std::int64_t(d.blocks.size())) * kVars;
    EXPECT_EQ(world_sum(rt.kernels().calls().compact), block_vars * 9) << how;
    EXPECT_EQ(rt.kernels().calls().native, rt.kernels().calls().compact) << how;
    EXPECT_EQ(ref.kernels().calls().compact, 0) << how;
    // Stencils reading edges sweep the padded blocks.
    batch_and_compare(rt, d, ref, whole, stage_batch(27, kVars, 2, 2, nullptr), how + " 27-point",
                      true);
    EXPECT_EQ(world_sum(rt.kernels().calls().native - rt.kernels().calls().compact), block_vars * 2)
        << how;
    EXPECT_EQ(world_sum(rt.kernels().calls().compact), block_vars * 9) << how;
  }
}

TEST(Compact, StaticSweepsOfCompactInteriorsMatchThePaddedKernels) {
  if (!stencil::compact_stencil7_supported()) GTEST_SKIP() << "no AVX-512 on this machine";
  compact_sweeps_match_the_padded_kernels<runtime::StaticRuntime>();
}

TEST(Compact, DynamicSweepsOfCompactInteriorsMatchThePaddedKernels) {
  if (!stencil::compact_stencil7_supported()) GTEST_SKIP() << "no AVX-512 on this machine";
  compact_sweeps_match_the_padded_kernels<runtime::DynamicRuntime>();
}

// Blocks far too small to pay for a task each are run several to a task, chosen from the
// measured time per block, with the same bits.
TEST(DynamicTasks, SmallBlocksAreGroupedFromMeasuredTimes) {
  const int me = world_rank();
  const RootGrid grid{{4, 4, 4}};
  const std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);  // 512 leaves
  const BlockShape shape{2, 2, 2, 1};
  const auto targets = even_cut(keys, grid);
  Domain d = make_domain(grid, shape, share(keys, targets, me));
  Domain whole = make_domain(grid, shape, keys);
  runtime::DynamicRuntime rt(MPI_COMM_WORLD, options(sfc::Curve::kMorton));
  runtime::StaticRuntime ref(MPI_COMM_SELF, options(sfc::Curve::kMorton));
  const ThreadScope one(1);
  rt.mesh_changed(d);
  ref.mesh_changed(whole);
  const auto batch = stage_batch(7, 1, 0, 4, nullptr);
  batch_and_compare(rt, d, ref, whole, batch, "first batch");
  EXPECT_EQ(rt.blocks_per_task(), 1u);  // nothing measured yet
  batch_and_compare(rt, d, ref, whole, batch, "second batch");
  // A 2^3 block's stage takes well under a microsecond: far below the task target.
  EXPECT_TRUE(all_ranks(rt.blocks_per_task() > 1,
                        "blocks per task " + std::to_string(rt.blocks_per_task())));
  // One worker: faces between tasks are deferred (packed at the sender's sweep), with the
  // same bits; several workers: none are.
  EXPECT_TRUE(all_ranks(d.blocks.empty() || rt.deferred_faces() > 0,
                        "deferred faces " + std::to_string(rt.deferred_faces())));
  // The sweeps read same-level faces where the values are, not from filled ghosts.
  EXPECT_TRUE(all_ranks(d.blocks.empty() || rt.faces_read_in_place() > 0,
                        "faces read in place " + std::to_string(rt.faces_read_in_place())));
  {
    const ThreadScope two(2);
    batch_and_compare(rt, d, ref, whole, batch, "two workers");
  }
  EXPECT_EQ(rt.deferred_faces(), 0u);
  // Still in place: a face from a block later in the reader's task, or from another rank.
  EXPECT_TRUE(all_ranks(d.blocks.empty() || rt.faces_read_in_place() > 0,
                        "faces read in place " + std::to_string(rt.faces_read_in_place())));
}

// Several workers defer faces between tasks only when enough independent variable groups keep
// them busy (a deferred face orders the tasks of a stage); the bits stay those of one rank,
// in the scheduler's order and in a seeded random one.
TEST(DynamicTasks, ManyVariableGroupsDeferFacesOnSeveralWorkers) {
  const int me = world_rank();
  const RootGrid grid{{2, 2, 2}};
  const std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);  // 64 leaves
  const BlockShape shape{4, 4, 4, 8};
  const auto targets = even_cut(keys, grid);
  for (const std::uint64_t seed : {0u, 31u}) {
    Domain d = make_domain(grid, shape, share(keys, targets, me));
    Domain whole = make_domain(grid, shape, keys);
    runtime::RuntimeOptions o = options(sfc::Curve::kMorton);
    o.order_seed = seed;
    runtime::DynamicRuntime rt(MPI_COMM_WORLD, o);
    runtime::StaticRuntime ref(MPI_COMM_SELF, options(sfc::Curve::kMorton));
    const ThreadScope two(2);
    rt.mesh_changed(d);
    {
      const ThreadScope one(1);
      ref.mesh_changed(whole);
    }
    const std::string how = "seed " + std::to_string(seed);
    // Four variable groups for two workers: not enough, no face is deferred.
    batch_and_compare(rt, d, ref, whole, stage_batch(7, 4, 1, 3, nullptr), how + ", 4 groups");
    EXPECT_EQ(rt.deferred_faces(), 0u) << how;
    // Eight: faces between tasks are deferred, and same-level faces read in place.
    batch_and_compare(rt, d, ref, whole, stage_batch(7, 8, 1, 3, nullptr), how + ", 8 groups");
    EXPECT_TRUE(all_ranks(d.blocks.size() < 2 || rt.deferred_faces() > 0,
                          how + ": deferred faces " + std::to_string(rt.deferred_faces())));
    EXPECT_TRUE(
        all_ranks(d.blocks.size() < 2 || rt.faces_read_in_place() > 0,
                  how + ": faces read in place " + std::to_string(rt.faces_read_in_place())));
  }
}

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
      std::vector<std::optional<sfc::Position>> firsts(static_cast<std::size_t>(P));
      for (std::size_t r = 0; r + 1 < b.size(); ++r)
        if (b[r] < b[r + 1]) firsts[r] = sfc::first_position(keys[order[b[r]]], space);
      const sfc::Partition part = sfc::Partition::from_firsts(space, firsts);
      ASSERT_EQ(part.ranks(), P) << what;
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
