#include "runtime/static_runtime.hpp"

#include <algorithm>
#include <chrono>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "runtime/migrate.hpp"
#ifdef MINIAMR_HAVE_KOKKOS
#include "stencil_kokkos/kokkos_stencil.hpp"
#endif
#include "sfc/partition.hpp"
#include "stencil/plane_sweep.hpp"
#include "stencil/stencil_kernels.hpp"

namespace miniamr::runtime {

bool StaticRuntime::has_kokkos() {
#ifdef MINIAMR_HAVE_KOKKOS
  return true;
#else
  return false;
#endif
}

int thread_count() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

int thread_index() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

namespace {

constexpr int kHaloTag = 201;
constexpr int kAllAxes[] = {0, 1, 2};

}  // namespace

StaticRuntime::StaticRuntime(MPI_Comm parent, StaticOptions options)
    : comm_(parent), options_(options), mailbox_(comm_) {}

void StaticRuntime::mesh_changed(const Domain& domain) {
  const Neighbourhood nb =
      build_neighbourhood(domain, sfc::CurveSpace::make(options_.ownership, domain.grid), comm_);
  mailbox_.set_partition(nb.partition);
  partition_ = nb.partition;
  plan_ = build_ghost_plan(domain, nb);
  fit_threads(domain);
}

void StaticRuntime::fit_threads(const Domain& domain) {
  scratch_.resize(std::size_t(thread_count()));
  for (auto& s : scratch_) s.resize(stencil::stencil_scratch_size(domain.shape));
  schedule_ = build_sweep_schedule(plan_, domain.blocks.size(), thread_count());
}

std::vector<octree::Key> StaticRuntime::initial_roots(const octree::RootGrid& grid) const {
  const octree::LeafSet all(octree::root_leaves(grid));
  const auto order = sfc::curve_order(all, sfc::CurveSpace::make(options_.ownership, grid));
  const std::vector<std::int64_t> ones(all.size(), 1);
  const auto target = sfc::cut(ones, 0, std::int64_t(all.size()), comm_.size());
  std::vector<octree::Key> mine;
  for (std::size_t p = 0; p < order.size(); ++p)
    if (target[p] == comm_.rank()) mine.push_back(all[order[p]]);
  std::sort(mine.begin(), mine.end(), octree::MortonLess{});
  return mine;
}

CommPartners StaticRuntime::comm_partners() const {
  CommPartners c;
  for (const PeerLinks& p : plan_.peers) {
    for (int a = 0; a < 3; ++a)
      if (!p.recv[std::size_t(a)].empty() || !p.send[std::size_t(a)].empty())
        ++c.axis[std::size_t(a)];
  }
  c.total = c.axis[0] + c.axis[1] + c.axis[2];
  c.unique = int(plan_.peers.size());
  return c;
}

void StaticRuntime::sweep_block(Domain& domain, const StageWork& work, stencil::VarRange vars,
                                std::size_t i, std::vector<double>& scratch) {
  using Clock = std::chrono::steady_clock;
  stencil::Block& b = domain.blocks[i];
  const auto t0 = work.measure_cost ? Clock::now() : Clock::time_point{};
  const auto nv = std::size_t(vars.count());
  for (int v = vars.v0; v < vars.v1; ++v) {
    double s = 0;
    switch (work.stencil) {
#ifdef MINIAMR_HAVE_KOKKOS
      case 7:
        s = options_.kokkos ? stencil_kokkos::stencil7(b, v) : stencil::stencil7(b, v, scratch);
        break;
      case 27:
        s = options_.kokkos ? stencil_kokkos::stencil27(b, v) : stencil::stencil27(b, v, scratch);
        break;
#else
      case 7:
        s = stencil::stencil7(b, v, scratch);
        break;
      case 27:
        s = stencil::stencil27(b, v, scratch);
        break;
#endif
      default:
        s = stencil::stencil_variable(b, v, work.calc_stage, *work.coeffs, scratch);
        break;
    }
    if (work.checksum) block_sums_[i * nv + std::size_t(v - vars.v0)] = s;
  }
  if (work.measure_cost) {
    // Per-stage seconds of the block, summed over the variables of all comm groups.
    const double t = std::chrono::duration<double>(Clock::now() - t0).count();
    if (vars.v0 == 0) stage_cost_[i] = 0;
    stage_cost_[i] += t;
    if (vars.v1 == work.num_vars) domain.cost[i] = 0.75 * domain.cost[i] + 0.25 * stage_cost_[i];
  }
}

void StaticRuntime::add_block_sums(std::span<const std::size_t> blocks, const StageWork& work,
                                   stencil::VarRange vars, std::span<stencil::ExactSum> sums) {
  if (!work.checksum) return;
  const auto nv = std::size_t(vars.count());
  for (const std::size_t i : blocks)
    for (std::size_t v = 0; v < nv; ++v)
      sums[std::size_t(vars.v0 - work.vars.v0) + v].add(block_sums_[i * nv + v]);
}

void StaticRuntime::sweep_all(Domain& domain, const StageWork& work, stencil::VarRange vars,
                              std::span<stencil::ExactSum> sums) {
  MINIAMR_TIMED(timers_, kCompute);
  const auto n = std::ptrdiff_t(domain.blocks.size());
  if (work.checksum) block_sums_.resize(domain.blocks.size() * std::size_t(vars.count()));
    // Each block's sums go to its own slot and are added in block order afterwards (exact sums
    // would not mind the order anyway): bitwise the same for any thread count.
#pragma omp parallel if (scratch_.size() > 1)
  {
    std::vector<double>& scratch = scratch_[std::size_t(thread_index())];
#pragma omp for schedule(dynamic, 2)
    for (std::ptrdiff_t i = 0; i < n; ++i) sweep_block(domain, work, vars, std::size_t(i), scratch);
  }
  add_block_sums(schedule_.order, work, vars, sums);
}

void StaticRuntime::run_tasks(Domain& domain, std::span<const GhostTask> tasks,
                              stencil::VarRange vars) {
  for (const GhostTask& t : tasks) {
    if (t.boundary) {
      stencil::fill_boundary(domain.blocks[t.dst], t.link.face, vars, false);
    } else {
      stencil::fill_direct(domain.blocks[t.dst], domain.blocks[t.src], t.link, vars, false);
    }
  }
}

void StaticRuntime::sweep_phase(Domain& domain, const StageWork& work, stencil::VarRange vars,
                                std::span<stencil::ExactSum> sums, int phase) {
  MINIAMR_TIMED(timers_, kCompute);
  const SweepSchedule& s = schedule_;
  if (work.checksum) block_sums_.resize(domain.blocks.size() * std::size_t(vars.count()));
  const std::size_t begin = phase == 0 ? 0 : s.first_remote;
  const std::size_t end = phase == 0 ? s.first_remote : s.order.size();
#pragma omp parallel num_threads(s.threads) if (s.threads > 1)
  {
    const auto t = std::size_t(thread_index());
    const std::size_t first =
        s.threads == 1 ? begin : s.bounds[std::size_t(phase) * std::size_t(s.threads) + t];
    const std::size_t last =
        s.threads == 1 ? end : s.bounds[std::size_t(phase) * std::size_t(s.threads) + t + 1];
    std::vector<double>& scratch = scratch_[t];
    for (std::size_t p = first; p < last; ++p) {
      run_tasks(domain,
                std::span(s.tasks).subspan(s.task_begin[p], s.task_begin[p + 1] - s.task_begin[p]),
                vars);
      sweep_block(domain, work, vars, s.order[p], scratch);
    }
  }
  add_block_sums(std::span(s.order).subspan(begin, end - begin), work, vars, sums);
}

void StaticRuntime::begin_halo(const Domain& domain, const StageWork& work, stencil::VarRange group,
                               std::span<const int> axes, Halo& h) {
  MINIAMR_TIMED(timers_, kCommunicate);
  const bool edges = work.stencil != 7;
  const int nv = group.count();
  h.recv.resize(plan_.peers.size());
  h.send.resize(plan_.peers.size());
  h.recvs.clear();
  h.sends.clear();
  // Receives first, so every message finds its buffer.
  for (std::size_t p = 0; p < plan_.peers.size(); ++p) {
    std::size_t n = 0;
    for (const int a : axes)
      for (const RemoteLink& l : plan_.peers[p].recv[std::size_t(a)])
        n += stencil::packed_size(domain.shape, l.link.relation, a, nv, edges);
    if (n == 0) continue;
    h.recv[p].resize(n);
    h.recvs.emplace_back();
    MPI_Irecv(h.recv[p].data(), int(n), MPI_DOUBLE, plan_.peers[p].rank, kHaloTag, comm_.get(),
              &h.recvs.back());
  }
  // One aggregated message per neighbour rank, faces in the order both sides derive from keys.
  for (std::size_t p = 0; p < plan_.peers.size(); ++p) {
    std::size_t n = 0;
    for (const int a : axes)
      for (const RemoteLink& l : plan_.peers[p].send[std::size_t(a)])
        n += stencil::packed_size(domain.shape, l.link.relation, a, nv, edges);
    if (n == 0) continue;
    auto& buf = h.send[p];
    buf.resize(n);
    std::size_t off = 0;
    for (const int a : axes)
      for (const RemoteLink& l : plan_.peers[p].send[std::size_t(a)])
        off += stencil::pack(domain.blocks[l.block], l.link, group, edges,
                             std::span(buf).subspan(off));
    if (options_.blocking_send) {
      MPI_Send(buf.data(), int(n), MPI_DOUBLE, plan_.peers[p].rank, kHaloTag, comm_.get());
    } else {
      h.sends.emplace_back();
      MPI_Isend(buf.data(), int(n), MPI_DOUBLE, plan_.peers[p].rank, kHaloTag, comm_.get(),
                &h.sends.back());
    }
  }
}

void StaticRuntime::fill_local(Domain& domain, stencil::VarRange vars, std::span<const int> axes,
                               bool edges) {
  MINIAMR_TIMED(timers_, kCommunicate);
  // On-rank faces copy block to block, no staging. Links of one axis write disjoint ghost
  // cells (four fine senders fill four quarters of a coarse face), so threads may share them.
  for (const int a : axes) {
    const auto& links = plan_.local[std::size_t(a)];
    const auto& bounds = plan_.boundary[std::size_t(a)];
#pragma omp parallel if (scratch_.size() > 1)
    {
#pragma omp for schedule(static) nowait
      for (std::ptrdiff_t k = 0; k < std::ptrdiff_t(links.size()); ++k) {
        const LocalLink& l = links[std::size_t(k)];
        stencil::fill_direct(domain.blocks[l.dst], domain.blocks[l.src], l.link, vars, edges);
      }
#pragma omp for schedule(static)
      for (std::ptrdiff_t k = 0; k < std::ptrdiff_t(bounds.size()); ++k) {
        const BoundaryFace& b = bounds[std::size_t(k)];
        stencil::fill_boundary(domain.blocks[b.block], b.face, vars, edges);
      }
    }
  }
}

void StaticRuntime::wait_receives(Halo& h) {
  MINIAMR_TIMED(timers_, kCommunicate);
  MPI_Waitall(int(h.recvs.size()), h.recvs.data(), MPI_STATUSES_IGNORE);
  h.recvs.clear();
}

void StaticRuntime::unpack(Domain& domain, const StageWork& work, stencil::VarRange group,
                           stencil::VarRange vars, std::span<const int> axes, const Halo& h) {
  MINIAMR_TIMED(timers_, kCommunicate);
  const bool edges = work.stencil != 7;
  const int nv = group.count();
  // A link's slice of the message holds its variables one after the other.
  for (std::size_t p = 0; p < plan_.peers.size(); ++p) {
    std::size_t off = 0;
    for (const int a : axes) {
      for (const RemoteLink& l : plan_.peers[p].recv[std::size_t(a)]) {
        const std::size_t all = stencil::packed_size(domain.shape, l.link.relation, a, nv, edges);
        const std::size_t per_var = all / std::size_t(nv);
        const auto first = std::size_t(vars.v0 - group.v0) * per_var;
        stencil::unpack(domain.blocks[l.block], l.link, vars, edges,
                        std::span<const double>(h.recv[p]).subspan(off + first));
        off += all;
      }
    }
  }
}

void StaticRuntime::end_halo(Halo& h) {
  MINIAMR_TIMED(timers_, kCommunicate);
  MPI_Waitall(int(h.sends.size()), h.sends.data(), MPI_STATUSES_IGNORE);
  h.sends.clear();
}

void StaticRuntime::advance(Domain& domain, const StageWork& work,
                            std::span<stencil::ExactSum> sums) {
  // The host may change the thread count between two mesh changes.
  if (int(scratch_.size()) != thread_count()) fit_threads(domain);
  if (work.measure_cost) stage_cost_.resize(domain.blocks.size(), 0.0);
  // The comm groups of the stage: one message per neighbour rank and group.
  std::vector<stencil::VarRange> groups;
  const int size = work.group > 0 ? work.group : work.vars.count();
  for (int v0 = work.vars.v0; v0 < work.vars.v1; v0 += size)
    groups.push_back({v0, std::min(work.vars.v1, v0 + size)});
  halos_.resize(groups.size());

  if (work.stencil == 7) {
    // Face ghosts only. The groups' variables are independent, so every group's messages are
    // posted at once and waited for only when that group is swept. Then one variable at a time:
    // each on-rank face is filled right before the first sweep of its two blocks (the
    // schedule), so the data are swept while in cache; the self-contained blocks are swept
    // before the group's messages are waited for.
    for (std::size_t g = 0; g < groups.size(); ++g)
      begin_halo(domain, work, groups[g], kAllAxes, halos_[g]);
    for (std::size_t g = 0; g < groups.size(); ++g) {
      for (int v = groups[g].v0; v < groups[g].v1; ++v) {
        const stencil::VarRange one{v, v + 1};
        {
          MINIAMR_TIMED(timers_, kCommunicate);
          const auto& early = schedule_.early;
#pragma omp parallel for schedule(static) if (schedule_.threads > 1)
          for (std::ptrdiff_t k = 0; k < std::ptrdiff_t(early.size()); ++k)
            run_tasks(domain, std::span(&early[std::size_t(k)], 1), one);
        }
        sweep_phase(domain, work, one, sums, 0);
        if (v == groups[g].v0) wait_receives(halos_[g]);
        unpack(domain, work, groups[g], one, kAllAxes, halos_[g]);
        sweep_phase(domain, work, one, sums, 1);
      }
    }
    for (Halo& h : halos_) end_halo(h);
    return;
  }
  // Edges and corners fill in sequence x -> y -> z, so each axis completes before the next.
  for (const stencil::VarRange& group : groups) {
    Halo& h = halos_.front();
    for (const int a : kAllAxes) {
      const std::span<const int> axis(&a, 1);
      begin_halo(domain, work, group, axis, h);
      fill_local(domain, group, axis, true);
      wait_receives(h);
      unpack(domain, work, group, group, axis, h);
      end_halo(h);
    }
    sweep_all(domain, work, group, sums);
  }
}

namespace {

// family_start[p] for leaves in curve order: the position of the first leaf of p's family when
// all 8 are leaves here (siblings are consecutive on any curve), else p.
std::vector<std::size_t> family_starts(const octree::LeafSet& leaves,
                                       std::span<const std::size_t> order) {
  std::vector<std::size_t> start(order.size());
  for (std::size_t p = 0; p < order.size(); ++p) {
    const octree::Key& k = leaves[order[p]];
    const bool continues = p > 0 && k.level > 0 && leaves.family_complete(k) &&
                           leaves[order[p - 1]].level == k.level &&
                           octree::parent(leaves[order[p - 1]]) == octree::parent(k);
    start[p] = continues ? start[p - 1] : p;
  }
  return start;
}

}  // namespace

std::int64_t StaticRuntime::gather_families(Domain& domain) {
  if (comm_.size() == 1) return 0;
  const auto& leaves = domain.leaves;
  const auto order = sfc::curve_order(leaves, partition_.space());
  // The leading and trailing runs of this rank along the curve: the leaves inside the family
  // of its first leaf, and inside the family of its last.
  struct Lead {
    octree::Key first, last;
    int present = 0;        // the rank holds leaves
    int siblings = 0;       // the leading run holds only leaves of the first leaf's level
    int whole = 0;          // the leading run is all the rank holds
    int tail_siblings = 0;  // the trailing run holds only leaves of the last leaf's level
  } mine;
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
  std::size_t run = 0;
  if (!leaves.empty()) {
    mine.present = 1;
    mine.first = leaves[order.front()];
    mine.last = leaves[order.back()];
    if (mine.first.level > 0) {
      mine.siblings = same_level_run(0, 1, run) ? 1 : 0;
      mine.whole = run == leaves.size() ? 1 : 0;
    }
    std::size_t tail = 0;
    if (mine.last.level > 0)
      mine.tail_siblings = same_level_run(order.size() - 1, -1, tail) ? 1 : 0;
  }
  std::vector<Lead> all(std::size_t(comm_.size()));
  MPI_Allgather(&mine, sizeof(Lead), MPI_BYTE, all.data(), sizeof(Lead), MPI_BYTE, comm_.get());

  // A run moves to the rank where its family starts when every rank in between holds nothing
  // but leaves of that family at the same level (they move there too), so ranges stay in curve
  // order. Otherwise some sibling is refined and the family cannot coarsen anyway.
  std::vector<int> targets(leaves.size(), comm_.rank());
  bool moving = false;
  if (mine.siblings) {
    const octree::Key& k = mine.first;
    const int home = partition_.owner(octree::parent(k));
    // The home rank's part of the family must be leaves of this level too.
    const Lead& h = all[std::size_t(std::max(home, 0))];
    bool clear = home < comm_.rank() && h.present && h.tail_siblings && h.last.level == k.level &&
                 octree::parent(h.last) == octree::parent(k);
    for (int j = home + 1; clear && j < comm_.rank(); ++j) {
      const Lead& l = all[std::size_t(j)];
      clear = !l.present || (l.siblings && l.whole && l.first.level == k.level &&
                             octree::parent(l.first) == octree::parent(k));
    }
    if (clear) {
      for (std::size_t p = 0; p < run; ++p) targets[order[p]] = home;
      moving = true;
    }
  }
  if (!comm_.any(moving)) return 0;
  MINIAMR_TIMED(timers_, kLoadBalance);
  const std::int64_t sent = migrate(domain, targets, comm_);
  mesh_changed(domain);
  return sent;
}

std::int64_t StaticRuntime::rebalance(Domain& domain, std::span<const std::int64_t> weights) {
  MINIAMR_TIMED(timers_, kLoadBalance);
  const auto order = sfc::curve_order(domain.leaves, partition_.space());
  std::vector<std::int64_t> along(order.size());
  std::int64_t local = 0;
  for (std::size_t p = 0; p < order.size(); ++p) local += along[p] = weights[order[p]];
  std::int64_t offset = 0;
  MPI_Exscan(&local, &offset, 1, MPI_INT64_T, MPI_SUM, comm_.get());
  if (comm_.rank() == 0) offset = 0;
  const std::int64_t total = comm_.sum(local);
  auto cut = sfc::cut(along, offset, total, comm_.size());
  sfc::keep_families_together(cut, family_starts(domain.leaves, order));
  std::vector<int> targets(order.size());
  for (std::size_t p = 0; p < order.size(); ++p) targets[order[p]] = cut[p];
  const std::int64_t sent = migrate(domain, targets, comm_);
  mesh_changed(domain);
  return sent;
}

}  // namespace miniamr::runtime
