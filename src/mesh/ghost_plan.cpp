#include "mesh/ghost_plan.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace miniamr::mesh {

stencil::Quadrant quadrant_of(const octree::Key& fine, int axis) {
  const int o = fine.octant();
  const int b = axis == 0 ? 1 : 0;  // the two other axes, in x,y,z order
  const int c = axis == 2 ? 1 : 2;
  return {(o >> b) & 1, (o >> c) & 1};
}

namespace {

// The link that fills `receiver`'s ghost face f from `sender`.
stencil::FaceLink link_between(const octree::Key& receiver, const octree::Key& sender, int face) {
  const int axis = face / 2;
  if (sender.level == receiver.level) return {stencil::GhostRelation::kSameLevel, face, {}};
  if (sender.level < receiver.level)
    return {stencil::GhostRelation::kCoarseToFine, face, quadrant_of(receiver, axis)};
  return {stencil::GhostRelation::kFineToCoarse, face, quadrant_of(sender, axis)};
}

// The leaves (indices into nb.all) that fill ghost face f of leaf i of nb.all.
template <class Fn>
void for_each_sender(const Neighbourhood& nb, const octree::RootGrid& grid, std::size_t i,
                     octree::Face f, Fn&& fn) {
  const octree::FaceLookup across = nb.all.across(nb.all[i], f, grid, i);
  for (int n = 0; n < across.count; ++n) fn(across.index[std::size_t(n)]);
}

bool message_order(const RemoteLink& a, const RemoteLink& b) {
  if (!(a.receiver == b.receiver)) return octree::morton_less(a.receiver, b.receiver);
  if (a.link.face != b.link.face) return a.link.face < b.link.face;
  return octree::morton_less(a.sender, b.sender);
}

}  // namespace

GhostPlan build_ghost_plan(const Neighbourhood& nb) {
  const octree::RootGrid& grid = nb.grid;
  GhostPlan plan;
  plan.needs_remote.assign(nb.locals, 0);
  std::map<int, PeerLinks> peers;
  auto peer = [&peers](int r) -> PeerLinks& {
    PeerLinks& p = peers[r];
    p.rank = r;
    return p;
  };

  for (std::size_t i = 0; i < nb.all.size(); ++i) {
    const octree::Key& k = nb.all[i];
    const bool local_receiver = nb.is_local(i);
    for (const octree::Face f : octree::kFaces) {
      const int face = static_cast<int>(f);
      const auto axis = std::size_t(octree::axis(f));
      if (local_receiver && !octree::face_neighbour(k, f, grid)) {
        plan.boundary[axis].push_back({nb.local_index[i], face});
        continue;
      }
      for_each_sender(nb, grid, i, f, [&](std::size_t j) {
        const octree::Key& s = nb.all[j];
        const stencil::FaceLink link = link_between(k, s, face);
        const bool local_sender = nb.is_local(j);
        if (local_receiver && local_sender) {
          plan.local[axis].push_back({nb.local_index[i], nb.local_index[j], link});
        } else if (local_receiver) {
          peer(nb.owner[j]).recv[axis].push_back({k, s, nb.local_index[i], link});
          plan.needs_remote[nb.local_index[i]] = 1;
        } else if (local_sender) {
          peer(nb.owner[i]).send[axis].push_back({k, s, nb.local_index[j], link});
        }
      });
    }
  }
  for (auto& [rank, p] : peers) {
    for (int a = 0; a < 3; ++a) {
      std::sort(p.send[std::size_t(a)].begin(), p.send[std::size_t(a)].end(), message_order);
      std::sort(p.recv[std::size_t(a)].begin(), p.recv[std::size_t(a)].end(), message_order);
    }
    plan.peers.push_back(std::move(p));
  }
  return plan;
}

}  // namespace miniamr::mesh
