// Ranks and collective verdicts for tests under mpirun: only rank 0's GoogleTest output is shown,
// so a check of a rank-local fact goes through all_ranks(), which every rank reaches with the
// same verdict (no rank leaves a collective early) and where a failing rank prints its details.
#pragma once

#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace mpi_checks {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int world_size() {
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

// Collective: true on every rank when `ok` holds on every rank.
inline bool all_ranks(bool ok, const std::string& detail = {}) {
  if (!ok) std::fprintf(stderr, "[rank %d] %s\n", world_rank(), detail.c_str());
  int flag = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return flag != 0;
}

// Collective: rank 0's process id on every rank, to name the files of this run apart from those
// of the others that ctest runs at once (the same binary on 1 to 4 ranks).
inline long run_id() {
  long pid = world_rank() == 0 ? long(::getpid()) : 0;
  MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  return pid;
}

inline std::int64_t world_sum(std::int64_t v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

}  // namespace mpi_checks
