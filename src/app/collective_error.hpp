// One rule for errors in a multi-rank run: a failure on any rank ends every rank, with that
// rank's message printed once (by rank 0) and the same exit status everywhere. Work that
// involves no other rank (reading or writing a file on rank 0, allocating blocks) runs inside
// all_or_none, whose single MPI_Allreduce tells every rank whether any rank failed; the other
// errors are collective by construction (every rank checks the same global values) or, as the
// last resort, end the job through MPI_Abort (run.cpp).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <mpi.h>

namespace miniamr::app {

// Collective over comm. Runs `local` on this rank. When it throws on any rank, every rank
// throws the error of the lowest rank that failed, with its message and kind: a UsageError stays
// a UsageError, anything else (a RunError, std::bad_alloc, a library's exception) becomes a
// RunError naming the rank and what it was `doing` ("refining the mesh at timestep 5").
void all_or_none(MPI_Comm comm, std::string_view doing, const std::function<void()>& local);

// all_or_none in two halves, for a caller whose next collective can carry the vote (an
// exchange's `least`, comm::sparse_exchange), so that the verdict costs no reduction of its own:
// the constructor runs `local` and keeps what it threw; vote() is this rank's value, to be
// reduced by MPI_MIN over the ranks; settle(least), given that minimum on every rank, throws
// the error of the lowest rank that failed, as all_or_none does.
class LocalAttempt {
 public:
  LocalAttempt(MPI_Comm comm, std::string_view doing, const std::function<void()>& local);
  int vote() const;
  void settle(int least) const;

 private:
  MPI_Comm comm_;
  int rank_ = 0, ranks_ = 1;
  int kind_ = 0;
  std::string message_;
};

}  // namespace miniamr::app
