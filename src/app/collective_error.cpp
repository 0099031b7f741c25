#include "app/collective_error.hpp"

#include <cstdint>
#include <new>
#include <string>

#include <fmt/format.h>

#include "app/errors.hpp"

namespace miniamr::app {

namespace {

enum Kind : int { kNone = 0, kUsage = 1, kRun = 2 };

}  // namespace

void all_or_none(MPI_Comm comm, std::string_view doing, const std::function<void()>& local) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  int kind = kNone;
  std::string message;
  const auto where = [&] { return ranks > 1 ? fmt::format(" on rank {}", rank) : std::string(); };
  try {
    local();
  } catch (const UsageError& e) {
    kind = kUsage;
    message = e.what();
  } catch (const RunError& e) {
    kind = kRun;
    message = e.what();
  } catch (const std::bad_alloc&) {
    kind = kRun;
    message = fmt::format("out of memory{} while {}", where(), doing);
  } catch (const std::exception& e) {
    kind = kRun;
    message = fmt::format("failed{} while {}: {}", where(), doing, e.what());
  }
  // The lowest failing rank speaks for all; `ranks` means nobody failed.
  int first = kind == kNone ? ranks : rank;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == ranks) return;
  int header[2] = {kind, int(message.size())};
  MPI_Bcast(header, 2, MPI_INT, first, comm);
  message.resize(std::size_t(header[1]));
  MPI_Bcast(message.data(), header[1], MPI_CHAR, first, comm);
  if (header[0] == kUsage) throw UsageError(message);
  throw RunError(message);
}

}  // namespace miniamr::app
