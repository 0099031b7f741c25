#include "mesh/mpi_mailbox.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace miniamr::mesh {

namespace {
constexpr int kMarksTag = 102;

// Whether two leaves share part of a face, whatever their levels: the same answer on both
// ranks, so two ranks agree on whether they are neighbours.
bool touching(const octree::Key& a, const octree::Key& b) {
  int contacts = 0;
  for (std::size_t d = 0; d < 3; ++d) {
    const auto a0 = std::uint64_t(a.x[d]), a1 = a0 + octree::side(a.level);
    const auto b0 = std::uint64_t(b.x[d]), b1 = b0 + octree::side(b.level);
    if (a1 == b0 || b1 == a0)
      ++contacts;
    else if (a1 <= b0 || b1 <= a0)
      return false;  // apart along d
  }
  return contacts == 1;
}

// Whether leaf i of `leaves` touches a leaf for which `pick` holds, or has a leaf sibling for
// which it holds. Across each face lies a same-level or coarser leaf covering the neighbour, or
// the finer leaves within it, of which those touching leaf i count.
template <class Pick>
bool touches_or_sibling(const octree::LeafSet& leaves, std::size_t i, const octree::RootGrid& grid,
                        Pick&& pick) {
  const octree::Key& k = leaves[i];
  for (const octree::Face f : octree::kFaces) {
    const auto n = octree::face_neighbour(k, f, grid);
    if (!n) continue;
    if (const auto c = leaves.find_covering(*n, i)) {
      if (pick(*c)) return true;
      continue;
    }
    const auto [first, last] = leaves.range_within(*n);
    for (std::size_t j = first; j < last; ++j)
      if (pick(j) && touching(k, leaves[j])) return true;
  }
  if (k.level == 0) return false;
  const auto [first, last] = leaves.range_within(octree::parent(k));
  for (std::size_t j = first; j < last; ++j)
    if (j != i && leaves[j].level == k.level && pick(j)) return true;
  return false;
}

}  // namespace

void MpiMailbox::set_neighbourhood(const Neighbourhood& nb) {
  const octree::RootGrid& grid = grid_ = nb.grid;
  all_ = &nb.all;
  const octree::LeafSet& all = *all_;
  slot_.assign(all.size(), -1);
  peers_.clear();
  // The other ranks' leaves that touch one of this rank's, or are leaf siblings of one: the only
  // ones this rank posts to, and the only ones that post to it. Both relations are symmetric, so
  // they are found from the other ranks' leaves here, far fewer than this rank's own.
  const auto local = [&nb](std::size_t i) { return nb.is_local(i); };
  std::vector<bool> related(all.size(), false);
  for (std::size_t i = 0; i < all.size(); ++i)
    if (!nb.is_local(i)) related[i] = touches_or_sibling(all, i, grid, local);
  // Each neighbour posts each of its leaves once a round at most.
  std::map<int, std::size_t> leaves_of;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (related[i] && !nb.is_local(i)) ++leaves_of[nb.owner[i]];
  for (const auto& [rank, count] : leaves_of) peers_.push_back({rank, count, {}});
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (nb.is_local(i) || !related[i]) continue;
    const auto it = std::lower_bound(peers_.begin(), peers_.end(), nb.owner[i],
                                     [](const Peer& p, int r) { return p.rank < r; });
    slot_[i] = int(it - peers_.begin());
  }
  // The local leaves that post, found from the related leaves of other ranks (far fewer): a
  // leaf posts across a face to another rank's leaf R of its level or coarser, and then lies
  // within the region of R's level across R's opposite face; it posts to its family's leaves.
  posts_.assign(nb.locals, 0);
  const auto mark_within = [&](const octree::Key& region, int level) {
    const auto [first, last] = all.range_within(region);
    for (std::size_t j = first; j < last; ++j)
      if (nb.is_local(j) && (level < 0 || all[j].level == level)) posts_[nb.local_index[j]] = 1;
  };
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (slot_[i] < 0) continue;
    const octree::Key& r = all[i];
    for (const octree::Face f : octree::kFaces)
      if (const auto n = octree::face_neighbour(r, f, grid)) mark_within(*n, -1);
    if (r.level > 0) mark_within(octree::parent(r), r.level);
  }
}

