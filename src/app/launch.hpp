// The processes of a run. Either the job a launcher started (mpirun -np P), or, with
// --launch spawn, one main process that spawns its workers once, at start-up, as OpenTS programs
// start: MPI_Comm_spawn_multiple, then the intercommunicator merged into one communicator
// ranked like `mpirun -np N+1` (the main process is rank 0, the workers follow in spawn order).
#pragma once

#include <chrono>
#include <string>
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

}  // namespace miniamr::app
