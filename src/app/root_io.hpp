// Files read or written once for all ranks: rank 0 does the I/O and every rank learns the
// outcome, so a failure ends all ranks together with one message instead of leaving some
// waiting in the next collective.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <mpi.h>

namespace miniamr::app {

// Collective. Rank 0 calls `read` and every rank returns its text; when `read` throws, every
// rank throws the same error (all_or_none).
std::string text_from_root(MPI_Comm comm, const std::function<std::string()>& read);

// Collective. Rank 0 writes `text` to `path` atomically (io::write_file_atomically); on failure
// every rank throws RunError "cannot write <what> '<path>': <reason>". `text` matters on rank 0
// only.
void write_on_root(MPI_Comm comm, const std::string& path, std::string_view text,
                   std::string_view what);

}  // namespace miniamr::app