std::vector<int> MpiMailbox::peers() const {
  std::vector<int> r;
  for (const Peer& p : peers_) r.push_back(p.rank);
  return r;
}

void MpiMailbox::post_to(std::size_t leaf, const octree::MarkChange& change, int& posted) {
  if (slot_[leaf] < 0) return;
  peers_[std::size_t(slot_[leaf])].outbox.push_back(change);
  ++posted;
}

int MpiMailbox::post_across(octree::Face f, const octree::MarkChange& change) {
  int posted = 0;
  if (peers_.empty()) return posted;
  const auto n = octree::face_neighbour(change.key, f, grid_);
  if (!n) return posted;
  // The leaf covering the neighbour is the same-level or a coarser one; it hears of the change
  // only when the change raises it (R1-R3).
  const auto i = all_->find_covering(*n);
  if (i && octree::raised_across(change.key.level, change.mark, (*all_)[*i].level))
    post_to(*i, change, posted);
  return posted;
}

int MpiMailbox::post_family(const octree::MarkChange& change) {
  int posted = 0;
  if (peers_.empty()) return posted;
  const auto [first, last] = all_->range_within(octree::parent(change.key));
  for (std::size_t j = first; j < last; ++j)
    if ((*all_)[j].level == change.key.level) post_to(j, change, posted);
  return posted;
}

std::vector<octree::MarkChange> MpiMailbox::exchange() {
  std::vector<std::vector<octree::MarkChange>> in(peers_.size());
  std::vector<MPI_Request> requests(2 * peers_.size(), MPI_REQUEST_NULL);
  constexpr int kBytes = int(sizeof(octree::MarkChange));
  for (std::size_t p = 0; p < peers_.size(); ++p) {
    in[p].resize(peers_[p].capacity);
    MPI_Irecv(in[p].data(), int(in[p].size()) * kBytes, MPI_BYTE, peers_[p].rank, kMarksTag,
              comm_.get(), &requests[p]);
  }
  for (std::size_t p = 0; p < peers_.size(); ++p) {
    // A leaf posted several times in a round (per face, family, and as its mark rose) goes
    // once, with its highest mark, whose effects include the others'.
    auto& out = peers_[p].outbox;
    std::sort(out.begin(), out.end(), [](const octree::MarkChange& a, const octree::MarkChange& b) {
      return octree::morton_less(a.key, b.key) || (a.key == b.key && a.mark > b.mark);
    });
    out.erase(std::unique(out.begin(), out.end(),
                          [](const octree::MarkChange& a, const octree::MarkChange& b) {
                            return a.key == b.key;
                          }),
              out.end());
    MPI_Isend(out.data(), int(out.size()) * kBytes, MPI_BYTE, peers_[p].rank, kMarksTag,
              comm_.get(), &requests[peers_.size() + p]);
  }
  comm_.note(0, std::int64_t(peers_.size()));
  std::vector<MPI_Status> statuses(requests.size());
  MPI_Waitall(int(requests.size()), requests.data(), statuses.data());
  std::vector<octree::MarkChange> arrived;
  for (std::size_t p = 0; p < peers_.size(); ++p) {
    int bytes = 0;
    MPI_Get_count(&statuses[p], MPI_BYTE, &bytes);
    arrived.insert(arrived.end(), in[p].begin(), in[p].begin() + bytes / kBytes);
  }
  discard();
  return arrived;
}

void MpiMailbox::discard() {
  for (Peer& p : peers_) p.outbox.clear();
}

}  // namespace miniamr::mesh
