#include "runtime/schedule.hpp"

#include <algorithm>
#include <cassert>
#include <utility>

namespace miniamr::runtime {

namespace {

template <class T>
void sort_unique(std::vector<T>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

template <class T>
void sort_unique_all(std::vector<std::vector<T>>& lists) {
  for (auto& l : lists) sort_unique(l);
}

bool same_level(const stencil::FaceLink& link) {
  return link.relation == stencil::GhostRelation::kSameLevel;
}

// The sweep order and its units.
void cut_units(const StageGraph& graph, const SchedulePolicy& policy,
               std::span<const double> weights, Schedule& s) {
  const bool interior_first = policy.order == SchedulePolicy::Order::kInteriorFirst;
  s.unit_begin.push_back(0);
  for (int part = 0; part < 2; ++part) {
    const std::size_t first = s.order.size();
    const bool remote = (part == 0) != interior_first;
    for (std::size_t b = 0; b < graph.blocks; ++b)
      if ((graph.needs_remote[b] != 0) == remote) s.order.push_back(b);
    const std::size_t n = s.order.size() - first;
    if (part == 1) s.second_part = s.unit_begin.size() - 1;
    // No unit without a block: each would still be a task per variable group and step (on one
    // rank, which has no remote blocks, half the tasks of a dynamic schedule with two workers).
    const std::size_t units = std::min(n, std::max<std::size_t>(1, policy.units_per_part));
    if (weights.empty() || units < 2) {
      for (std::size_t k = 1; k <= units; ++k) s.unit_begin.push_back(first + n * k / units);
      continue;
    }
    std::vector<double> w(n);
    for (std::size_t i = 0; i < n; ++i) w[i] = weights[s.order[first + i]];
    const std::vector<std::size_t> begins = cut_weighted(w, units);
    for (std::size_t k = 1; k <= units; ++k) s.unit_begin.push_back(first + begins[k]);
  }
  s.unit_of.resize(graph.blocks);
  for (std::size_t u = 0; u + 1 < s.unit_begin.size(); ++u)
    for (std::size_t p = s.unit_begin[u]; p < s.unit_begin[u + 1]; ++p)
      s.unit_of[s.order[p]] = std::uint32_t(u);
}

void place_reads(std::vector<std::array<FaceRead, 6>>& reads, const stencil::BlockShape& shape) {
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

}  // namespace

std::vector<std::size_t> cut_weighted(std::span<const double> w, std::size_t units) {
  const std::size_t n = w.size();
  assert(units >= 1 && units <= n);
  std::vector<double> sum(n + 1, 0.0);  // sum[p]: the weight before position p
  for (std::size_t i = 0; i < n; ++i) sum[i + 1] = sum[i] + w[i];
  std::vector<std::size_t> begins{0};
  for (std::size_t k = 1; k < units; ++k) {
    const double target = sum[n] * double(k) / double(units);
    // The boundary nearest the target, leaving a block for this unit and each one after it.
    const std::size_t lo = begins.back() + 1, hi = n - (units - k);
    auto p = std::size_t(std::lower_bound(sum.begin(), sum.end(), target) - sum.begin());
    if (p > 0 && target - sum[p - 1] < sum[std::min(p, n)] - target) --p;
    begins.push_back(std::clamp(p, lo, hi));
  }
  begins.push_back(n);
  return begins;
}

bool units_uneven(const Schedule& s, std::span<const double> block_seconds, double tolerance) {
  const auto time_of = [&](std::size_t u) {
    double t = 0;
    for (std::size_t p = s.unit_begin[u]; p < s.unit_begin[u + 1]; ++p)
      t += block_seconds[s.order[p]];
    return t;
  };
  for (const auto& [u0, u1] :
       {std::pair{std::size_t{0}, s.second_part}, std::pair{s.second_part, s.units()}}) {
    if (u1 - u0 < 2) continue;
    double most = 0, sum = 0;
    for (std::size_t u = u0; u < u1; ++u) {
      const double t = time_of(u);
      most = std::max(most, t);
      sum += t;
    }
    if (most - sum / double(u1 - u0) > tolerance) return true;
  }
  return false;
}

Schedule build_schedule(const StageGraph& graph, const stencil::BlockShape& shape,
                        const SchedulePolicy& policy, std::span<const double> weights) {
  assert(weights.empty() || weights.size() == graph.blocks);
  Schedule s;
  s.edges = graph.edges;
  s.groups = graph.groups;
  s.steps = graph.edges ? graph.groups + 1 : 1;
  cut_units(graph, policy, weights, s);
  const std::size_t blocks = graph.blocks, U = s.units();
  const auto K = std::size_t(s.steps);
  std::vector<std::size_t> pos(blocks);
  for (std::size_t p = 0; p < blocks; ++p) pos[s.order[p]] = p;
  // The step after which a face of axis group g exists: the sweep (for the next stage) or the
  // fill of the previous axis.
  const auto made_by = [&](int g) { return g == 0 ? s.steps - 1 : g - 1; };

  std::vector<std::vector<GhostTask>> tasks(blocks * K);
  std::vector<std::vector<OutFace>> outs(blocks * K);
  std::vector<std::vector<std::uint32_t>> links(U), feeds(U * K), consumes(U * K), produces(U * K);
  std::vector<std::vector<std::uint32_t>> readers(graph.recvs.size());
  if (!s.edges) {
    s.reads.resize(blocks);
    s.copies.resize(blocks);
  }
  using Task = GhostTask::Kind;
  using Read = FaceRead::Kind;
  for (std::size_t dst = 0; dst < blocks; ++dst) {
    const std::size_t pd = pos[dst], ud = s.unit_of[dst];
    for (int g = 0; g < s.groups; ++g) {
      const std::size_t at = pd * K + std::size_t(g);  // the step that fills group g
      for (const GhostFill& f : graph.fills[graph.node(dst, g)]) {
        FaceRead* read = s.edges ? nullptr : &s.reads[dst][std::size_t(f.link.face)];
        assert(read == nullptr || read->kind == Read::kGhost);  // one source per face
        if (f.kind == GhostFill::Kind::kBoundary) {
          if (read != nullptr)
            read->kind = Read::kMirror;
          else
            tasks[at].push_back({Task::kBoundary, dst, dst, f.link, {}, {}});
          continue;
        }
        if (f.kind == GhostFill::Kind::kRemote) {
          const FaceSlice& face = graph.recvs[f.message].faces[f.face];
          const PackedAt where{PackedAt::In::kMessage, f.message, face.offset, face.per_var};
          if (read != nullptr && same_level(f.link))
            *read = {Read::kPacked, 0, {}, where, {}};
          else
            tasks[at].push_back({Task::kUnpack, dst, dst, f.link, {}, where});
          consumes[ud * K + std::size_t(g)].push_back(f.message);
          readers[f.message].push_back(std::uint32_t(ud * K + std::size_t(g)));
          continue;
        }
        const std::size_t src = f.src, ps = pos[src], us = s.unit_of[src];
        if (us != ud) {  // packed by the sender after the step that makes it
          // Laid out as a message's face (with its edges, for stencils that read them).
          std::size_t& size = s.local_per_var[std::size_t(g)];
          const FaceSlot slot{
              size, stencil::packed_size(shape, f.link.relation, f.link.face / 2, 1, s.edges)};
          size += slot.size;
          const PackedAt where{PackedAt::In::kLocal, 0, slot.slot, slot.size};
          outs[ps * K + std::size_t(made_by(g))].push_back({f.link, g, where});
          if (read != nullptr && same_level(f.link))
            *read = {Read::kPacked, 0, {}, where, {}};
          else
            tasks[at].push_back({Task::kUnpack, dst, src, f.link, {}, where});
          links[ud].push_back(std::uint32_t(us));
          links[us].push_back(std::uint32_t(ud));
          if (g > 0) feeds[ud * K + std::size_t(g)].push_back(std::uint32_t(us));
          continue;
        }
        // Within a unit.
        if (s.edges) {  // every block's earlier axes are filled before this one
          tasks[at].push_back({Task::kDirect, dst, src, f.link, {}, {}});
        } else if (ps > pd) {  // the sender comes later: its values are still those of before
          if (same_level(f.link))
            *read = {Read::kNeighbour, src, {}, {}, {}};
          else
            tasks[at].push_back({Task::kDirect, dst, src, f.link, {}, {}});
        } else if (same_level(f.link)) {
          // The sender's layer facing dst, copied out by its sweep (once: in an octree no other
          // block reads it, but a schedule need not rely on that).
          FaceSlot& copy = s.copies[src][std::size_t(f.link.face ^ 1)];
          if (copy.size == 0) copy = append_face_slot(s.deferred_per_var, shape, f.link);
          *read = {Read::kDeferred, 0, copy, {}, {}};
        } else {
          const FaceSlot slot = append_face_slot(s.deferred_per_var, shape, f.link);
          tasks[ps * K].push_back({Task::kDefer, dst, src, f.link, slot, {}});
          tasks[at].push_back({Task::kUndefer, dst, src, f.link, slot, {}});
        }
      }
    }
  }
  // Faces for other ranks, packed after the step that makes them.
  for (std::size_t m = 0; m < graph.sends.size(); ++m) {
    const MessageLayout& msg = graph.sends[m];
    const auto step = std::size_t(made_by(msg.group));
    for (const FaceSlice& face : msg.faces) {
      const PackedAt where{PackedAt::In::kMessage, std::uint32_t(m), face.offset, face.per_var};
      outs[pos[face.block] * K + step].push_back({face.link, msg.group, where});
      produces[s.unit_of[face.block] * K + step].push_back(std::uint32_t(m));
    }
  }
  if (!s.edges) place_reads(s.reads, shape);

  sort_unique_all(links);
  sort_unique_all(feeds);
  sort_unique_all(consumes);
  sort_unique_all(produces);
  sort_unique_all(readers);
  s.producers.assign(graph.sends.size(), 0);
  for (const auto& p : produces)
    for (const std::uint32_t m : p) ++s.producers[m];
  s.consumers.resize(graph.recvs.size());
  for (std::size_t m = 0; m < readers.size(); ++m)
    s.consumers[m] = std::uint32_t(readers[m].size());
  s.tasks = Adjacency<GhostTask>(tasks);
  s.outs = Adjacency<OutFace>(outs);
  s.links = Adjacency<std::uint32_t>(links);
  s.feeds = Adjacency<std::uint32_t>(feeds);
  s.consumes = Adjacency<std::uint32_t>(consumes);
  s.produces = Adjacency<std::uint32_t>(produces);
  s.readers = Adjacency<std::uint32_t>(readers);
  return s;
}

ScheduleCounts count_faces(const Schedule& s) {
  ScheduleCounts c;
  for (const auto& faces : s.reads)
    for (const FaceRead& r : faces)
      if (r.kind != FaceRead::Kind::kGhost && r.kind != FaceRead::Kind::kMirror) ++c.read_in_place;
  for (const auto& faces : s.copies)
    for (const FaceSlot& f : faces) c.deferred += f.size > 0 ? 1 : 0;
  for (std::size_t i = 0; i < s.tasks.size(); ++i)
    for (const GhostTask& t : s.tasks[i]) c.deferred += t.kind == GhostTask::Kind::kDefer ? 1 : 0;
  for (std::size_t i = 0; i < s.outs.size(); ++i)
    for (const OutFace& o : s.outs[i]) c.packed_between_units += o.at.in == PackedAt::In::kLocal;
  return c;
}

}  // namespace miniamr::runtime
