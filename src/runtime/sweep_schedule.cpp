#include "runtime/sweep_schedule.hpp"

#include <algorithm>
#include <cassert>

namespace miniamr::runtime {

namespace {

bool same_level(const stencil::FaceLink& link) {
  return link.relation == stencil::GhostRelation::kSameLevel;
}

}  // namespace

SweepSchedule build_sweep_schedule(const StageGraph& graph, const stencil::BlockShape& shape,
                                   int threads) {
  assert(graph.groups == 1);
  const std::size_t blocks = graph.blocks;
  SweepSchedule s;
  s.threads = std::max(1, threads);
  const auto t = std::size_t(s.threads);
  for (int remote = 0; remote < 2; ++remote) {
    if (remote) s.first_remote = s.order.size();
    for (std::size_t i = 0; i < blocks; ++i)
      if ((graph.needs_remote[i] != 0) == (remote != 0)) s.order.push_back(i);
  }
  std::vector<std::size_t> pos(blocks);
  for (std::size_t p = 0; p < s.order.size(); ++p) pos[s.order[p]] = p;

  // Equal shares of each phase per thread.
  const std::size_t phase_begin[2] = {0, s.first_remote};
  const std::size_t phase_end[2] = {s.first_remote, blocks};
  for (int p = 0; p < 2; ++p)
    for (std::size_t k = 0; k < t; ++k)
      s.bounds.push_back(phase_begin[p] + (phase_end[p] - phase_begin[p]) * k / t);
  s.bounds.push_back(blocks);
  // One thread sweeps everything in order, so any pair of its blocks may share a trigger.
  const auto chunk = [&](std::size_t p) -> std::size_t {
    if (s.threads == 1) return 0;
    return std::size_t(std::upper_bound(s.bounds.begin(), s.bounds.end(), p) - s.bounds.begin());
  };

  std::vector<std::vector<GhostTask>> at(blocks);
  s.reads.resize(blocks);
  s.copies.resize(blocks);
  using Kind = GhostTask::Kind;
  using Read = FaceRead::Kind;
  for (std::size_t dst = 0; dst < blocks; ++dst) {
    for (const GhostFill& f : graph.fills[graph.node(dst, 0)]) {
      auto& read = s.reads[dst][std::size_t(f.link.face)];
      assert(read.kind == Read::kGhost);  // a face has one sender, or is a boundary face
      if (f.kind == GhostFill::Kind::kBoundary) {
        read.kind = Read::kMirror;
      } else if (f.kind == GhostFill::Kind::kLocal) {
        const std::size_t pd = pos[dst], ps = pos[f.src];
        if (chunk(pd) != chunk(ps)) {
          s.early.push_back({dst, f.src, f.link, Kind::kDirect});
        } else if (pd <= ps) {
          if (same_level(f.link))  // the sender is swept later by the same thread
            read = {Read::kNeighbour, f.src, 0, 0, {}};
          else
            at[pd].push_back({dst, f.src, f.link, Kind::kDirect});
        } else {
          if (same_level(f.link)) {
            // The sender's layer facing dst, copied out by its sweep (once: in an octree no
            // other block reads it, but a schedule need not rely on that).
            FaceSlot& copy = s.copies[f.src][std::size_t(f.link.face ^ 1)];
            if (copy.size == 0) copy = append_face_slot(s.deferred_per_var, shape, f.link);
            read = {Read::kDeferred, copy.slot, 0, copy.size, {}};
          } else {
            const FaceSlot face = append_face_slot(s.deferred_per_var, shape, f.link);
            at[ps].push_back({dst, f.src, f.link, Kind::kPack, face.slot, face.size});
            at[pd].push_back({dst, f.src, f.link, Kind::kUnpack, face.slot, face.size});
          }
        }
      }
    }
  }
  // Faces from other ranks: read from the received messages, or (across a level change)
  // unpacked into the receiver's ghosts.
  s.unpacks.resize(graph.recvs.size());
  for (std::size_t m = 0; m < graph.recvs.size(); ++m)
    for (std::size_t i = 0; i < graph.recvs[m].faces.size(); ++i) {
      const FaceSlice& f = graph.recvs[m].faces[i];
      if (!same_level(f.link)) {
        s.unpacks[m].push_back(i);
        continue;
      }
      auto& read = s.reads[f.block][std::size_t(f.link.face)];
      assert(read.kind == Read::kGhost);
      read = {Read::kMessage, m, f.offset, f.per_var, {}};
    }
  place_reads(s.reads, shape);
  s.task_begin.reserve(blocks + 1);
  for (std::size_t p = 0; p < blocks; ++p) {
    s.task_begin.push_back(s.tasks.size());
    s.tasks.insert(s.tasks.end(), at[p].begin(), at[p].end());
  }
  s.task_begin.push_back(s.tasks.size());
  return s;
}

void place_reads(std::span<std::array<FaceRead, 6>> reads, const stencil::BlockShape& shape) {
  using Read = FaceRead::Kind;
  using Source = stencil::GhostSource::Kind;
  for (auto& faces : reads)
    for (int f = 0; f < 6; ++f) {
      FaceRead& read = faces[std::size_t(f)];
      const Source kind = read.kind == Read::kMirror      ? Source::kMirror
                          : read.kind == Read::kNeighbour ? Source::kNeighbour
                          : read.kind == Read::kGhost     ? Source::kGhost
                                                          : Source::kPacked;
      read.place = stencil::layer_place(shape, f, kind);
    }
}

void DenseGhostLayers::number(std::span<const std::array<FaceRead, 6>> reads) {
  slot_.assign(reads.size(), {});
  slots_ = 0;
  for (std::size_t b = 0; b < reads.size(); ++b)
    for (std::size_t f = 0; f < 6; ++f)
      slot_[b][f] = reads[b][f].kind == FaceRead::Kind::kGhost ? slots_++ : kNoSlot;
}

void DenseGhostLayers::resize(std::size_t vars) {
  vars_ = vars;
  data_.resize(slots_ * vars * stencil::kCompactFaceCells);
}

double* DenseGhostLayers::layer(std::size_t b, int f, std::size_t var) {
  const std::size_t slot = slot_[b][std::size_t(f)];
  assert(slot != kNoSlot && var < vars_);
  return data_.data() + (slot * vars_ + var) * stencil::kCompactFaceCells;
}

}  // namespace miniamr::runtime
