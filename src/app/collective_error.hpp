// One rule for errors in a multi-rank run: a failure on any rank ends every rank, with that
// rank's message printed once (by rank 0) and the same exit status everywhere. Work that
// involves no other rank (reading or writing a file on rank 0, allocating blocks) runs inside
// all_or_none, whose single MPI_Allreduce tells every rank whether any rank failed; the other
// errors are collective by construction (every rank checks the same global values) or, as the
// last resort, end the job through MPI_Abort (run.cpp).
#pragma once

#include <functional>
#include <string_view>

#include <mpi.h>

namespace miniamr::app {

// Collective over comm. Runs `local` on this rank. When it throws on any rank, every rank
// throws the error of the lowest rank that failed, with its message and kind: a UsageError stays
// a UsageError, anything else (a RunError, std::bad_alloc, a library's exception) becomes a
// RunError naming the rank and what it was `doing` ("refining the mesh at timestep 5").
void all_or_none(MPI_Comm comm, std::string_view doing, const std::function<void()>& local);

}  // namespace miniamr::app
