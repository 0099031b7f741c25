#include "mesh/mesh.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <new>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "comm/clock.hpp"
#include "mesh/merge_family.hpp"
#include "mesh/migrate.hpp"
#include "mesh/neighbourhood.hpp"
#include "sfc/partition.hpp"

namespace miniamr::mesh {

namespace {
// Apart from the other exchanges' tags (101-104, 106; halos from 301).
constexpr int kLeadTag = 105;
}  // namespace

Mesh::Mesh(MPI_Comm parent, sfc::Curve ownership, int deepest)
    : comm_(parent), ownership_(ownership), deepest_(deepest), mailbox_(comm_) {}

void Mesh::changed(const Domain& domain) {
  repartition(domain, {});
}

void Mesh::repartition(const Domain& domain, std::span<int> least) {
  // One P-sized partition on a rank at a time (8 or 16 bytes a rank: 128 or 256 MiB in all at
  // 4096 simulated ranks): the old one goes before the new one is gathered.
  partition_ = {};
  rebuild(
      domain,
      exchange_partition(domain, sfc::CurveSpace::make(ownership_, domain.grid), comm_, deepest_),
      least);
}

void Mesh::adapted(const Domain& domain, std::span<int> least) {
  // Splits and merges move no rank's first position along the curve: the partition stands,
  // whether it was exchanged at the last rebuild or gathered during the move before the split.
  if (ownership_moved_) return repartition(domain, least);
#ifndef NDEBUG
  const sfc::Partition exchanged = exchange_partition(domain, partition_.space(), comm_, deepest_);
  for (const octree::Key& k : domain.leaves.keys())
    assert(exchanged.owner(k) == partition_.owner(k));
#endif
  rebuild(domain, std::move(partition_), least);
}

std::int64_t Mesh::move_blocks(Domain& domain, std::span<const int> targets,
                               std::vector<std::int8_t>* marks) {
  ownership_moved_ = true;
  return migrate(domain, targets, comm_, marks);
}

void Mesh::rebuild(const Domain& domain, sfc::Partition partition, std::span<int> least) {
  Neighbourhood nb = build_neighbourhood(domain, std::move(partition), comm_, least);
  ownership_moved_ = false;
  partition_ = std::move(nb.partition);  // the ghost plan and the mailbox read the keys alone
  families_split_ = nb.families_split;
  neighbourhood_ = std::move(nb);
  plan_.reset();
  mailbox_.set_neighbourhood(neighbourhood_);
  ++generation_;
}

const GhostPlan& Mesh::plan() const {
  if (!plan_) plan_ = build_ghost_plan(neighbourhood_);
  return *plan_;
}

std::vector<octree::Key> Mesh::initial_roots(const octree::RootGrid& grid) const {
  const octree::LeafSet all(octree::root_leaves(grid));
  const auto order = sfc::curve_order(all, sfc::CurveSpace::make(ownership_, grid));
  const std::vector<std::int64_t> ones(all.size(), 1);
  const auto target = sfc::cut(ones, 0, std::int64_t(all.size()), comm_.size());
  std::vector<octree::Key> mine;
  for (std::size_t p = 0; p < order.size(); ++p)
    if (target[p] == comm_.rank()) mine.push_back(all[order[p]]);
  std::sort(mine.begin(), mine.end(), octree::MortonLess{});
  return mine;
}

CommPartners Mesh::comm_partners() const {
  CommPartners c;
  for (const PeerLinks& p : plan().peers) {
    for (int a = 0; a < 3; ++a)
      if (!p.recv[std::size_t(a)].empty() || !p.send[std::size_t(a)].empty())
        ++c.axis[std::size_t(a)];
  }
  c.total = c.axis[0] + c.axis[1] + c.axis[2];
  c.unique = int(plan().peers.size());
  return c;
}

namespace {

// family_start[p] for leaves in curve order: the position of the first leaf of p's family when
// all 8 are leaves here (siblings are consecutive on any curve), else p.
std::vector<std::size_t> family_starts(const octree::LeafSet& leaves,
                                       std::span<const std::size_t> order) {
  std::vector<std::size_t> start(order.size());
  bool complete = false;  // of the family that the run ending at p belongs to
  for (std::size_t p = 0; p < order.size(); ++p) {
    const octree::Key& k = leaves[order[p]];
    const bool sibling = p > 0 && k.level > 0 && leaves[order[p - 1]].level == k.level &&
                         octree::parent(leaves[order[p - 1]]) == octree::parent(k);
    // Whether all 8 are leaves here is the same for each of them: asked once per family.
    if (!sibling) complete = k.level > 0 && leaves.family_complete_at(order[p]);
    start[p] = sibling && complete ? start[p - 1] : p;
  }
  return start;
}

// Returns false, leaving everything as it was, when storage for a parent could not be had.
bool merge_families_leaving(Domain& domain, std::vector<std::int8_t>& marks,
                            std::vector<int>& targets, const std::vector<bool>& merges_away,
                            std::vector<Mesh::AdaptCut::PendingMerge>& pending) {
  // A family that merges and leaves is merged before it goes: one parent travels, marked to
  // stay, instead of eight children (on a sphere moving over two ranks, two fifths of the
  // blocks the cut before adaptation moved were such children). The parent sorts where its
  // first child did. Its storage is taken here, where running out of memory can still leave
  // every block in place; its cells are coarsened during the move (move_for_adapt).
  const std::size_t families = std::size_t(std::ranges::count(merges_away, true));
  if (families == 0) return true;
  std::vector<stencil::Block> parents;
  try {
    parents.reserve(families);
    for (std::size_t f = 0; f < families; ++f) parents.push_back(domain.spare.take(domain.shape));
  } catch (const std::bad_alloc&) {
    for (stencil::Block& b : parents) domain.spare.give(b);
    return false;
  }
  const std::size_t n = domain.leaves.size();
  std::vector<octree::Key> keys;
  std::vector<stencil::Block> blocks;
  std::vector<double> cost;
  std::vector<std::int8_t> new_marks;
  std::vector<int> new_targets;
  for (std::size_t i = 0, f = 0; i < n;) {
    if (merges_away[i]) {
      keys.push_back(octree::parent(domain.leaves[i]));
      cost.push_back(merged_cost(std::span<const double>(domain.cost).subspan(i).first<8>()));
      new_marks.push_back(octree::kStay);
      new_targets.push_back(targets[i]);
      Mesh::AdaptCut::PendingMerge& m = pending.emplace_back();
      m.parent = blocks.size();
      for (std::size_t c = 0; c < 8; ++c) m.children[c] = std::move(domain.blocks[i + c]);
      blocks.push_back(std::move(parents[f++]));
      i += 8;
      continue;
    }
    keys.push_back(domain.leaves[i]);
    blocks.push_back(std::move(domain.blocks[i]));
    cost.push_back(domain.cost[i]);
    new_marks.push_back(marks[i]);
    new_targets.push_back(targets[i]);
    ++i;
  }
  domain.leaves = octree::LeafSet(std::move(keys));
  domain.blocks = std::move(blocks);
  domain.cost = std::move(cost);
  marks = std::move(new_marks);
  targets = std::move(new_targets);
  return true;
}

}  // namespace

// This rank's runs (and the length of each) and its consensus neighbours': the ranks holding
// the rest of a family are neighbours in the consensus (they hold leaf siblings of this
// rank's), so the runs come point to point, one message each way.
struct Mesh::Runs {
  // A rank's leading and trailing runs along the curve: the leaves inside the family of its
  // first leaf, and inside the family of its last.
  struct Lead {
    octree::Key first, last;
    int present = 0;        // the rank holds leaves
    int siblings = 0;       // the leading run holds only leaves of the first leaf's level
    int whole = 0;          // the leading run is all the rank holds
    int tail_siblings = 0;  // the trailing run holds only leaves of the last leaf's level
  };
  std::vector<std::size_t> order;
  Lead mine;
  std::size_t run = 0, tail = 0;
  std::vector<int> peers;
  std::vector<Lead> theirs;

