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

LocalAttempt::LocalAttempt(MPI_Comm comm, std::string_view doing,
                           const std::function<void()>& local)
    : comm_(comm) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &ranks_);
  const auto where = [&] { return ranks_ > 1 ? fmt::format(" on rank {}", rank_) : std::string(); };
  try {
    local();
  } catch (const UsageError& e) {
    kind_ = kUsage;
    message_ = e.what();
  } catch (const RunError& e) {
    kind_ = kRun;
    message_ = e.what();
  } catch (const std::bad_alloc&) {
    kind_ = kRun;
    message_ = fmt::format("out of memory{} while {}", where(), doing);
  } catch (const std::exception& e) {
    kind_ = kRun;
    message_ = fmt::format("failed{} while {}: {}", where(), doing, e.what());
  }
}

int LocalAttempt::vote() const {
  return kind_ == kNone ? ranks_ : rank_;
}

void LocalAttempt::settle(int least) const {
  // The lowest failing rank speaks for all; `ranks` means nobody failed.
  if (least >= ranks_) return;
  int header[2] = {kind_, int(message_.size())};
  MPI_Bcast(header, 2, MPI_INT, least, comm_);
  std::string message = message_;
  message.resize(std::size_t(header[1]));
  MPI_Bcast(message.data(), header[1], MPI_CHAR, least, comm_);
  if (header[0] == kUsage) throw UsageError(message);
  throw RunError(message);
}

void all_or_none(MPI_Comm comm, std::string_view doing, const std::function<void()>& local) {
  const LocalAttempt attempt(comm, doing, local);
  int least = attempt.vote();
  MPI_Allreduce(MPI_IN_PLACE, &least, 1, MPI_INT, MPI_MIN, comm);
  attempt.settle(least);
}

}  // namespace miniamr::app
