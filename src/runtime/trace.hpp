// Event trace in Chrome's Trace Event Format (chrome://tracing, Perfetto): complete events
// recorded per worker thread without locks, gathered to rank 0 and written as one JSON file.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "comm/mpi.hpp"
#include "runtime/clock.hpp"

namespace miniamr::runtime {

// One complete event ("ph":"X"). Times are microseconds from the trace's origin.
struct TraceEvent {
  // Kept as views so recording copies no text: both must be string literals (or otherwise
  // outlive the trace).
  std::string_view name;  // "task", "send", "recv", "checksum", "refine", "rebalance", ...
  std::string_view cat;   // "task", "message", "reduction", "mesh"
  double ts_us = 0, dur_us = 0;
  int tid = 0;  // worker thread index
  // Integer arguments; entries with an empty name are skipped.
  std::array<std::pair<std::string_view, std::int64_t>, 4> ints{};
  // One text argument (e.g. "block", "(2: 3,4,5)"), skipped when text_name is empty.
  std::string text_name;
  std::string text_value;
};

class Trace {
 public:
  Trace() = default;            // disabled: record() does nothing and now_us() is 0
  explicit Trace(int threads);  // enabled, origin = now (runtime::Clock)

  bool enabled() const { return enabled_; }
  // Resizes the per-thread buffers; call while no thread records. Events already recorded by
  // threads beyond the new count are kept.
  void set_threads(int threads);
  // Microseconds since the origin. Each rank keeps its own origin: ranks construct their traces
  // at about the same moment, which is close enough to line ranks up in a viewer.
  double now_us() const;
  // Lock-free: each thread appends only to its own buffer, ev.tid, which must be below the
  // thread count (events with other tids are dropped and counted in the file's otherData).
  void record(TraceEvent ev);
  // Events recorded on this rank; call while no thread records.
  std::size_t size() const;

  // Collective over comm. Gathers every rank's events to rank 0, which writes
  // {"traceEvents":[...],"displayTimeUnit":"ms","otherData":{...}} with pid = rank and
  // tid = worker, plus metadata events naming each process "rank N" and thread "worker T".
  // The file is written under a unique temporary name in the same directory and then renamed
  // over `path`, so it is never seen half written. Returns "" on every rank when rank 0 wrote the
  // file, else a non-empty reason on every rank (the system's reason on rank 0). A disabled
  // trace writes a file with no events.
  std::string write(const comm::Communicator& comm, const std::string& path) const;

 private:
  using Clock = runtime::Clock;
  // One cache line at least per thread, so appends by neighbouring threads do not share lines.
  struct alignas(64) Buffer {
    std::vector<TraceEvent> events;
  };
  // Copyable so that Trace stays copyable and movable.
  struct Counter {
    std::atomic<std::int64_t> n{0};
    Counter() = default;
    Counter(const Counter& o) : n(o.n.load(std::memory_order_relaxed)) {}
    Counter& operator=(const Counter& o) {
      n.store(o.n.load(std::memory_order_relaxed), std::memory_order_relaxed);
      return *this;
    }
  };

  // This rank's part of the traceEvents array (metadata, then events in time order), handed to
  // `sink` in pieces of about `piece_bytes`.
  template <class Sink>
  void format_events(int rank, std::size_t piece_bytes, Sink&& sink) const;

  bool enabled_ = false;
  Clock::time_point origin_{};
  std::vector<Buffer> buffers_;
  Counter dropped_;
};

}  // namespace miniamr::runtime