  const Lead* lead_of(int r) const {
    const auto it = std::lower_bound(peers.begin(), peers.end(), r);
    return it != peers.end() && *it == r ? &theirs[std::size_t(it - peers.begin())] : nullptr;
  }
};

Mesh::Runs Mesh::exchange_runs(const Domain& domain) const {
  const auto& leaves = domain.leaves;
  Runs r;
  r.order = sfc::curve_order(leaves, partition_.space());
  const auto& order = r.order;
  const auto same_level_run = [&](std::size_t from, int step, std::size_t& length) {
    const octree::Key& k = leaves[order[from]];
    const octree::Key family = octree::parent(k);
    bool same = true;
    length = 0;
    for (std::ptrdiff_t p = std::ptrdiff_t(from);
         p >= 0 && p < std::ptrdiff_t(order.size()) &&
         octree::contains(family, leaves[order[std::size_t(p)]]);
         p += step, ++length)
      same = same && leaves[order[std::size_t(p)]].level == k.level;
    return same;
  };
  if (!leaves.empty()) {
    r.mine.present = 1;
    r.mine.first = leaves[order.front()];
    r.mine.last = leaves[order.back()];
    if (r.mine.first.level > 0) {
      r.mine.siblings = same_level_run(0, 1, r.run) ? 1 : 0;
      r.mine.whole = r.run == leaves.size() ? 1 : 0;
    }
    if (r.mine.last.level > 0)
      r.mine.tail_siblings = same_level_run(order.size() - 1, -1, r.tail) ? 1 : 0;
  }
  r.peers = mailbox_.peers();
  r.theirs.resize(r.peers.size());
  std::vector<MPI_Request> requests(2 * r.peers.size());
  for (std::size_t i = 0; i < r.peers.size(); ++i)
    MPI_Irecv(&r.theirs[i], sizeof(Runs::Lead), MPI_BYTE, r.peers[i], kLeadTag, comm_.get(),
              &requests[i]);
  for (std::size_t i = 0; i < r.peers.size(); ++i)
    MPI_Isend(&r.mine, sizeof(Runs::Lead), MPI_BYTE, r.peers[i], kLeadTag, comm_.get(),
              &requests[r.peers.size() + i]);
  comm_.note(0, std::int64_t(r.peers.size()));
  MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  return r;
}

std::int64_t Mesh::gather_families(Domain& domain) {
  // Where no family that may coarsen is split between ranks, no rank needs its neighbours' runs.
  if (comm_.size() == 1 || !families_split_) return 0;
  const Runs r = exchange_runs(domain);
  // A run moves to the rank where its family starts when every rank in between holds nothing
  // but leaves of that family at the same level (they move there too), so ranges stay in curve
  // order. Otherwise some sibling is refined and the family cannot coarsen anyway.
  std::vector<int> targets(domain.leaves.size(), comm_.rank());
  bool moving = false;
  if (r.mine.siblings) {
    const octree::Key& k = r.mine.first;
    const int home = partition_.owner(octree::parent(k));
    // The home rank's part of the family must be leaves of this level too. A rank that holds
    // such leaves is a neighbour; one that is not holds none.
    const Runs::Lead* h = r.lead_of(home);
    bool clear = home < comm_.rank() && h != nullptr && h->present && h->tail_siblings &&
                 h->last.level == k.level && octree::parent(h->last) == octree::parent(k);
    for (int j = home + 1; clear && j < comm_.rank(); ++j) {
      if (!partition_.holds_leaves(j)) continue;
      const Runs::Lead* l = r.lead_of(j);
      clear = l != nullptr && l->siblings && l->whole && l->first.level == k.level &&
              octree::parent(l->first) == octree::parent(k);
    }
    if (clear) {
      for (std::size_t p = 0; p < r.run; ++p) targets[r.order[p]] = home;
      moving = true;
    }
  }
  return comm_.any(moving) ? migrate_blocks(domain, targets) : 0;
}

Mesh::SplitFamilies Mesh::split_families(const Domain& domain) const {
  const std::size_t n = domain.leaves.size();
  const int me = comm_.rank();
  SplitFamilies split{std::vector<std::uint8_t>(n, 0), std::vector<int>(n, me)};
  if (comm_.size() == 1 || !families_split_) return split;
  const Runs r = exchange_runs(domain);
  // Whether the family of `k` (a leaf of this rank's run, all of whose leaves are of k's level)
  // is 8 leaves over several ranks: from the rank of its first leaf (`home`) to that of its
  // last, the first ends with leaves of the family at k's level, the last starts with them, and
  // those between hold nothing else.
  const auto complete_across = [&](const octree::Key& k) {
    const octree::Key family = octree::parent(k);
    const auto [home, end] = partition_.owners(family);
    if (home == end) return false;
    const auto of_family = [&](const octree::Key& leaf) {
      return leaf.level == k.level && octree::parent(leaf) == family;
    };
    for (int j = home; j <= end; ++j) {
      if (j == me) continue;
      if (j != home && j != end && j + 1 < comm_.size() && !partition_.holds_leaves(j)) continue;
      const Runs::Lead* l = r.lead_of(j);
      if (l == nullptr || !l->present) return false;
      const bool ok = j == home  ? l->tail_siblings && of_family(l->last)
                      : j == end ? l->siblings && of_family(l->first)
                                 : l->siblings && l->whole && of_family(l->first);
      if (!ok) return false;
    }
    return true;
  };
  if (r.mine.siblings && complete_across(r.mine.first)) {
    const int home = partition_.owners(octree::parent(r.mine.first)).first;
    for (std::size_t p = 0; p < r.run; ++p) {
      split.complete[r.order[p]] = 1;
      split.home[r.order[p]] = home;
    }
  }
  if (r.mine.tail_siblings && complete_across(r.mine.last))
    for (std::size_t p = n - r.tail; p < n; ++p) split.complete[r.order[p]] = 1;
  return split;
}

std::vector<int> Mesh::balanced_targets(const octree::LeafSet& leaves,
                                        std::span<const std::int64_t> weights,
                                        const sfc::Shares& shares,
                                        std::optional<comm::Communicator::PrefixSum> known) const {
  const auto order = sfc::curve_order(leaves, partition_.space());
  std::vector<std::int64_t> along(order.size());
  std::int64_t local = 0;
  for (std::size_t p = 0; p < order.size(); ++p) local += along[p] = weights[order[p]];
  const auto [offset, total] = known ? *known : comm_.prefix_sum(local);
  // Without shares, the reference's count balance, families whole with their first leaf; with
  // them, the dynamic balancer's cut, exactly at the shares' bounds. A few leaves per part on a
  // small mesh make half a family 9% of a slow rank's part (the expanding sphere), and the
  // adaptation brings together only the split families that coarsen (split_families).
  std::vector<int> cut;
  if (!shares.given()) {
    cut = sfc::cut(along, offset, total, comm_.size());
    sfc::keep_families_together(cut, family_starts(leaves, order));
  } else {
    cut = shares.cut(along, offset, total);
  }
  std::vector<int> targets(order.size());
  for (std::size_t p = 0; p < order.size(); ++p) targets[order[p]] = cut[p];
  return targets;
}

bool Mesh::sends_any(std::span<const int> targets) const {
  return std::ranges::any_of(targets, [&](int t) { return t != comm_.rank(); });
}

std::int64_t Mesh::rebalance(Domain& domain, std::span<const std::int64_t> weights,
                             const sfc::Shares& shares) {
  const std::vector<int> targets = balanced_targets(domain.leaves, weights, shares);
  // A partition that is already the balanced one keeps its plans.
  if (!any_moves(targets)) return 0;
  const std::int64_t sent = move_blocks(domain, targets);
  changed(domain);
  return sent;
}

std::int64_t Mesh::rebalance_for_adapt(Domain& domain, const octree::AdaptPlan& plan,
                                       std::span<const std::int64_t> adapted_weights,
                                       std::vector<std::int8_t>& marks, const sfc::Shares& shares,
                                       std::optional<comm::Communicator::PrefixSum> along) {
  AdaptCut cut = cut_for_adapt(domain, plan, adapted_weights, shares, along);
  const bool merged = merge_leaving(domain, marks, cut);
  return move_for_adapt(domain, marks, cut, merged).value_or(0);
}

Mesh::AdaptCut Mesh::cut_for_adapt(const Domain& domain, const octree::AdaptPlan& plan,
                                   std::span<const std::int64_t> adapted_weights,
                                   const sfc::Shares& shares,
                                   std::optional<comm::Communicator::PrefixSum> along) const {
  // The cut that the balance after the adaptation would make of the adapted leaves (made here:
  // merges and splits involve no other rank), carried back to the leaves they come from.
  const std::vector<int> after =
      balanced_targets(octree::LeafSet(plan.keys), adapted_weights, shares, along);
  AdaptCut cut;
  cut.targets.assign(domain.leaves.size(), comm_.rank());
  cut.merges_away.assign(domain.leaves.size(), false);
  for (std::size_t j = 0; j < plan.keys.size();) {
    const octree::Origin& o = plan.origin[j];
    if (o.kind == octree::Origin::kSplit) {
      // Its children follow it in the plan. It goes to the rank of most of them (the earlier of
      // two with as many), where the cut falls among them.
      std::size_t end = j + 1;
      while (end < plan.keys.size() && plan.origin[end].kind == octree::Origin::kSplit &&
             plan.origin[end].old_index == o.old_index)
        ++end;
      int best = after[j];
      std::ptrdiff_t most = 0;
      for (std::size_t k = j; k < end; ++k) {
        const auto n = std::count(after.begin() + std::ptrdiff_t(j),
                                  after.begin() + std::ptrdiff_t(end), after[k]);
        if (n > most || (n == most && after[k] < best)) best = after[k], most = n;
      }
      cut.targets[o.old_index] = best;
      j = end;
      continue;
    }
    const bool merged = o.kind == octree::Origin::kMerged;
    for (std::size_t c = 0; c < (merged ? 8 : 1); ++c) cut.targets[o.old_index + c] = after[j];
    if (merged && after[j] != comm_.rank()) cut.merges_away[o.old_index] = true;
    ++j;
  }
  return cut;
}

bool Mesh::merge_leaving(Domain& domain, std::vector<std::int8_t>& marks, AdaptCut& cut) {
  if (merge_families_leaving(domain, marks, cut.targets, cut.merges_away, cut.pending)) return true;
  std::ranges::fill(cut.targets, comm_.rank());  // every block stays
  return false;
}

std::optional<std::int64_t> Mesh::move_for_adapt(Domain& domain, std::vector<std::int8_t>& marks,
                                                 AdaptCut& cut, bool merged) {
  // A rank that could not merge says so in the migration's exchange, which every rank takes
  // part in and which also tells every rank whether any block moved: no rank is left waiting,
  // and no reduction of its own is needed. (A rank that merges a family away moves it, so
  // merging before the exchange merges nothing in vain.)
  enum : std::size_t { kFailed, kMoves };
  std::array<int, 2> least{merged ? comm_.size() : comm_.rank(), sends_any(cut.targets) ? -1 : 0};
  // The adaptation's own work done inside the move, timed apart from the move.
  // On the run's clock: in the simulation build the partition's exchange takes simulated time.
  const auto adapting = [&](auto&& work) {
    const auto started = comm::Clock::now();
    work();
    cut.adapting_seconds += comm::seconds_since(started);
  };
  // The parents that leave are coarsened once their headers are on their way: on a sphere
  // moving over two ranks one rank merges what leaves it while the other takes storage for it.
  const auto coarsen_pending = [&] {
    if (cut.pending.empty()) return;
    adapting([&] {
      for (AdaptCut::PendingMerge& m : cut.pending)
        merge_into(m.children, domain.blocks[m.parent], domain.spare);
      cut.pending.clear();
    });
  };
  // Every rank's first position after the move is known once the headers are through: the
  // partition is gathered while the blocks' storage travels, not after it has arrived. (Votes
  // of the headers' exchange, alike on every rank, say whether there is one to gather.)
  const sfc::CurveSpace space = sfc::CurveSpace::make(ownership_, domain.grid);
  const auto gather_partition = [&](std::span<const octree::Key> arriving) {
    if (least[kFailed] < comm_.size() || least[kMoves] == 0) return;
    sfc::Position mine = first_position_of(arriving, space, deepest_);
    for (std::size_t i = 0; i < cut.targets.size(); ++i)
      if (cut.targets[i] == comm_.rank())
        mine = std::min(mine, sfc::first_position(domain.leaves[i], space));
    adapting([&] {
      partition_ = {};  // one P-sized partition on a rank at a time (repartition)
      partition_ = exchange_partition(mine, domain.grid, space, comm_, deepest_);
    });
  };
  const std::int64_t sent = migrate(domain, cut.targets, comm_, &marks, kMigrationMessageBytes,
                                    least, coarsen_pending, gather_partition);
  assert(cut.pending.empty());
  if (least[kFailed] < comm_.size())
    throw std::runtime_error(
        fmt::format("out of memory on rank {} merging the families that leave it before migration",
                    least[kFailed]));
  if (least[kMoves] == 0) return std::nullopt;
  ownership_moved_ = false;  // partition_ is the one the move made (gather_partition)
  return sent;
}

CurveView Mesh::curve_view(const Domain& domain) const {
  CurveView v;
  v.order = sfc::curve_order(domain.leaves, partition_.space());
  return v;
}

std::int64_t Mesh::migrate_blocks(Domain& domain, std::span<const int> targets) {
  const std::int64_t sent = move_blocks(domain, targets);
  changed(domain);
  return sent;
}

}  // namespace miniamr::mesh
