// What the MPI runtime tests (test_mpi_migration, _consensus, _mappers, _partition) share:
// meshes, cuts, domains and the one-rank reference they are compared with.
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
#pragma once

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

#include "comm/mpi.hpp"
#include "mesh/domain.hpp"
#include "mesh/ghost_plan.hpp"
#include "mesh/migrate.hpp"
#include "mesh/neighbourhood.hpp"
#include "mpi_checks.hpp"
#include "octree/key.hpp"
#include "octree/leaf_set.hpp"
#include "octree/refine.hpp"
#include "runtime/dynamic_runtime.hpp"
#include "runtime/exact_reduce.hpp"
#include "runtime/static_runtime.hpp"
#include "sfc/curve.hpp"
#include "sfc/partition.hpp"
#include "sfc/shares.hpp"
#include "stencil/block.hpp"
#include "stencil/compact_stencil.hpp"
#include "stencil/exact_sum.hpp"
#include "stencil/hash.hpp"
#include "stencil/init_values.hpp"
#include "stencil/split_coarsen.hpp"
#include "stencil/stencil_kernels.hpp"
#include "stencil/variable_kernels.hpp"

namespace runtime_test {

namespace octree = miniamr::octree;
namespace runtime = miniamr::runtime;
namespace mesh = miniamr::mesh;
namespace comm = miniamr::comm;
namespace sfc = miniamr::sfc;
namespace stencil = miniamr::stencil;

using mesh::Domain;
using octree::Key;
using octree::LeafSet;
using octree::RootGrid;
using stencil::Block;
using stencil::BlockShape;

inline constexpr std::uint64_t kDataSeed = 0x7465737473ull;

// One OpenMP thread per rank unless OMP_NUM_THREADS says otherwise, as the driver does
// (app/run.cpp): OpenMP's default of a thread per core would have 4 oversubscribed ranks' spinning
// threads fight over the cores. Set before main(), so before any parallel region.
inline const bool kOneThreadPerRank = [] {
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
inline constexpr std::array<sfc::Curve, 2> kCurves{sfc::Curve::kMorton, sfc::Curve::kHilbert};

inline std::string curve_name(sfc::Curve c) {
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

inline std::string str(const Key& k) {
  return octree::to_string(k);
}

// Every rank's keys, in rank order, on every rank.
inline std::vector<std::vector<Key>> allgather_keys(std::span<const Key> mine) {
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

inline std::uint64_t key_hash(const Key& k, std::uint64_t seed) {
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
inline std::vector<Key> refine_where(const std::vector<Key>& keys, const RootGrid& grid,
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
inline std::vector<Key> random_mesh(const RootGrid& grid, int max_level, int percent,
                                    std::uint64_t seed) {
  std::vector<Key> keys = octree::root_leaves(grid);
  for (int l = 0; l < max_level; ++l) {
    keys = refine_where(keys, grid, [&](const Key& k) {
      return k.level == l && int(key_hash(k, seed) % 100) < percent;
    });
  }
  return keys;
}

inline std::vector<Key> refine_all(const std::vector<Key>& keys, const RootGrid& grid) {
  return refine_where(keys, grid, [](const Key&) { return true; });
}

inline std::size_t index_of(const std::vector<Key>& sorted, const Key& k) {
  const auto it = std::lower_bound(sorted.begin(), sorted.end(), k, octree::MortonLess{});
  return std::size_t(it - sorted.begin());
}

// The octant-0 key of every complete family (8 sibling leaves) of a whole mesh.
inline std::vector<Key> complete_families(const std::vector<Key>& keys) {
  const LeafSet leaves(keys);
  std::vector<Key> firsts;
  for (const Key& k : keys)
    if (k.level > 0 && k.octant() == 0 && leaves.family_complete(k)) firsts.push_back(k);
  return firsts;
}

// ---------------------------------------------------------------------------------------------
// Distributions: rank r holds a contiguous range of the ownership curve

inline sfc::CurveSpace space_of(sfc::Curve curve, const RootGrid& grid) {
  return sfc::CurveSpace::make(curve, grid);
}

// Indices of `keys` (Morton order) along the curve.
inline std::vector<std::size_t> along_curve(const std::vector<Key>& keys,
                                            const sfc::CurveSpace& space) {
  return sfc::curve_order(LeafSet(keys), space);
}

// Target of each key (indexed like keys) when rank r holds curve positions [bounds[r],
// bounds[r+1]) of the leaves along the curve.
inline std::vector<int> targets_from_bounds(const std::vector<Key>& keys,
                                            const sfc::CurveSpace& space,
                                            std::span<const std::size_t> bounds) {
  const auto order = along_curve(keys, space);
  std::vector<int> t(keys.size());
  for (std::size_t r = 0; r + 1 < bounds.size(); ++r)
    for (std::size_t p = bounds[r]; p < bounds[r + 1]; ++p) t[order[p]] = int(r);
  return t;
}

// Targets of the curve cut into `parts` ranges of equal weight (weights indexed like keys), or
// into ranges of the given `shares` of the weight (one per part) when there are any.
inline std::vector<int> cut_whole(const std::vector<Key>& keys, const sfc::CurveSpace& space,
                                  std::span<const std::int64_t> weights, int parts,
                                  const sfc::Shares& shares = {}) {
  const auto order = along_curve(keys, space);
  std::vector<std::int64_t> along(order.size());
  for (std::size_t p = 0; p < order.size(); ++p) along[p] = weights[order[p]];
  const std::int64_t total = std::accumulate(along.begin(), along.end(), std::int64_t{0});
  const auto cut = shares.given() ? shares.cut(along, 0, total) : sfc::cut(along, 0, total, parts);
  std::vector<int> t(keys.size());
  for (std::size_t p = 0; p < order.size(); ++p) t[order[p]] = cut[p];
  return t;
}

// The static runtime's rule for families: every complete family of `keys` that is whole on one
// rank under `before` goes, whole, where its first leaf along the curve goes under `expected`.
inline void keep_families_whole(const std::vector<Key>& keys, const sfc::CurveSpace& space,
                                std::span<const int> before, std::vector<int>& expected) {
  const auto order = along_curve(keys, space);
  std::vector<std::size_t> position(keys.size());
  for (std::size_t p = 0; p < order.size(); ++p) position[order[p]] = p;
  for (const Key& first : complete_families(keys)) {
    std::vector<std::size_t> members;
    for (int o = 0; o < 8; ++o) members.push_back(index_of(keys, octree::sibling(first, o)));
    if (!std::ranges::all_of(members,
                             [&](std::size_t i) { return before[i] == before[members[0]]; }))
      continue;
    std::ranges::sort(members,
                      [&](std::size_t a, std::size_t b) { return position[a] < position[b]; });
    const int target = expected[members.front()];
    for (const std::size_t i : members) expected[i] = target;
  }
}

// Targets of the Morton curve cut into one range of equal leaf count per rank.
inline std::vector<int> even_cut(const std::vector<Key>& keys, const RootGrid& grid) {
  return cut_whole(keys, space_of(sfc::Curve::kMorton, grid),
                   std::vector<std::int64_t>(keys.size(), 1), world_size());
}

// Random weights in 1..max_weight, one per leaf.
inline std::vector<std::int64_t> random_weights(std::size_t n, std::int64_t max_weight,
                                                std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::int64_t> w(n);
  for (auto& x : w) x = 1 + rng.below(max_weight);
  return w;
}

// Rank `rank`'s leaves (Morton order) when leaf i goes to targets[i].
inline std::vector<Key> share(const std::vector<Key>& all, std::span<const int> targets, int rank) {
  std::vector<Key> mine;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (targets[i] == rank) mine.push_back(all[i]);
  return mine;
}

// Problems with the ranks' holdings as a partition of `keys` along the curve: every leaf on
// exactly one rank, and each non-empty rank's range wholly after the previous non-empty one's
// (for Morton: its first key morton_less-after the previous rank's last key).
inline std::string partition_problems(const std::vector<std::vector<Key>>& per_rank,
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

inline Block initial_block(const Key& k, const BlockShape& s) {
  Block b(s);
  stencil::fill_initial(b,
                        {std::int64_t(k.index(0)) * s.nx, std::int64_t(k.index(1)) * s.ny,
                         std::int64_t(k.index(2)) * s.nz},
                        k.level, kDataSeed);
  return b;
}

// A cost value that identifies its block (so a cost travelling with the wrong block shows).
inline double key_cost(const Key& k) {
  return stencil::to_unit(key_hash(k, 17));
}

inline Domain make_domain(const RootGrid& grid, const BlockShape& shape,
                          std::span<const Key> keys) {
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

inline std::vector<Key> keys_of(const Domain& d) {
  return {d.leaves.keys().begin(), d.leaves.keys().end()};
}

// The first cell where two blocks differ bitwise (every variable; interior or every cell).
inline std::optional<std::string> first_difference(const Block& a, const Block& b,
                                                   bool interior_only) {
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
inline std::string compare_with_reference(const Domain& d, const Domain& ref, bool interior_only) {
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
inline std::string check_holdings(const Domain& d, const std::vector<Key>& expected) {
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
inline std::vector<double> reduce_sums(std::span<stencil::ExactSum> sums, MPI_Comm comm) {
  const comm::Communicator c(comm);
  return runtime::global_sums(c, sums);
}

// The driver's checksum: per-block interior sums added exactly and reduced over `comm`.
inline std::vector<double> checksums(const Domain& d, MPI_Comm comm) {
  std::vector<stencil::ExactSum> sums(std::size_t(d.shape.num_vars));
  for (const Block& b : d.blocks)
    for (int v = 0; v < d.shape.num_vars; ++v)
      sums[std::size_t(v)].add(stencil::interior_sum(b, v));
  return reduce_sums(sums, comm);
}

inline bool same_bits(std::span<const double> a, std::span<const double> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](double x, double y) {
    return std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(y);
  });
}

// Splits or merges the local blocks as the driver does (Simulation::apply_plan).
inline void apply_plan(Domain& d, const octree::AdaptPlan& plan) {
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

inline runtime::StaticOptions options(sfc::Curve curve, bool blocking = false) {
  runtime::StaticOptions o;
  o.blocking_send = blocking;
  o.ownership = curve;
  return o;
}

// Compares every local block with the reference's, ghosts included (both sides fill the same
// ghosts, and blocks that arrived by migration have had theirs refilled since).
inline void compare_blocks(const Domain& d, const Domain& whole, const std::string& what,
                           bool interior_only = false) {
  const std::string diff = compare_with_reference(d, whole, interior_only);
  EXPECT_TRUE(all_ranks(diff.empty(), what + ": " + diff)) << what;
}

// One stage on the distributed and the reference domain; compares the stage's checksums and,
// with `blocks`, every block.
inline void stage_and_compare(runtime::StaticRuntime& rt, Domain& d, runtime::StaticRuntime& ref,
                              Domain& whole, const runtime::StageWork& work,
                              const std::string& what, bool blocks = true) {
  const auto got = rt.advance(d, work);
  std::vector<double> want;
  {
    const ThreadScope one(1);  // the reference always runs one thread
    want = ref.advance(whole, work);
  }
  EXPECT_TRUE(same_bits(got, want)) << what << ": stage checksum " << got[0] << " vs " << want[0];
  if (blocks) compare_blocks(d, whole, what);
}

// Partition bounds as text, for messages.
inline std::string bounds_text(std::span<const std::size_t> b) {
  std::string s = "bounds";
  for (auto x : b) {
    s += ' ';
    s += std::to_string(x);
  }
  return s;
}

}  // namespace runtime_test
