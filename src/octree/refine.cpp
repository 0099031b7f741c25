#include "octree/refine.hpp"

#include <algorithm>
#include <cassert>
#include <deque>

namespace miniamr::octree {

std::vector<std::int8_t> initial_marks(const LeafSet& leaves, int max_level,
                                       const std::function<int(const Key&)>& wanted,
                                       std::span<const std::uint8_t> complete_across) {
  assert(complete_across.empty() || complete_across.size() == leaves.size());
  std::vector<std::int8_t> marks(leaves.size());
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const Key& k = leaves[i];
    int m = std::clamp(wanted(k), -1, 1);
    if (m == kRefine && k.level >= max_level) m = kStay;
    const bool across = !complete_across.empty() && complete_across[i] != 0;
    if (m == kCoarsen && !across && !leaves.family_complete_at(i)) m = kStay;  // also level 0
    marks[i] = static_cast<std::int8_t>(m);
  }
  return marks;
}

namespace {

// Applies the effects of one leaf's mark to the local leaves and posts them for the rest.
class Propagator {
 public:
  Propagator(const LeafSet& leaves, std::span<std::int8_t> marks, const RootGrid& grid,
             MarkMailbox& mailbox)
      : leaves_(leaves), marks_(marks), grid_(grid), mailbox_(mailbox) {}

  void push_all() {
    for (std::size_t i = 0; i < leaves_.size(); ++i) queue_.push_back(i);
  }
  std::int64_t posted() const { return posted_; }

  void drain() {
    while (!queue_.empty()) {
      const std::size_t i = queue_.front();
      queue_.pop_front();
      effects(MarkChange{leaves_[i], marks_[i]}, /*from_here=*/true, i);
    }
  }

  void receive(const MarkChange& change) {
    effects(change, /*from_here=*/false, LeafSet::kNowhere);
  }

 private:
  void raise(std::size_t i, std::int8_t m) {
    if (marks_[i] < m) {
      marks_[i] = m;
      queue_.push_back(i);
    }
  }

  // `near`: the index of the changed leaf here (LeafSet::kNowhere for another rank's).
  void effects(const MarkChange& c, bool from_here, std::size_t near) {
    const Key& k = c.key;
    const bool posts = from_here && mailbox_.posts_from(near);
    for (const Face f : kFaces) {
      // Across a face inside the parent lies a sibling, never a coarser leaf: only a refine
      // raises it.
      if (c.mark != kRefine && face_inside_parent(k, f)) continue;
      const auto n = face_neighbour(k, f, grid_);
      if (!n) continue;
      if (posts) posted_ += mailbox_.post_across(f, c);
      // The leaf covering the neighbour is the same-level one or a coarser one; finer leaves
      // across (no covering leaf) are raised by no rule, so they are not looked up.
      const auto i = leaves_.find_covering(*n, near);
      if (!i) continue;
      if (const auto m = raised_across(k.level, c.mark, leaves_[*i].level)) raise(*i, *m);
    }
    if (k.level > 0 && c.mark >= kStay) {
      const Key family = parent(k);
      if (posts) posted_ += mailbox_.post_family(c);
      const auto [first, last] = leaves_.range_within(family, near);
      for (std::size_t j = first; j < last; ++j) {
        if (leaves_[j].level == k.level) raise(j, kStay);
      }
    }
  }

  const LeafSet& leaves_;
  std::span<std::int8_t> marks_;
  const RootGrid& grid_;
  MarkMailbox& mailbox_;
  std::deque<std::size_t> queue_;
  std::int64_t posted_ = 0;
};

}  // namespace

ClosureStats close_marks(const LeafSet& leaves, std::span<std::int8_t> marks, const RootGrid& grid,
                         MarkMailbox& mailbox, int rounds) {
  assert(marks.size() == leaves.size());
  Propagator p(leaves, marks, grid, mailbox);
  ClosureStats stats;
  p.push_all();
  if (!mailbox.distributed()) rounds = 0;
  for (stats.rounds = 0; stats.rounds < rounds; ++stats.rounds) {
    p.drain();
    for (const MarkChange& c : mailbox.exchange()) p.receive(c);
  }
  // What the last arrivals raise here; nothing it would post could raise a mark elsewhere.
  p.drain();
  mailbox.discard();
  stats.rounds = std::max(stats.rounds, 1);
  stats.changes_sent = p.posted();
  return stats;
}

AdaptPlan plan_adapt(const LeafSet& leaves, std::span<const std::int8_t> marks) {
  AdaptPlan plan;
  plan.keys.reserve(leaves.size());
  plan.origin.reserve(leaves.size());
  for (std::size_t i = 0; i < leaves.size();) {
    const Key& k = leaves[i];
    if (marks[i] == kRefine) {
      for (int o = 0; o < 8; ++o) {
        plan.keys.push_back(child(k, o));
        plan.origin.push_back({Origin::kSplit, i, o});
      }
      ++plan.splits;
      ++i;
      continue;
    }
    // A family coarsens only when all 8 siblings are leaves here, all marked coarsen; they are
    // then consecutive in octant order, starting with octant 0.
    if (marks[i] == kCoarsen && k.octant() == 0 && leaves.family_complete_at(i) &&
        std::all_of(marks.begin() + std::ptrdiff_t(i), marks.begin() + std::ptrdiff_t(i + 8),
                    [](std::int8_t m) { return m == kCoarsen; })) {
      plan.keys.push_back(parent(k));
      plan.origin.push_back({Origin::kMerged, i, 0});
      ++plan.merges;
      i += 8;
      continue;
    }
    plan.keys.push_back(k);
    plan.origin.push_back({Origin::kKept, i, 0});
    ++i;
  }
  return plan;
}

std::int64_t leaves_after(const Key& key, int iterations, int deepest,
                          const std::function<int(const Key&)>& wanted) {
  if (iterations <= 0 || key.level >= deepest || wanted(key) < kRefine) return 1;  // as clamped
  std::int64_t n = 0;
  for (int o = 0; o < 8; ++o) n += leaves_after(child(key, o), iterations - 1, deepest, wanted);
  return n;
}

}  // namespace miniamr::octree
