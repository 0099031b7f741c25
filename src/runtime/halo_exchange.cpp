#include "runtime/halo_exchange.hpp"

#include <array>
#include <cassert>
#include <chrono>

#include "comm/shared_storage.hpp"
#include "runtime/clock.hpp"
#include "runtime/trace.hpp"

namespace miniamr::runtime {

namespace {

constexpr int kTagBase = 301;
// Variable groups beyond this share tags (their messages then still arrive in order per
// group, as each pair of ranks posts and sends them in the same order); MPI promises 32767 tags.
constexpr std::size_t kTaggedGroups = 1024;

}  // namespace

int HaloExchange::tag(int axis_group, std::size_t var_group) const {
  return kTagBase + axis_group + 3 * int(var_group % kTaggedGroups);
}

void HaloExchange::begin(MPI_Comm comm, const StageGraph& graph, const Schedule& schedule,
                         std::size_t stages, std::span<const stencil::VarRange> groups,
                         bool blocking_send, bool unread, Trace* trace) {
  comm_ = comm;
  graph_ = &graph;
  schedule_ = &schedule;
  stages_ = stages;
  groups_ = groups.size();
  axis_groups_ = graph.groups;
  blocking_ = blocking_send;
  trace_ = trace != nullptr && trace->enabled() ? trace : nullptr;
  group_vars_.assign(groups.begin(), groups.end());
  const std::size_t S = graph.sends.size(), R = graph.recvs.size();
  const std::size_t lanes = stages * groups_;
  // Persistent between chunks and batches: new storage only when the counts change.
  if (S * groups_ * kSlots != send_req_.size()) {
    send_ = std::make_unique<Slot[]>(S * groups_ * kSlots);
    send_req_.assign(S * groups_ * kSlots, MPI_REQUEST_NULL);
  }
  if (R * groups_ * kSlots != recv_req_.size()) {
    recv_ = std::make_unique<Slot[]>(R * groups_ * kSlots);
    recv_req_.assign(R * groups_ * kSlots, MPI_REQUEST_NULL);
  }
  done_.resize(std::max(send_req_.size(), recv_req_.size()));
  if (lanes * R > arrived_size_) {
    arrived_ = std::make_unique<std::atomic<char>[]>(lanes * R);
    arrived_size_ = lanes * R;
  }
  if (lanes * std::size_t(axis_groups_) > missing_size_) {
    missing_ = std::make_unique<std::atomic<int>[]>(lanes * std::size_t(axis_groups_));
    missing_size_ = lanes * std::size_t(axis_groups_);
  }
  for (std::size_t i = 0; i < lanes * R; ++i) arrived_[i].store(0, std::memory_order_relaxed);
  std::array<int, 3> per_group{0, 0, 0};
  for (const MessageLayout& m : graph.recvs) ++per_group[std::size_t(m.group)];
  for (std::size_t lane = 0; lane < lanes; ++lane)
    for (int g = 0; g < axis_groups_; ++g)
      missing_[lane * std::size_t(axis_groups_) + std::size_t(g)].store(per_group[std::size_t(g)],
                                                                        std::memory_order_relaxed);
  for (std::size_t m = 0; m < S; ++m)
    for (std::size_t g = 0; g < groups_; ++g)
      for (std::size_t p = 0; p < kSlots; ++p) {
        Slot& s = send_[(m * groups_ + g) * kSlots + p];
        // The real size, even when modelled.
        s.size_to(graph.sends[m].size(group_vars_[g].count()), unread);
        s.left.store(int(schedule.producers[m]), std::memory_order_relaxed);
        s.in_flight.store(false, std::memory_order_relaxed);
      }
  {
    const std::lock_guard lock(token_);
    for (std::size_t m = 0; m < R; ++m)
      for (std::size_t g = 0; g < groups_; ++g)
        for (std::size_t p = 0; p < std::min(kSlots, stages); ++p) {
          const std::size_t r = (m * groups_ + g) * kSlots + p;
          recv_[r].size_to(graph.recvs[m].size(group_vars_[g].count()), unread);
          recv_[r].stage = p;
          post_receive(r);
        }
  }
}

void HaloExchange::Slot::size_to(std::size_t n, bool shared) {
  if (shared) {
    own = {};
    data = {comm::shared_doubles(n), n};
  } else {
    own.resize(n);
    data = own;
  }
}

void HaloExchange::post_receive(std::size_t r) {
  const std::size_t m = r / (groups_ * kSlots), group = (r / kSlots) % groups_;
  const MessageLayout& msg = graph_->recvs[m];
  Slot& s = recv_[r];
  s.left.store(int(schedule_->consumers[m]), std::memory_order_relaxed);
  pending_receives_.fetch_add(1, std::memory_order_relaxed);
  MPI_Irecv(s.data.data(), int(s.data.size()), MPI_DOUBLE, msg.peer, tag(msg.group, group), comm_,
            &recv_req_[r]);
}

void HaloExchange::post_send(std::size_t s) {
  const std::size_t m = s / (groups_ * kSlots), group = (s / kSlots) % groups_;
  const MessageLayout& msg = graph_->sends[m];
  const std::span<double> data = send_[s].data;
  const double t0 = trace_ != nullptr ? trace_->now_us() : 0.0;
  if (blocking_) {
    MPI_Send(data.data(), int(data.size()), MPI_DOUBLE, msg.peer, tag(msg.group, group), comm_);
    send_[s].in_flight.store(false, std::memory_order_release);
  } else {
    MPI_Isend(data.data(), int(data.size()), MPI_DOUBLE, msg.peer, tag(msg.group, group), comm_,
              &send_req_[s]);
  }
  trace_message("send", s, msg, t0);
}

void HaloExchange::trace_message(const char* name, std::size_t slot, const MessageLayout& msg,
                                 double t0) const {
  if (trace_ == nullptr) return;
  const std::size_t group = (slot / kSlots) % groups_;
  const double now = trace_->now_us();
  const auto bytes = std::int64_t(msg.size(group_vars_[group].count()) * sizeof(double));
  trace_->record({name,
                  "message",
                  t0 < 0 ? now : t0,
                  t0 < 0 ? 0.0 : now - t0,
                  worker_,
                  {{{"peer", msg.peer},
                    {"bytes", bytes},
                    {"var", group_vars_[group].v0},
                    {"axis_group", msg.group}}},
                  {},
                  {}});
}

void HaloExchange::queue(std::vector<std::size_t>& q, std::size_t r) {
  const std::lock_guard lock(queue_mutex_);
  q.push_back(r);
  queued_.store(true, std::memory_order_release);
}

bool HaloExchange::post_queued() {
  if (!queued_.exchange(false, std::memory_order_acq_rel)) return false;
  std::vector<std::size_t> sends, recvs;
  {
    const std::lock_guard lock(queue_mutex_);
    sends.swap(send_queue_);
    recvs.swap(recv_queue_);
  }
  for (const std::size_t r : recvs) post_receive(r);
  for (const std::size_t s : sends) post_send(s);
  return !sends.empty() || !recvs.empty();
}

double HaloExchange::claim_send(std::size_t lane, std::size_t m, int worker) {
  const std::size_t s = index(lane, m);
  if (!send_[s].in_flight.load(std::memory_order_acquire)) return 0;
  const auto t0 = Clock::now();
  const std::lock_guard lock(token_);
  worker_ = worker;
  post_queued();  // it may be queued still
  MPI_Wait(&send_req_[s], MPI_STATUS_IGNORE);
  send_[s].in_flight.store(false, std::memory_order_release);
  return seconds_since(t0);
}

void HaloExchange::packed(std::size_t lane, std::size_t m) {
  const std::size_t s = index(lane, m);
  if (send_[s].left.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // The last producer: the buffer goes, and serves two stages on.
  send_[s].left.store(int(schedule_->producers[m]), std::memory_order_relaxed);
  send_[s].in_flight.store(true, std::memory_order_release);
  queue(send_queue_, s);
}

void HaloExchange::consumed(std::size_t lane, std::size_t m) {
  const std::size_t r = index(lane, m);
  if (recv_[r].left.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  const std::size_t stage = lane / groups_;
  if (stage + kSlots >= stages_) return;
  recv_[r].stage = stage + kSlots;
  queue(recv_queue_, r);
}

int HaloExchange::completed(std::vector<MPI_Request>& requests, [[maybe_unused]] bool wait) {
  if (requests.empty()) return 0;
  int n = 0;
#ifdef MINIAMR_SIMGRID
  // SMPI 3.32 keeps each request that MPI_Test* completes in a list of its rank that every
  // later completion and computation burst scans, so polling made a simulation grow with the
  // square of its messages. Here requests complete only in MPI_Waitany, once the rank has
  // nothing else to run: its simulated clock then moves to the next arrival.
  if (!wait) return 0;
  int index = MPI_UNDEFINED;
  MPI_Waitany(int(requests.size()), requests.data(), &index, MPI_STATUS_IGNORE);
  if (index == MPI_UNDEFINED) return 0;
  done_[0] = index;
  n = 1;
#else
  MPI_Testsome(int(requests.size()), requests.data(), &n, done_.data(), MPI_STATUSES_IGNORE);
  if (n == MPI_UNDEFINED) return 0;
#endif
  return n;
}

void HaloExchange::finish() {
  worker_ = 0;
  post_queued();
  MPI_Waitall(int(send_req_.size()), send_req_.data(), MPI_STATUSES_IGNORE);
  for (std::size_t s = 0; s < send_req_.size(); ++s)
    send_[s].in_flight.store(false, std::memory_order_relaxed);
#ifndef NDEBUG
  for (const MPI_Request& r : recv_req_) assert(r == MPI_REQUEST_NULL);
#endif
}

}  // namespace miniamr::runtime
