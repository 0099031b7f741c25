// The messages of a chunk of a batch, as both mappers exchange them (split phase, as p4est's
// ghost exchange: begin, progress, finish). A lane is one stage of the batch for one variable
// group of the chunk, lane = stage * groups + group; each lane has one message per peer and
// axis group (StageGraph::sends, ::recvs). Buffers are persistent, kSlots per message and
// variable group (by stage modulo kSlots), and so are the requests; receives are posted kSlots
// stages ahead, the next one as soon as the last unit step reading a buffer is done with it.
// Three slots, not two: a sender may run a stage ahead of a receiver that has not yet taken the
// message of two stages before (a slower rank drives MPI only between its steps) without
// waiting for that message to leave. One tag per axis
// group and variable group: messages between two ranks on one tag arrive in the order they
// were sent, and receives are posted in stage order, so stage s's message finds stage s's buffer.
//
// Unit steps on any worker call claim_send, packed and consumed (atomics and a short queue);
// MPI itself is called by whoever holds token() (MPI_THREAD_SERIALIZED): progress posts what is
// queued and reports what arrived.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include <mpi.h>

#include "runtime/schedule.hpp"
#include "runtime/stage_graph.hpp"

namespace miniamr::runtime {

class Trace;

class HaloExchange {
 public:
  // Lanes of `stages` stages and the variable groups `groups`. Posts the receives of the first
  // kSlots stages. Every rank begins the same chunk together. Sends and arrivals go to `trace`.
  // With `unread` (priced kernels: nothing is packed, no value read) the buffers are views of
  // the process's shared storage (shared_doubles), so that a simulation's ranks keep none.
  void begin(MPI_Comm comm, const StageGraph& graph, const Schedule& schedule, std::size_t stages,
             std::span<const stencil::VarRange> groups, bool blocking_send, bool unread,
             Trace* trace);

  std::size_t groups() const { return groups_; }
  std::span<double> send_data(std::size_t lane, std::size_t m) { return slot(send_, lane, m); }
  std::span<const double> recv_data(std::size_t lane, std::size_t m) {
    return slot(recv_, lane, m);
  }
  // Before a unit step packs into send message m of `lane`: the buffer's message of kSlots
  // stages before has left (waits for it, under the token, when it has not). Returns the
  // seconds it waited.
  double claim_send(std::size_t lane, std::size_t m, int worker);
  // A unit step has packed its faces into send message m of `lane` (the last one queues it).
  void packed(std::size_t lane, std::size_t m);
  // A unit step is done reading receive m of `lane` (the last one queues the buffer's receive
  // for kSlots stages on).
  void consumed(std::size_t lane, std::size_t m);
  // Whether receive m of `lane` has arrived.
  bool arrived(std::size_t lane, std::size_t m) const {
    return arrived_[lane * graph_->recvs.size() + m].load(std::memory_order_acquire) != 0;
  }
  // Receives of `lane` in axis group `group` that have not arrived.
  int missing(std::size_t lane, int group) const {
    return missing_[lane * std::size_t(axis_groups_) + std::size_t(group)].load(
        std::memory_order_acquire);
  }

  // Whether some receive of the chunk has not arrived yet.
  bool receiving() const { return pending_receives_.load(std::memory_order_relaxed) > 0; }
  // Whether messages or receives wait to be posted.
  bool posts_waiting() const { return queued_.load(std::memory_order_acquire); }
  // Held by whoever calls MPI.
  std::mutex& token() { return token_; }
  // With the token, on `worker`: posts queued sends and receives, completes sends, and calls
  // arrived(lane, m) for each receive that has come in. `idle`: the caller has nothing else to
  // run (the simulation build then waits for one request). Returns whether anything happened.
  template <class Arrived>
  bool progress(bool idle, int worker, Arrived&& arrived);
  // With the token: every send has left. Call when every lane has run.
  void finish();

