// RAII owners of the MPI objects miniamr uses, and the few collectives it needs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include <mpi.h>

#include "comm/node_allgather.hpp"

namespace miniamr::comm {

// An MPI object made for a while (an operation, a datatype, a communicator of a few ranks),
// freed by `Free` when its owner goes out of scope. `make` fills the handle, e.g.
//   const MpiHandle<MPI_Op, MPI_Op_free> op([](MPI_Op* o) { MPI_Op_create(f, 1, o); });
template <class Handle, int (*Free)(Handle*)>
class MpiHandle {
 public:
  template <class Make>
  explicit MpiHandle(Make&& make) {
    make(&handle_);
  }
  ~MpiHandle() { Free(&handle_); }
  MpiHandle(const MpiHandle&) = delete;
  MpiHandle& operator=(const MpiHandle&) = delete;
  Handle get() const { return handle_; }

 private:
  Handle handle_{};
};

// Open MPI's eager limit on shared memory, which MpiEnvironment sets unless the user has
// (Open MPI's default is 4096 bytes).
inline constexpr const char* kSharedMemoryEagerVariable = "OMPI_MCA_btl_vader_eager_limit";
inline constexpr const char* kSharedMemoryEagerBytes = "32768";

// The eager limit Open MPI's shared-memory transport was given (kSharedMemoryEagerVariable);
// nothing in the simulation build or when the variable is unset or not a number.
std::optional<std::int64_t> shared_memory_eager_bytes();

// Where each of `counts` consecutive pieces begins (MPI's displacements for a -v collective).
std::vector<int> displacements(std::span<const int> counts);

// MPI_Init on construction, MPI_Finalize on destruction (unless MPI was already up).

class MpiEnvironment {
 public:
  MpiEnvironment(int& argc, char**& argv);
  ~MpiEnvironment();
  MpiEnvironment(const MpiEnvironment&) = delete;
  MpiEnvironment& operator=(const MpiEnvironment&) = delete;

 private:
  bool owns_ = false;
};

// MPI_Comm_dup of `parent`. Under SMPI (the simulation build) the duplication is kept out of
// the rank's simulated computation: SMPI charges a rank the host time between two of its MPI
// calls, and its MPI_Comm_dup blocks in a broadcast and a barrier without pausing that clock, so
// each rank was charged the host time of the ranks that ran meanwhile (0.1 to 44 ms of
// start-up on 1024 simulated ranks, growing with their number).
MPI_Comm duplicate(MPI_Comm parent);

// A duplicated communicator, freed on destruction, so miniamr's messages never mix with a
// host application's (in the simulation build, where there is none, the parent itself).
class Communicator {
 public:
  explicit Communicator(MPI_Comm parent = MPI_COMM_WORLD);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  Communicator(Communicator&& o) noexcept;
  Communicator& operator=(Communicator&&) = delete;

  MPI_Comm get() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }

  void sum_in_place(std::span<std::int64_t> values) const;
  // Sums `sums` and takes the maxima of `maxima` over the ranks, in one reduction.
  void sum_and_max_in_place(std::span<std::int64_t> sums, std::span<std::int64_t> maxima) const;
  std::int64_t sum(std::int64_t v) const;
  std::int64_t max(std::int64_t v) const;
  double max(double v) const;
  bool any(bool v) const;
  bool all(bool v) const { return !any(!v); }
  // Every rank's value, in rank order, on every rank.
  std::vector<std::int64_t> allgather(std::int64_t mine) const;
  // The sum of the values of the ranks before this one (0 on rank 0), and of all ranks.
  struct PrefixSum {
    std::int64_t before = 0, total = 0;
  };
  PrefixSum prefix_sum(std::int64_t mine) const;
  // Every rank's `mine`, in rank order, on rank 0 (empty elsewhere).
  std::vector<std::vector<std::int64_t>> gather(std::span<const std::int64_t> mine) const;
  // Every rank's `bytes` bytes at `mine`, in rank order, into `all` (size() * bytes): in two
  // levels where ranks share nodes (NodeAllgather, set up at the first call).
  void allgather_bytes(const void* mine, int bytes, void* all) const;
  // Collective: allgather_bytes groups the ranks into nodes by `node` (the same value, the same
  // node) instead of by the memory they share; for tests of several nodes on one machine.
  void group_nodes(int node) const;
  // Whether allgather_bytes has gathered in two levels (its set-up found several nodes).
  bool allgathers_by_node() const { return nodes_ && nodes_->two_level(); }
  // The same into rank 0's `all` alone (read on rank 0 only).
  void gather_bytes(const void* mine, int bytes, void* all) const;
  // Rank 0's `bytes` bytes at `data` into every rank's `data`.
  void broadcast_bytes(void* data, int bytes) const;
  // Rank r's `bytes` bytes of rank 0's `all` (size() * bytes, read on rank 0 only) into `mine`.
  void scatter_bytes(const void* all, int bytes, void* mine) const;
  // Rank 0's `values` into every rank's, whose count only rank 0 knows: one broadcast of
  // `inline_count` doubles (the count, then the values that fit) and, when they do not all fit,
  // a second with the rest; one collective for the usual few values.
  void broadcast_values(std::vector<double>& values, std::size_t inline_count) const;

  // What this rank has asked of MPI through this communicator: collectives (each one, blocking
  // or not, involves every rank) and point-to-point messages sent. Callers that use get()
  // directly report theirs with note(), so that a study can show them against the rank count.
  struct Traffic {
    std::int64_t collectives = 0, messages = 0;
    Traffic operator-(const Traffic& o) const {
      return {collectives - o.collectives, messages - o.messages};
    }
  };
  const Traffic& traffic() const { return traffic_; }
  void note(std::int64_t collectives, std::int64_t messages = 0) const {
    traffic_.collectives += collectives;
    traffic_.messages += messages;
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool owned_ = true;  // freed on destruction
  int rank_ = 0;
  int size_ = 1;
  mutable Traffic traffic_;
  mutable std::unique_ptr<NodeAllgather> nodes_;  // after comm_: freed before it
};

// min, average and max of one value over the ranks (each rank passes its own).
struct Spread {
  double min = 0, avg = 0, max = 0;
};
Spread spread(const Communicator& comm, double local);

}  // namespace miniamr::comm
