#include "runtime/dynamic_runtime.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <list>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "runtime/clock.hpp"
#include "runtime/halo_messages.hpp"
#include "runtime/sum_reduction.hpp"
#include "runtime/sweep_schedule.hpp"
#include "runtime/trace.hpp"
#include "stencil/plane_sweep.hpp"

namespace miniamr::runtime {

namespace {

constexpr int kTagBase = 301;
// Tags cycle over this many stages: a peer is never more than two stages ahead of a message
// this rank has not received yet (its faces need ours), so tags stay unambiguous.
constexpr std::size_t kTagStages = 16;
constexpr int kMaxVarGroups = 64;  // so tags stay below kTagBase + 64 * 16 * 3
constexpr std::size_t kMaxDeferredBytes = std::size_t(8) << 20;  // per lane (see run_stages)
// From a variable stored compact to the next.
constexpr auto kCompactNext = std::ptrdiff_t(stencil::kCompactCells);

template <class T>
void sort_unique(std::vector<T>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

template <class T>
std::vector<std::vector<T>> reversed(const std::vector<std::vector<T>>& preds) {
  std::vector<std::vector<T>> succ(preds.size());
  for (std::size_t n = 0; n < preds.size(); ++n)
    for (const T p : preds[n]) succ[std::size_t(p)].push_back(T(n));
  return succ;
}

// Requests in flight, each with the id of what it carries.
struct Pending {
  std::vector<MPI_Request> requests;
  std::vector<std::size_t> ids;

  bool empty() const { return requests.empty(); }
  MPI_Request* add(std::size_t id) {
    ids.push_back(id);
    return &requests.emplace_back();
  }
  // The ids of the requests that have completed; those are dropped. `idle`: the caller has
  // nothing else to run.
  std::vector<std::size_t> completed([[maybe_unused]] bool idle) {
    std::vector<std::size_t> out;
    if (requests.empty()) return out;
    std::vector<int> done(requests.size());
    int n = 0;
#ifdef MINIAMR_SIMGRID
    // SMPI 3.32 keeps each request that MPI_Test* completes in a list of its rank that every
    // later completion and computation burst scans, so polling made a simulation grow with the
    // square of its messages (188 s instead of 3 s for two ranks of the expanding sphere).
    // Here requests complete only in MPI_Waitany, once the rank has nothing else to run: its
    // simulated clock then moves to the next arrival, where a polling worker would notice it.
    if (!idle) return out;
    MPI_Waitany(int(requests.size()), requests.data(), &done[0], MPI_STATUS_IGNORE);
    n = done[0] == MPI_UNDEFINED ? 0 : 1;
#else
    MPI_Testsome(int(requests.size()), requests.data(), &n, done.data(), MPI_STATUSES_IGNORE);
#endif
    if (n == MPI_UNDEFINED || n == 0) return out;
    constexpr std::size_t kDone = ~std::size_t(0);
    for (int i = 0; i < n; ++i) {
      std::size_t& id = ids[std::size_t(done[std::size_t(i)])];
      out.push_back(id);
      id = kDone;
    }
    std::size_t w = 0;
    for (std::size_t r = 0; r < ids.size(); ++r) {
      if (ids[r] == kDone) continue;
      requests[w] = requests[r];
      ids[w++] = ids[r];
    }
    requests.resize(w);
    ids.resize(w);
    return out;
  }
  void wait_all() {
    MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    requests.clear();
    ids.clear();
  }
};

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

// The stage graph with consecutive blocks grouped into units; one task per unit and node kind:
// node(u, k) = u * K + k, k < G the Fill of axis group k, k = G the Sweep.
struct DynamicRuntime::Units {
  struct DeferredFace {
    stencil::FaceLink link;  // as the reader sees it
    FaceSlot at;             // in the lane's buffer
  };
  int G = 1;
  std::size_t K = 2;
  std::size_t per_task = 1;
  std::vector<std::size_t> begin;     // unit u holds blocks [begin[u], begin[u + 1])
  std::vector<std::size_t> unit_of;   // per block
  Adjacency<std::size_t> succ_same;   // per node: successors in the same stage
  Adjacency<std::size_t> succ_next;   // per node: successors in the next stage
  std::vector<int> indeg_first;       // missing inputs in the first stage of a run
  std::vector<int> indeg;             // missing inputs in later stages
  Adjacency<std::uint32_t> produces;  // per node: send messages it completes a part of
  Adjacency<std::uint32_t> consumes;  // per node: receive messages its unit reads
  Adjacency<std::size_t> consumers;   // per receive message: its consumer nodes
  std::vector<int> producers;         // per send message: its producer nodes
  // Deferred faces (face-only stencils; run_stages says when): a face whose reader's unit comes
  // after its sender's is packed at the sender's sweep, just before the sender's values are
  // overwritten, into a buffer of its lane, and the reader's fill unpacks it (a level change)
  // or its sweep reads it there (the same level; so also from a sender earlier in its unit). The
  // sender's sweep then no longer waits for that fill, so a unit's sweep can follow its own fill
  // while its blocks are still in cache; every edge of a stage runs from an earlier unit to a later
  // one.
  bool defer = false;
  std::size_t defer_cap = 0;          // what make_units was asked for (the cache key)
  Adjacency<DeferredFace> defer_out;  // per block: its faces for later readers
  Adjacency<FaceSlot> defer_in;       // per block, parallel to its fills (size 0: direct)
  std::size_t deferred_per_var = 0;   // doubles per variable of a lane's deferred buffer
  std::vector<char> defer_consumer;   // per unit: reads a deferred face
  // Face-only stencils: per block, where its sweep reads each ghost face (SweepSchedule's
  // kinds); a face read elsewhere than in the ghost layer is never filled. Domain-boundary
  // faces: the block's own layer next to them. Same-level faces: the message, from another
  // rank; the sender's facing layer, from a sender swept later in the reader's unit; and with
  // deferred faces, the deferred buffer from a sender swept earlier (in an earlier unit or the
  // reader's), the sender's layer from a later unit (whose sweep then waits for the reader's).
  // The fill copies the rest: level changes, and without deferred faces same-level faces from a
  // sender swept earlier in the reader's unit or from another unit.
  std::vector<std::array<FaceRead, 6>> reads;

  std::size_t count() const { return begin.size() - 1; }
  std::size_t nodes() const { return count() * K; }
  std::size_t node(std::size_t unit, std::size_t k) const { return unit * K + k; }
};

namespace {

std::unique_ptr<DynamicRuntime::Units> make_units(const StageGraph& g, std::size_t per_task,
                                                  const stencil::BlockShape& shape,
                                                  std::size_t defer_cap);

}  // namespace

DynamicRuntime::DynamicRuntime(MPI_Comm parent, RuntimeOptions options)
    : MeshRuntime(parent, options) {}

DynamicRuntime::~DynamicRuntime() = default;

std::size_t DynamicRuntime::deferred_faces() const {
  return units_ ? units_->defer_out.total() : 0;
}

std::size_t DynamicRuntime::faces_read_in_place() const {
  if (!units_) return 0;
  std::size_t n = 0;
  for (const auto& faces : units_->reads)
    n += std::size_t(std::ranges::count_if(faces, [](const FaceRead& r) {
      return r.kind != FaceRead::Kind::kGhost && r.kind != FaceRead::Kind::kMirror;
    }));
  return n;
}

void DynamicRuntime::plans_changed(const Domain&) {
  units_.reset();
}

// Everything one batch of tasks shares (run_batch). Work is indexed by lane = stage * VG +
// variable group: the variables of the 7- and 27-point stencils are independent, so each comm
// group of variables has a graph of its own (and its own messages), and a group can run stages
// ahead of another while its data stay in cache. Counters are atomics; what only the holder of
// the progress token touches is marked so.
struct DynamicRuntime::Batch {
  struct Message {
    std::vector<double> data;
    std::atomic<int> remaining{0};  // sends: faces' producers to go; receives: consumers to go
    std::once_flag allocated;
  };

  Batch(DynamicRuntime& rt_, Domain& domain_, std::span<const StageWork> stages_,
        const StageGraph& graph_, const Units& units_, int threads_, int var_groups,
        int group_vars_)
      : rt(rt_),
        domain(domain_),
        stages(stages_),
        graph(graph_),
        units(units_),
        S(stages_.size()),
        VG(std::size_t(var_groups)),
        group_vars(group_vars_),
        L(S * VG),
        N(units_.nodes()),
        compact(rt_.compact_.loaded()),
        count(new std::atomic<int>[L * N]),
        sends(new Message[L * graph_.sends.size()]),
        recvs(new Message[L * graph_.recvs.size()]),
        deferred(new Message[L]),
        sweeps_left(new std::atomic<int>[S]),
        sums_ready(new std::atomic<bool>[S]),
        block_sums(S),
        totals(S),
        unit_seconds(VG * units_.count(), 0.0),
        busy(std::size_t(threads_), 0.0),
        rng(rt_.options_.order_seed) {}

  DynamicRuntime& rt;
  Domain& domain;
  std::span<const StageWork> stages;
  const StageGraph& graph;
  const Units& units;
  const std::size_t S, VG;
  const int group_vars;  // variables per group (the last may hold fewer)
  const std::size_t L, N;
  const bool compact;  // the variables are stored compact (DynamicRuntime::compact_)
  std::unique_ptr<std::atomic<int>[]> count;  // per lane and node: inputs still missing
  std::atomic<std::int64_t> remaining{0};     // nodes not yet run
  std::unique_ptr<Message[]> sends, recvs;    // per lane and message
  std::unique_ptr<Message[]> deferred;        // per lane: its deferred faces
  // Deferred-face buffers of lanes that are done, for later lanes (a lane's buffer can be
  // megabytes, and fresh memory costs a page fault per 4 KiB).
  std::mutex spare_mutex;
  std::vector<std::vector<double>> spare;
  std::unique_ptr<std::atomic<int>[]> sweeps_left;  // per stage: sweeps not yet run
  std::unique_ptr<std::atomic<bool>[]> sums_ready;  // per checksum stage: all sweeps done
  std::vector<std::vector<double>> block_sums;      // per checksum stage: block x variable
  std::atomic<int> reductions_left{0};
  std::vector<std::vector<double>> totals;
  std::vector<double> unit_seconds;  // per variable group and unit: time in its tasks
  std::vector<double> busy;          // per worker: seconds in tasks

  // The progress token and what only its holder touches.
  std::mutex mpi;
  Pending receiving, sending;  // ids: lane * messages + message
  std::size_t next_reduction = 0;
  std::list<std::pair<std::size_t, SumReduction>> reductions;

  std::mutex queue_mutex;
  std::vector<std::size_t> send_queue;  // messages whose last face is packed
  std::atomic<bool> queued{false};

  // Seeded random order (testing).
  std::mutex pool_mutex;
  std::vector<std::size_t> pool;
  std::mt19937_64 rng;

  std::size_t stage_of(std::size_t lane) const { return lane / VG; }
  // The variables of a lane: its group of the stage's variables.
  stencil::VarRange vars(std::size_t lane) const {
    const StageWork& w = stages[stage_of(lane)];
    if (VG == 1) return w.vars;
    const int v0 = w.vars.v0 + int(lane % VG) * group_vars;
    return {v0, std::min(w.vars.v1, v0 + group_vars)};
  }
  int tag(std::size_t lane, int group) const {
    return kTagBase + int(((lane % VG) * kTagStages + stage_of(lane) % kTagStages) * 3) + group;
  }
  Message& send(std::size_t lane, std::size_t m) { return sends[lane * graph.sends.size() + m]; }
  Message& recv(std::size_t lane, std::size_t m) { return recvs[lane * graph.recvs.size() + m]; }
  // The part of a lane's deferred buffer that holds the face at `f`.
  std::span<double> deferred_face(std::size_t lane, const FaceSlot& f) {
    const auto nv = std::size_t(vars(lane).count());
    return std::span(deferred[lane].data).subspan(f.slot * nv, f.size * nv);
  }
  // Every node has run, every reduction is complete and every message has been posted (a
  // worker that packed a message's last face may have found the token taken).
  bool finished() const {
    return remaining.load() == 0 && reductions_left.load() == 0 && !queued.load();
  }
  bool traced() const { return rt.trace_ != nullptr && rt.trace_->enabled(); }
  int worker() const { return TaskPool::worker(); }

  void post_receive(std::size_t lane, std::size_t m);
  void queue_send(std::size_t lane, std::size_t m);
  void pack(std::size_t unit, int group, std::size_t lane);
  void fill(std::size_t unit, int group, std::size_t lane);
  void sweep(std::size_t unit, std::size_t lane);
  // The ghosts of group `group` of block b.
  void fill_block(std::size_t b, int group, std::size_t lane);
  // Swept compact: fill f, the i-th of block b, into its dense ghost layer.
  void fill_layer(std::size_t b, const GhostFill& f, std::size_t i, std::size_t lane);
  // Swept compact: where variables `v` start in the dense ghost layers (which hold the loaded
  // ones).
  std::size_t ghost_var(stencil::VarRange v) const {
    return std::size_t(v.v0 - rt.compact_.vars().v0);
  }
  // The unit (its fills of `group` and its sweep) is done with their messages and deferred
  // faces.
  void release_inputs(std::size_t unit, int group, std::size_t lane);
  // Runs node n of a lane; appends the nodes it made ready.
  void run(std::size_t id, std::vector<std::size_t>& ready);
  // Drives MPI when the token is free (or always, when `wait`); appends nodes made ready.
  void progress(bool wait, std::vector<std::size_t>& ready);
  void spawn(TaskGroup& tg, std::size_t id);
  void spawn_all(TaskGroup& tg, std::vector<std::size_t>& ready) {
    for (const std::size_t id : ready) spawn(tg, id);
    ready.clear();
  }
  void make_ready(std::size_t lane, std::size_t n, std::vector<std::size_t>& ready) {
    if (count[lane * N + n].fetch_sub(1, std::memory_order_acq_rel) == 1)
      ready.push_back(lane * N + n);
  }
};

void DynamicRuntime::Batch::post_receive(std::size_t lane, std::size_t m) {
  const MessageLayout& msg = graph.recvs[m];
  Message& r = recv(lane, m);
  r.data.resize(msg.size(vars(lane).count()));
  r.remaining.store(int(units.consumers[m].size()));
  MPI_Irecv(r.data.data(), int(r.data.size()), MPI_DOUBLE, msg.peer, tag(lane, msg.group),
            rt.comm_.get(), receiving.add(lane * graph.recvs.size() + m));
}

void DynamicRuntime::Batch::queue_send(std::size_t lane, std::size_t m) {
  const std::lock_guard lock(queue_mutex);
  send_queue.push_back(lane * graph.sends.size() + m);
  queued.store(true, std::memory_order_release);
}

void DynamicRuntime::Batch::pack(std::size_t unit, int group, std::size_t lane) {
  const stencil::VarRange v = vars(lane);
  for (std::size_t b = units.begin[unit]; b < units.begin[unit + 1]; ++b) {
    for (const PackedFace& pf : graph.packs[graph.node(b, group)]) {
      Message& msg = send(lane, pf.message);
      const MessageLayout& layout = graph.sends[pf.message];
      // The real size, even when nothing is packed into it (modelled compute).
      std::call_once(msg.allocated, [&] { msg.data.resize(layout.size(v.count())); });
      if (rt.kernels_.modelled()) continue;
      const FaceSlice& face = layout.faces[pf.face];
      if (compact)
        rt.kernels_.native().pack_compact(rt.compact_.var(face.block, v.v0), kCompactNext,
                                          domain.shape, face.link, v,
                                          face_slice(face, v, v, std::span(msg.data)));
      else
        pack_face(rt.kernels_.native(), domain, face, v, graph.edges, msg.data);
    }
  }
  const std::size_t producer = group == 0 ? units.node(unit, std::size_t(units.G))
                                          : units.node(unit, std::size_t(group - 1));
  for (const std::uint32_t m : units.produces[producer])
    if (send(lane, m).remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) queue_send(lane, m);
}

void DynamicRuntime::Batch::fill_block(std::size_t b, int group, std::size_t lane) {
  const stencil::VarRange v = vars(lane);
  const stencil::KernelSet& k = rt.kernels_.native();
  stencil::Block& dst = domain.blocks[b];
  const auto fills = graph.fills[graph.node(b, group)];
  for (std::size_t i = 0; i < fills.size(); ++i) {
    const GhostFill& f = fills[i];
    if (!graph.edges && units.reads[b][std::size_t(f.link.face)].kind != FaceRead::Kind::kGhost)
      continue;  // the sweep reads it in place
    if (compact) {
      fill_layer(b, f, i, lane);
      continue;
    }
    switch (f.kind) {
      case GhostFill::Kind::kLocal:
        if (units.defer && units.defer_in[b][i].size > 0)
          k.unpack(dst, f.link, v, false, deferred_face(lane, units.defer_in[b][i]));
        else
          k.fill_direct(dst, domain.blocks[f.src], f.link, v, graph.edges);
        break;
      case GhostFill::Kind::kBoundary:
        k.fill_boundary(dst, f.link.face, v, graph.edges);
        break;
      case GhostFill::Kind::kRemote:
        unpack_face(k, domain, graph.recvs[f.message].faces[f.face], v, v, graph.edges,
                    recv(lane, f.message).data);
        break;
    }
  }
}

void DynamicRuntime::Batch::fill_layer(std::size_t b, const GhostFill& f, std::size_t i,
                                       std::size_t lane) {
  // The padded forms' operations into a dense ghost layer, from compact senders.
  const stencil::VarRange v = vars(lane);
  const stencil::KernelSet& k = rt.kernels_.native();
  double* layer = rt.ghost_layers_.layer(b, f.link.face, ghost_var(v));
  const auto layer_next = std::ptrdiff_t(stencil::kCompactFaceCells);
  switch (f.kind) {
    case GhostFill::Kind::kLocal:
      if (units.defer && units.defer_in[b][i].size > 0)
        k.unpack_layer(layer, layer_next, domain.shape, f.link, v,
                       deferred_face(lane, units.defer_in[b][i]));
      else
        k.fill_layer(layer, layer_next, rt.compact_.var(f.src, v.v0), kCompactNext, domain.shape,
                     f.link, v);
      break;
    case GhostFill::Kind::kBoundary:  // read in place (kMirror), never filled
      assert(false);
      break;
    case GhostFill::Kind::kRemote: {
      const FaceSlice& face = graph.recvs[f.message].faces[f.face];
      k.unpack_layer(layer, layer_next, domain.shape, f.link, v,
                     face_slice(face, v, v, std::span<const double>(recv(lane, f.message).data)));
      break;
    }
  }
}

void DynamicRuntime::Batch::release_inputs(std::size_t unit, int group, std::size_t lane) {
  // The last consumer of a buffer frees it.
  if (units.defer && units.defer_consumer[unit] &&
      deferred[lane].remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    const std::lock_guard lock(spare_mutex);
    spare.push_back(std::move(deferred[lane].data));
  }
  for (const std::uint32_t m : units.consumes[units.node(unit, std::size_t(group))]) {
    Message& r = recv(lane, m);
    if (r.remaining.fetch_sub(1, std::memory_order_acq_rel) == 1)
      std::vector<double>().swap(r.data);
  }
}

void DynamicRuntime::Batch::fill(std::size_t unit, int group, std::size_t lane) {
  // Modelled compute: the calibrated cost per update covers the ghost fills too.
  if (!rt.kernels_.modelled())
    for (std::size_t b = units.begin[unit]; b < units.begin[unit + 1]; ++b)
      fill_block(b, group, lane);
}

void DynamicRuntime::Batch::sweep(std::size_t unit, std::size_t lane) {
  const std::size_t s = stage_of(lane);
  const StageWork& work = stages[s];
  const stencil::VarRange v = vars(lane);
  const auto nv = std::size_t(work.vars.count());
  const auto lane_vars = std::size_t(v.count());
  const auto first = std::size_t(v.v0 - work.vars.v0);
  std::vector<double>& scratch = rt.scratch_[std::size_t(worker())];
  const bool packs = units.defer && !rt.kernels_.modelled();
  if (packs)
    std::call_once(deferred[lane].allocated, [&] {
      {
        const std::lock_guard lock(spare_mutex);
        if (!spare.empty()) {
          deferred[lane].data = std::move(spare.back());
          spare.pop_back();
        }
      }
      deferred[lane].data.resize(units.deferred_per_var * lane_vars);
    });
  for (std::size_t b = units.begin[unit]; b < units.begin[unit + 1]; ++b) {
    // b's old values for its readers in later units, before the sweep overwrites them.
    if (packs)
      for (const Units::DeferredFace& f : units.defer_out[b]) {
        if (compact)
          rt.kernels_.native().pack_compact(rt.compact_.var(b, v.v0), kCompactNext, domain.shape,
                                            f.link, v, deferred_face(lane, f.at));
        else
          rt.kernels_.native().pack(domain.blocks[b], f.link, v, false, deferred_face(lane, f.at));
      }
    const std::span<double> sums = work.checksum
                                       ? std::span(block_sums[s]).subspan(b * nv + first, lane_vars)
                                       : std::span<double>();
    if (graph.edges || rt.kernels_.modelled()) {  // modelled: no buffers, nothing read
      rt.kernels_.sweep(domain.blocks[b], work, v, scratch, sums);
      continue;
    }
    // A face-only sweep reads its faces where Units::reads says.
    const auto packed = [&](const FaceRead& r) {
      const auto size = std::ptrdiff_t(r.size);
      if (r.kind == FaceRead::Kind::kDeferred)
        return PackedLayer{deferred[lane].data.data() + r.from * lane_vars, size};
      return PackedLayer{recv(lane, r.from).data.data() + r.at * lane_vars, size};
    };
    if (compact) {
      stencil::GhostLayers layers = compact_read_layers(rt.compact_, rt.ghost_layers_, ghost_var(v),
                                                        b, units.reads[b], v.v0, packed);
      rt.kernels_.sweep_compact(rt.compact_.var(b, v.v0), work, v, scratch, sums, layers);
      continue;
    }
    const stencil::GhostLayers layers = read_layers(domain.blocks, b, units.reads[b], v.v0, packed);
    rt.kernels_.sweep(domain.blocks[b], work, v, scratch, sums, &layers);
  }
  // Counted once per unit rather than per block (stage_kernels.hpp).
  if (compact)
    rt.kernels_.count_compact(std::int64_t(units.begin[unit + 1] - units.begin[unit]) *
                              std::int64_t(lane_vars));
  // The messages and deferred faces that the unit's fills and sweep read are done with.
  for (int group = 0; group < units.G; ++group) release_inputs(unit, group, lane);
}

void DynamicRuntime::Batch::run(std::size_t id, std::vector<std::size_t>& ready) {
  const std::size_t lane = id / N, n = id % N, s = stage_of(lane);
  const std::size_t unit = n / units.K, k = n % units.K;
  const bool is_sweep = k == std::size_t(units.G);
  const auto t0 = Clock::now();
  const double ts = traced() ? rt.trace_->now_us() : 0.0;
  if (is_sweep)
    sweep(unit, lane);
  else
    fill(unit, int(k), lane);
  double dt = seconds_since(t0);
  if (rt.slowdown_.active()) {
    rt.slowdown_.after(
        dt, (std::uint64_t(stages[s].calc_stage) << 32) ^ (std::uint64_t(vars(lane).v0) << 24) ^ n);
    dt = seconds_since(t0);
  }
  busy[std::size_t(worker())] += dt;
  // A unit's nodes in one variable group run one after the other (each needs the previous),
  // so this is race-free.
  unit_seconds[(lane % VG) * units.count() + unit] += dt;
  const std::size_t first = units.begin[unit], last = units.begin[unit + 1];
  if (traced()) {
    const stencil::VarRange v = vars(lane);
    rt.trace_->record({is_sweep ? "sweep" : "fill",
                       "task",
                       ts,
                       dt * 1e6,
                       worker(),
                       {{{"stage", stages[s].calc_stage},
                         {"blocks", std::int64_t(last - first)},
                         {"var", v.v0},
                         {"axis_group", is_sweep ? -1 : std::int64_t(k)}}},
                       "block",
                       octree::to_string(domain.leaves[first])});
  }
  // Faces for other ranks, packed the moment they exist.
  if (is_sweep && s + 1 < S) pack(unit, 0, lane + VG);
  if (!is_sweep && int(k) + 1 < units.G) pack(unit, int(k) + 1, lane);

  for (const std::size_t c : units.succ_same[n]) make_ready(lane, c, ready);
  if (s + 1 < S)
    for (const std::size_t c : units.succ_next[n]) make_ready(lane + VG, c, ready);
  if (is_sweep && stages[s].checksum && sweeps_left[s].fetch_sub(1, std::memory_order_acq_rel) == 1)
    sums_ready[s].store(true, std::memory_order_release);
  remaining.fetch_sub(1, std::memory_order_acq_rel);
  progress(false, ready);
}

void DynamicRuntime::Batch::progress(bool wait, std::vector<std::size_t>& ready) {
  std::unique_lock lock(mpi, std::defer_lock);
  if (wait) {
    lock.lock();
  } else if (!lock.try_lock()) {
    return;
  }
  const MPI_Comm comm = rt.comm_.get();
  // Messages whose last face is packed.
  if (queued.exchange(false, std::memory_order_acq_rel)) {
    std::vector<std::size_t> out;
    {
      const std::lock_guard q(queue_mutex);
      out.swap(send_queue);
    }
    for (const std::size_t id : out) {
      const std::size_t lane = id / graph.sends.size(), m = id % graph.sends.size();
      const MessageLayout& layout = graph.sends[m];
      Message& msg = send(lane, m);
      const double t = traced() ? rt.trace_->now_us() : 0.0;
      MPI_Isend(msg.data.data(), int(msg.data.size()), MPI_DOUBLE, layout.peer,
                tag(lane, layout.group), comm, sending.add(id));
      if (traced())
        rt.trace_->record({"send",
                           "message",
                           t,
                           rt.trace_->now_us() - t,
                           worker(),
                           {{{"stage", stages[stage_of(lane)].calc_stage},
                             {"peer", layout.peer},
                             {"bytes", std::int64_t(msg.data.size() * sizeof(double))},
                             {"var", vars(lane).v0}}},
                           {},
                           {}});
    }
  }
  // Checksum reductions start in stage order, the same on every rank.
  while (next_reduction < S) {
    const std::size_t s = next_reduction;
    if (!stages[s].checksum) {
      ++next_reduction;
      continue;
    }
    if (!sums_ready[s].load(std::memory_order_acquire)) break;
    const auto nv = std::size_t(stages[s].vars.count());
    std::vector<stencil::ExactSum> sums(nv);
    for (std::size_t i = 0; i < block_sums[s].size(); ++i) sums[i % nv].add(block_sums[s][i]);
    reductions.emplace_back(s, SumReduction(rt.comm_, sums));
    ++next_reduction;
  }
  // Arrivals make their consumers ready.
  const auto arrived = receiving.completed(wait);
  const double t = traced() && !arrived.empty() ? rt.trace_->now_us() : 0.0;
  for (const std::size_t id : arrived) {
    const std::size_t lane = id / graph.recvs.size(), m = id % graph.recvs.size();
    if (traced())
      rt.trace_->record({"recv",
                         "message",
                         t,
                         0.0,
                         worker(),
                         {{{"stage", stages[stage_of(lane)].calc_stage},
                           {"peer", graph.recvs[m].peer},
                           {"bytes", std::int64_t(recv(lane, m).data.size() * sizeof(double))},
                           {"var", vars(lane).v0}}},
                         {},
                         {}});
    for (const std::size_t c : units.consumers[m]) make_ready(lane, c, ready);
    if (lane + 2 * VG < L) post_receive(lane + 2 * VG, m);
  }
  // Completed sends free their buffers.
  for (const std::size_t id : sending.completed(wait && arrived.empty() && receiving.empty()))
    std::vector<double>().swap(sends[id].data);
  for (auto it = reductions.begin(); it != reductions.end();) {
    if (!it->second.test()) {
      ++it;
      continue;
    }
    totals[it->first] = it->second.wait();
    it = reductions.erase(it);
    reductions_left.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void DynamicRuntime::Batch::spawn(TaskGroup& tg, std::size_t id) {
  if (rt.options_.order_seed == 0) {
    tg.run([this, &tg, id] {
      std::vector<std::size_t> ready;
      run(id, ready);
      spawn_all(tg, ready);
    });
    return;
  }
  // Testing: every ready node joins a pool and each task runs one drawn at random.
  {
    const std::lock_guard lock(pool_mutex);
    pool.push_back(id);
  }
  tg.run([this, &tg] {
    std::size_t picked = 0;
    {
      const std::lock_guard lock(pool_mutex);
      const std::size_t i = std::uniform_int_distribution<std::size_t>(0, pool.size() - 1)(rng);
      picked = pool[i];
      pool[i] = pool.back();
      pool.pop_back();
    }
    std::vector<std::size_t> ready;
    run(picked, ready);
    spawn_all(tg, ready);
  });
}

std::vector<std::vector<double>> DynamicRuntime::run_stages(Domain& domain,
                                                            std::span<const StageWork> stages) {
  if (stages.empty()) return {};
  const auto wall0 = Clock::now();
  const int T = threads();
  scratch_.resize(std::size_t(T));
  for (auto& s : scratch_) s.resize(stencil::stencil_scratch_size(domain.shape));
  if (!pool_ || pool_->threads() != T) pool_ = std::make_unique<TaskPool>(T);
  if (trace_ != nullptr) trace_->set_threads(T);

  // Variable groups: the comm groups of the stage cut to cache chunks, when the stencil keeps
  // variables apart (the variable-work kernels mix a block's variables, so they run all in one).
  const StageWork& first = stages.front();
  int group = first.group > 0 ? std::min(first.group, first.vars.count()) : first.vars.count();
  group = std::min(group, chunk_vars(domain, first));
  // Tags count variable groups and MPI promises only 32767 of them: past kMaxVarGroups the
  // groups hold more variables (grouping never changes results).
  group = std::max(group, (first.vars.count() + kMaxVarGroups - 1) / kMaxVarGroups);
  const bool split = first.stencil != 0 && group < first.vars.count() &&
                     std::ranges::all_of(stages, [&](const StageWork& w) {
                       return w.vars.v0 == first.vars.v0 && w.vars.v1 == first.vars.v1 &&
                              w.group == first.group && w.stencil != 0;
                     });
  const int VG = split ? (first.vars.count() + group - 1) / group : 1;

  // Task size from the measured time per block: about kTargetTaskSeconds, but enough tasks
  // for every worker to have several.
  const bool edges = first.reads_edges();
  const StageGraph& g = graph(domain, edges);
  std::size_t per_task = 1;
  if (block_seconds_ > 0) {
    const double per_node = block_seconds_ / double(VG) / double(g.groups + 1);
    per_task = std::size_t(std::max(1.0, std::round(kTargetTaskSeconds / per_node)));
  }
  const std::size_t parallel_cap =
      std::max<std::size_t>(1, g.blocks * std::size_t(VG) / (8 * std::size_t(T)));
  per_task = std::min(per_task, parallel_cap);
  // Deferred faces (see Units) make the units of a lane's stage run one after the other: with
  // one worker that costs nothing, and with several the lanes of at least four variable groups
  // per worker keep them busy; otherwise every unit's fill and sweep stay apart, so that the
  // units of a stage can run side by side.
  //
  // A lane holds its deferred faces from the first sweep of its stage to the last, and a
  // few lanes are in flight at a time: a lane whose faces would take more than
  // kMaxDeferredBytes (all variables of a large mesh in one lane) does without.
  const auto lane_vars = std::size_t(VG == 1 ? first.vars.count() : group);
  const bool workers_busy = T == 1 || VG >= 4 * T;
  const std::size_t defer_cap =
      workers_busy ? kMaxDeferredBytes / sizeof(double) / std::max<std::size_t>(1, lane_vars) : 0;
  if (!units_ || units_->G != g.groups || units_->per_task != per_task ||
      units_->defer_cap != defer_cap) {
    units_ = make_units(g, per_task, domain.shape, defer_cap);
    ghost_layers_.number(units_->reads);
  }
  blocks_per_task_ = per_task;
  const Units& u = *units_;
  if (domain.cost.size() != domain.blocks.size()) domain.cost.resize(domain.blocks.size(), 0.0);

  // 7-point stages on one worker sweep their variables stored compact, as the static mapper's
  // do: one variable group at a time, a batch of tasks of its own, copied in before its stages
  // and back after them. One group per batch kept the copies smallest and ran fastest (against
  // two, four and eight: README, Performance). Batches change the messages and the reductions,
  // so either every rank sweeps compact or none does (collective).
  const bool compact = !edges && std::ranges::all_of(stages, [&](const StageWork& w) {
    return w.stencil == 7 && w.vars.v0 == first.vars.v0 && w.vars.v1 == first.vars.v1;
  }) && comm_.max(std::int64_t(T == 1 && kernels_.compact(domain.shape) ? 0 : 1)) == 0;
  Measured measured{std::vector<double>(u.count(), 0.0), 0.0};
  double copies = 0;  // seconds copying variables in and out of compact storage
  std::vector<std::vector<double>> totals;
  if (!compact) {
    totals = run_batch(domain, stages, VG, group, measured);
  } else {
    const stencil::VarRange all = first.vars;
    std::vector<StageWork> part_stages(stages.begin(), stages.end());
    totals.resize(stages.size());
    for (std::size_t s = 0; s < stages.size(); ++s)
      if (stages[s].checksum) totals[s].resize(std::size_t(all.count()));
    for (int v0 = all.v0; v0 < all.v1; v0 += group) {
      const stencil::VarRange part{v0, std::min(all.v1, v0 + group)};
      for (StageWork& w : part_stages) w.vars = part;
      const stencil::StoredOnExit stored{compact_, domain.blocks};  // by an error too
      auto t0 = Clock::now();
      compact_.load(domain.blocks, part);
      ghost_layers_.resize(std::size_t(part.count()));
      copies += seconds_since(t0);
      const auto sums = run_batch(domain, part_stages, 1, group, measured);
      t0 = Clock::now();
      compact_.store(domain.blocks);
      copies += seconds_since(t0);
      for (std::size_t s = 0; s < stages.size(); ++s)
        if (stages[s].checksum) std::ranges::copy(sums[s], totals[s].begin() + (part.v0 - all.v0));
    }
  }

  // Accounting: compute is the workers' average busy time and the compact copies, communicate
  // the rest of the wall.
  const double busy = measured.busy;
  const std::size_t S = stages.size();
  const double wall = seconds_since(wall0);
  timers_.add(Phase::kCompute, busy / T + copies);
  timers_.add(Phase::kCommunicate, std::max(0.0, wall - busy / T - copies));
  // Each block's cost record: its unit's time per stage, shared by the unit's blocks.
  for (std::size_t unit = 0; unit < u.count(); ++unit) {
    const std::size_t n = u.begin[unit + 1] - u.begin[unit];
    for (std::size_t blk = u.begin[unit]; blk < u.begin[unit + 1]; ++blk)
      domain.cost[blk] = blend_cost(domain.cost[blk], measured.unit_seconds[unit] / double(S * n));
  }
  if (g.blocks > 0) {
    const double per_block = busy / double(g.blocks * S);
    block_seconds_ = block_seconds_ == 0 ? per_block : 0.5 * block_seconds_ + 0.5 * per_block;
  }
  return totals;
}

std::vector<std::vector<double>> DynamicRuntime::run_batch(Domain& domain,
                                                           std::span<const StageWork> stages,
                                                           int var_groups, int group_vars,
                                                           Measured& measured) {
  const int T = threads();
  const StageGraph& g = graph(domain, stages.front().reads_edges());
  const Units& u = *units_;
  Batch b(*this, domain, stages, g, u, T, var_groups, group_vars);
  const std::size_t S = stages.size(), L = b.L, N = u.nodes(), VG = b.VG;
  const auto defer_consumers = int(std::ranges::count(u.defer_consumer, 1));
  for (std::size_t lane = 0; lane < L; ++lane) {
    for (std::size_t n = 0; n < N; ++n)
      b.count[lane * N + n].store(lane < std::size_t(VG) ? u.indeg_first[n] : u.indeg[n],
                                  std::memory_order_relaxed);
    for (std::size_t m = 0; m < g.sends.size(); ++m)
      b.send(lane, m).remaining.store(u.producers[m], std::memory_order_relaxed);
    b.deferred[lane].remaining.store(defer_consumers, std::memory_order_relaxed);
  }
  for (std::size_t s = 0; s < S; ++s) {
    b.sweeps_left[s].store(int(u.count() * VG), std::memory_order_relaxed);
    b.sums_ready[s].store(u.count() == 0, std::memory_order_relaxed);
    if (stages[s].checksum) {
      b.block_sums[s].assign(g.blocks * std::size_t(stages[s].vars.count()), 0.0);
      b.reductions_left.fetch_add(1, std::memory_order_relaxed);
    }
  }
  b.remaining.store(std::int64_t(L * N));

  std::vector<std::size_t> ready;
  {
    const std::lock_guard lock(b.mpi);
    for (std::size_t lane = 0; lane < std::min(L, 2 * std::size_t(VG)); ++lane)
      for (std::size_t m = 0; m < g.recvs.size(); ++m) b.post_receive(lane, m);
  }
  // The first stage's faces come from before this run: pack them now, unit by unit. The
  // last variable group is spawned first, so the first one runs first (a worker pops its own
  // newest task).
  for (std::size_t vg = std::size_t(VG); vg-- > 0;) {
    for (std::size_t unit = 0; unit < u.count(); ++unit) b.pack(unit, 0, vg);
    for (std::size_t n = 0; n < N; ++n)
      if (u.indeg_first[n] == 0) ready.push_back(vg * N + n);
  }

  pool_->execute([&] {
    TaskGroup tg;
    b.spawn_all(tg, ready);
    for (;;) {
      tg.wait();
      if (b.finished()) break;
      // Nothing to run here until a message or a reduction completes: time to map storage for
      // the next refinement (block_pool.hpp). Only this thread touches the pool during a batch.
      b.progress(true, ready);
      if (ready.empty() && !domain.spare.map_ahead(domain.shape, domain.blocks.size()))
        std::this_thread::yield();
      b.spawn_all(tg, ready);
    }
  });
  b.sending.wait_all();

  for (const double x : b.busy) measured.busy += x;
  for (std::size_t unit = 0; unit < u.count(); ++unit)
    for (std::size_t vg = 0; vg < std::size_t(VG); ++vg)
      measured.unit_seconds[unit] += b.unit_seconds[vg * u.count() + unit];
  return std::move(b.totals);
}

namespace {

// defer_cap: the most doubles per variable that deferred faces may take (0: none deferred).
std::unique_ptr<DynamicRuntime::Units> make_units(const StageGraph& g, std::size_t per_task,
                                                  const stencil::BlockShape& shape,
                                                  std::size_t defer_cap) {
  using DeferredFace = DynamicRuntime::Units::DeferredFace;
  auto u = std::make_unique<DynamicRuntime::Units>();
  u->G = g.groups;
  u->K = std::size_t(g.groups) + 1;
  u->per_task = per_task;
  u->defer_cap = defer_cap;
  u->defer = defer_cap > 0 && g.groups == 1;
  for (std::size_t b = 0; b < g.blocks; b += per_task) u->begin.push_back(b);
  u->begin.push_back(g.blocks);
  u->unit_of.resize(g.blocks);
  for (std::size_t x = 0; x + 1 < u->begin.size(); ++x)
    for (std::size_t b = u->begin[x]; b < u->begin[x + 1]; ++b) u->unit_of[b] = x;
  const std::size_t U = u->count(), N = u->nodes();
  const auto G = std::size_t(g.groups);

  std::vector<std::vector<std::size_t>> same(N), prev(N);
  std::vector<std::vector<std::uint32_t>> produces(N), consumes(N);
  // Deferred faces: every on-rank face whose sender's unit comes before its reader's, in the
  // order in which one worker runs them: units whose ghosts are all on this rank first (as the
  // static runtime sweeps them), so that a unit waiting for a message holds up no other.
  std::vector<std::size_t> order;
  if (u->defer) {
    order.resize(U);
    for (std::size_t x = 0; x < U; ++x) {
      bool remote = false;
      for (std::size_t b = u->begin[x]; b < u->begin[x + 1]; ++b) remote |= g.needs_remote[b] != 0;
      order[x] = (remote ? U : 0) + x;
    }
  }
  const auto before = [&](std::size_t y, std::size_t x) { return order[y] < order[x]; };
  if (u->defer) {
    std::vector<std::vector<DeferredFace>> out(g.blocks);
    std::vector<std::vector<FaceSlot>> in(g.blocks);
    std::vector<char> consumer(U, 0);
    std::size_t per_var = 0;
    for (std::size_t b = 0; b < g.blocks; ++b) {
      for (const GhostFill& f : g.fills[b]) {
        in[b].push_back({});
        if (f.kind != GhostFill::Kind::kLocal) continue;
        const std::size_t x = u->unit_of[b], y = u->unit_of[f.src];
        // A sender earlier in the reader's own unit too, for a same-level face: its sweep packs
        // the face before the reader's sweep reads it (a level change is filled, before both).
        const bool earlier_here =
            x == y && f.src < b && f.link.relation == stencil::GhostRelation::kSameLevel;
        if (!before(y, x) && !earlier_here) continue;
        in[b].back() = append_face_slot(per_var, shape, f.link);
        out[f.src].push_back({f.link, in[b].back()});
        consumer[u->unit_of[b]] = 1;
      }
    }
    if (per_var <= defer_cap) {
      u->defer_out = Adjacency<DeferredFace>(out);
      u->defer_in = Adjacency<FaceSlot>(in);
      u->deferred_per_var = per_var;
      u->defer_consumer = std::move(consumer);
    } else {
      u->defer = false;  // too large: every face is read directly
    }
  }
  if (!g.edges) {
    using Read = FaceRead::Kind;
    u->reads.resize(g.blocks);
    for (std::size_t b = 0; b < g.blocks; ++b) {
      const auto fills = g.fills[g.node(b, 0)];
      for (std::size_t i = 0; i < fills.size(); ++i) {
        const GhostFill& f = fills[i];
        FaceRead& read = u->reads[b][std::size_t(f.link.face)];
        if (f.kind == GhostFill::Kind::kBoundary) {
          read.kind = Read::kMirror;
          continue;
        }
        if (f.link.relation != stencil::GhostRelation::kSameLevel) continue;
        if (f.kind == GhostFill::Kind::kRemote) {
          const FaceSlice& face = g.recvs[f.message].faces[f.face];
          read = {Read::kMessage, f.message, face.offset, face.per_var, {}};
          continue;
        }
        const std::size_t x = u->unit_of[b], y = u->unit_of[f.src];
        if (u->defer && u->defer_in[b][i].size > 0) {
          read = {Read::kDeferred, u->defer_in[b][i].slot, 0, u->defer_in[b][i].size, {}};
        } else if (x == y) {  // the unit sweeps its blocks in order
          if (f.src > b) read = {Read::kNeighbour, f.src, 0, 0, {}};
        } else if (u->defer && before(x, y)) {  // units run in one order with deferred faces
          read = {Read::kNeighbour, f.src, 0, 0, {}};
          // The sender's sweep comes after the reader's (as the reader's face from it, which
          // is deferred, already makes it).
          same[u->node(y, G)].push_back(u->node(x, G));
        }
      }
    }
    place_reads(u->reads, shape);
  }
  for (std::size_t x = 0; x < U; ++x) {
    for (std::size_t grp = 0; grp < G; ++grp) {
      // The units whose blocks Fill(x, grp) reads, x included.
      std::vector<std::size_t> from{x};
      for (std::size_t b = u->begin[x]; b < u->begin[x + 1]; ++b)
        for (const std::size_t n : g.reads[g.node(b, int(grp))]) from.push_back(u->unit_of[n]);
      sort_unique(from);
      const std::size_t fill = u->node(x, grp);
      for (const std::size_t y : from) {
        if (grp == 0)
          prev[fill].push_back(u->node(y, G));  // their new values, from the previous stage
        else
          same[fill].push_back(u->node(y, grp - 1));  // their ghosts of the earlier axes
        if (u->defer && before(y, x))
          same[fill].push_back(u->node(y, G));  // their sweep packs what this fill reads
        else
          same[u->node(y, G)].push_back(fill);  // their sweep overwrites what this fill reads
      }
    }
  }
  std::vector<std::vector<std::size_t>> consumers(g.recvs.size());
  for (std::size_t m = 0; m < g.recvs.size(); ++m) {
    for (const FaceSlice& f : g.recvs[m].faces)
      consumers[m].push_back(u->node(u->unit_of[f.block], std::size_t(g.recvs[m].group)));
    sort_unique(consumers[m]);
    for (const std::size_t c : consumers[m]) consumes[c].push_back(std::uint32_t(m));
  }
  u->producers.resize(g.sends.size());
  for (std::size_t m = 0; m < g.sends.size(); ++m) {
    std::vector<std::size_t> from;
    const int grp = g.sends[m].group;
    for (const FaceSlice& f : g.sends[m].faces) {
      const std::size_t x = u->unit_of[f.block];
      from.push_back(grp == 0 ? u->node(x, G) : u->node(x, std::size_t(grp - 1)));
    }
    sort_unique(from);
    u->producers[m] = int(from.size());
    for (const std::size_t p : from) produces[p].push_back(std::uint32_t(m));
  }
  u->indeg_first.resize(N);
  u->indeg.resize(N);
  for (std::size_t n = 0; n < N; ++n) {
    sort_unique(same[n]);
    sort_unique(prev[n]);
    sort_unique(consumes[n]);
    u->indeg_first[n] = int(same[n].size() + consumes[n].size());
    u->indeg[n] = u->indeg_first[n] + int(prev[n].size());
  }
  u->succ_same = Adjacency<std::size_t>(reversed(same));
  u->succ_next = Adjacency<std::size_t>(reversed(prev));
  u->produces = Adjacency<std::uint32_t>(produces);
  u->consumes = Adjacency<std::uint32_t>(consumes);
  u->consumers = Adjacency<std::size_t>(consumers);
  return u;
}

}  // namespace

}  // namespace miniamr::runtime
