// The processes of a run. Either the job a launcher started (mpirun -np P), or, with
// --launch spawn, one main process that spawns its workers once, at start-up, as OpenTS programs
// start: MPI_Comm_spawn_multiple, then the intercommunicator merged into one communicator
// ranked like `mpirun -np N+1` (the main process is rank 0, the workers follow in spawn order).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <mpi.h>

#include "app/errors.hpp"

namespace miniamr::app {

// A spawn that failed. After a failed spawn Open MPI 4.1 can hang in MPI_Finalize, so the
// caller ends the job with MPI_Abort after saying why.
struct SpawnError : RunError {
  using RunError::RunError;
};

class World {
 public:
  // Joins the parent's world when this process was spawned by one.
  World();
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  MPI_Comm comm() const { return comm_; }
  int rank() const;
  int size() const;
  bool spawned() const { return parent_ != MPI_COMM_NULL; }

  // Main process: starts `workers` copies of this executable with `args`, the i-th on
  // `hosts[i]` (no host: where the launcher maps it), and merges them into comm(). Throws
  // SpawnError with MPI's reason; gives up (ending the process) when the spawn has not
  // returned within `deadline`.
  void spawn(const std::vector<std::string>& args, int workers,
             const std::vector<std::string>& hosts, std::chrono::seconds deadline);

 private:
  MPI_Comm comm_ = MPI_COMM_WORLD;
  MPI_Comm parent_ = MPI_COMM_NULL;    // spawned: the intercommunicator to the main process
  MPI_Comm children_ = MPI_COMM_NULL;  // main process: the intercommunicator to the workers
};

// This process's host, as MPI names it.
std::string processor_name();

// True when the launcher was told that cores and slots may be oversubscribed (mpirun
// --oversubscribe, or OMPI_MCA_rmaps_base_oversubscribe=1 in the environment).
bool oversubscription_allowed();
// Then at most this many threads per core, or processes per slot.
inline constexpr int kMaxOversubscription = 4;

// The processes this job may run at once: MPI_UNIVERSE_SIZE (the launcher's slots) under a
// launcher, this machine's cores for a process started without one.
int available_slots();

// Before anything is spawned (Open MPI would start workers beyond the slots one by one, and
// leave the run waiting for the rest): throws UsageError when the main process and `workers`
// would not fit available_slots(), kMaxOversubscription times that when oversubscribing.
void check_worker_slots(int workers);

// A spawned worker's guard, from before MPI_Init (which a worker whose main process died may
// never leave) until stop(): it ends the worker when its main process (on the same host) is gone,
// or when it has not joined its main process by the deadline. World::spawn gives its workers
// what the guard needs in their environment; in any other process the guard does nothing.
class SpawnGuard {
 public:
  SpawnGuard();
  ~SpawnGuard() { stop(); }
  SpawnGuard(const SpawnGuard&) = delete;
  SpawnGuard& operator=(const SpawnGuard&) = delete;

  // The worker is part of its main process's world: the deadline no longer applies.
  void joined();
  void stop();

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool joined_ = false, stopped_ = false;
  std::thread thread_;
};

}  // namespace miniamr::app