 private:
  struct Slot {
    std::vector<double> own;
    std::span<double> data;  // own, or shared storage
    void size_to(std::size_t n, bool shared);
    std::atomic<int> left{0};  // sends: producers to go; receives: consumers to go
    std::size_t stage = 0;     // receives: the stage it is posted for
    // Sends: queued or posted and not known to have left (the buffer must not be written).
    std::atomic<bool> in_flight{false};
  };
  static constexpr std::size_t kSlots = 3;
  std::span<double> slot(std::unique_ptr<Slot[]>& slots, std::size_t lane, std::size_t m) {
    return slots[index(lane, m)].data;
  }
  // (message, variable group, stage modulo kSlots) of a lane.
  std::size_t index(std::size_t lane, std::size_t m) const {
    const std::size_t stage = lane / groups_, group = lane % groups_;
    return (m * groups_ + group) * kSlots + stage % kSlots;
  }
  int tag(int axis_group, std::size_t var_group) const;
  void post_receive(std::size_t r);  // slot r, for its stage
  void post_send(std::size_t s);
  void queue(std::vector<std::size_t>& q, std::size_t r);
  // With the token: posts what is queued; returns whether anything was.
  bool post_queued();
  // Completed requests among `requests` (their indices), through Testsome or, when `wait`,
  // Waitany; fills done_.
  int completed(std::vector<MPI_Request>& requests, bool wait);
  template <class Arrived>
  void handle_arrivals(int n, Arrived& arrived);
  void trace_message(const char* name, std::size_t slot, const MessageLayout& msg, double t0) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  const StageGraph* graph_ = nullptr;
  const Schedule* schedule_ = nullptr;
  std::size_t stages_ = 0, groups_ = 1;
  int axis_groups_ = 1;
  bool blocking_ = false;
  Trace* trace_ = nullptr;
  int worker_ = 0;  // the token holder's worker index (its trace buffer)
  std::vector<stencil::VarRange> group_vars_;
  std::unique_ptr<Slot[]> send_, recv_;
  std::vector<MPI_Request> send_req_, recv_req_;  // per slot
  std::unique_ptr<std::atomic<char>[]> arrived_;  // per lane and receive
  std::unique_ptr<std::atomic<int>[]> missing_;   // per lane and axis group
  std::size_t arrived_size_ = 0, missing_size_ = 0;
  std::vector<int> done_;  // scratch for Testsome
  std::mutex token_;
  std::mutex queue_mutex_;
  std::vector<std::size_t> send_queue_, recv_queue_;  // slots
  std::atomic<bool> queued_{false};
  std::atomic<int> pending_receives_{0};  // posted, not arrived
};

template <class Arrived>
bool HaloExchange::progress(bool idle, int worker, Arrived&& arrived) {
  worker_ = worker;
  bool any = post_queued();
  const int n = completed(recv_req_, idle);
  if (n > 0) {
    handle_arrivals(n, arrived);
    any = true;
  }
  // Sends complete once nothing is to arrive (the simulation build completes requests only in
  // a wait, and an arrival is what the caller waits for).
  if (const int k = completed(send_req_, idle && n <= 0); k > 0) {
    for (int i = 0; i < k; ++i)
      send_[std::size_t(done_[std::size_t(i)])].in_flight.store(false, std::memory_order_release);
    any = true;
  }
  return any;
}

template <class Arrived>
void HaloExchange::handle_arrivals(int n, Arrived& arrived) {
  const std::size_t M = graph_->recvs.size();
  for (int i = 0; i < n; ++i) {
    const auto r = std::size_t(done_[std::size_t(i)]);
    const std::size_t m = r / (groups_ * kSlots), group = (r / kSlots) % groups_;
    const std::size_t lane = recv_[r].stage * groups_ + group;
    trace_message("recv", r, graph_->recvs[m], -1.0);
    pending_receives_.fetch_sub(1, std::memory_order_relaxed);
    arrived_[lane * M + m].store(1, std::memory_order_release);
    missing_[lane * std::size_t(axis_groups_) + std::size_t(graph_->recvs[m].group)].fetch_sub(
        1, std::memory_order_acq_rel);
    arrived(lane, m);
  }
}

}  // namespace miniamr::runtime
