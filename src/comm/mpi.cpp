#include "comm/mpi.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <utility>

#ifdef MINIAMR_SIMGRID
#include <smpi/smpi.h>
#endif

#include "comm/tally.hpp"

namespace miniamr::comm {

std::vector<int> displacements(std::span<const int> counts) {
  std::vector<int> at(counts.size(), 0);
  std::exclusive_scan(counts.begin(), counts.end(), at.begin(), 0);
  return at;
}

MPI_Comm duplicate(MPI_Comm parent) {
  MPI_Comm comm = MPI_COMM_NULL;
#ifdef MINIAMR_SIMGRID
  smpi_bench_end();  // charge the computation so far, then nothing until the copy exists
  MPI_Comm_dup(parent, &comm);
  smpi_bench_begin();
#else
  MPI_Comm_dup(parent, &comm);
#endif
  return comm;
}

MpiEnvironment::MpiEnvironment(int& argc, char**& argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
#ifndef MINIAMR_SIMGRID
    // Open MPI's shared-memory transport sends a message above 4 KB by rendezvous: the
    // receiver copies it once the sender's announcement has reached it, and the sender learns
    // that it has left only at its next call into MPI. Halo messages of a few faces are 5 to
    // 100 KB, and a rank between its unit steps is that late to answer: with 32 KB sent eagerly
    // (copied into the shared queue at once), the slow-rank expanding sphere's dynamic time
    // loop fell by 8 to 15%, the static one's by 4%. A value the user gives (environment,
    // mpirun --mca) wins; other MPIs ignore the name.
    setenv(kSharedMemoryEagerVariable, kSharedMemoryEagerBytes, /*overwrite=*/0);
#endif
    // The dynamic runtime calls MPI from whichever worker holds its progress token, one at a
    // time; MPI_THREAD_MULTIPLE would slow every small message for nothing.
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    owns_ = true;
  }
}

std::optional<std::int64_t> shared_memory_eager_bytes() {
#ifdef MINIAMR_SIMGRID
  return std::nullopt;
#else
  // What Open MPI was given (by the user or MpiEnvironment): its tool interface (MPI_T) would
  // say what it took, but opening it loads every component to list their variables, 0.2 s.
  const char* text = std::getenv(kSharedMemoryEagerVariable);
  if (text == nullptr) return std::nullopt;
  std::int64_t bytes = 0;
  const auto [end, error] = std::from_chars(text, text + std::strlen(text), bytes);
  if (error != std::errc{} || *end != '\0') return std::nullopt;
  return bytes;
#endif
}

MpiEnvironment::~MpiEnvironment() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_ && !finalized) MPI_Finalize();
}

Communicator::Communicator(MPI_Comm parent) {
#ifdef MINIAMR_SIMGRID
  // SMPI copies the group, an entry per rank, into every rank's duplicate: P^2 entries in the
  // simulator (24 MB at 1024 ranks). Under smpirun miniamr is the whole program, its tags are
  // its own and every collective of this build is blocking, in the same order on every rank,
  // so it shares the parent.
  comm_ = parent;
  owned_ = false;
#else
  comm_ = duplicate(parent);
#endif
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

Communicator::~Communicator() {
  nodes_.reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owned_ && comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
}

Communicator::Communicator(Communicator&& o) noexcept
    : comm_(std::exchange(o.comm_, MPI_COMM_NULL)),
      owned_(o.owned_),
      rank_(o.rank_),
      size_(o.size_),
      traffic_(o.traffic_),
      nodes_(std::move(o.nodes_)) {}

void Communicator::sum_in_place(std::span<std::int64_t> v) const {
  note(1);
  MPI_Allreduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_INT64_T, MPI_SUM, comm_);
}
namespace {

// An MPI user operation over [n, n values to add, values to take the maximum of]: the count
// travels with the data, as MPI passes an operation nothing else. n is the same on every rank.
void sum_then_max(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const std::int64_t*>(in);
  auto* b = static_cast<std::int64_t*>(inout);
  const std::int64_t sums = a[0];
  for (int i = 1; i < *len; ++i) b[i] = i <= sums ? a[i] + b[i] : std::max(a[i], b[i]);
}

// A user operation, freed when it goes out of scope (an error thrown by the reduction too).

}  // namespace

void Communicator::sum_and_max_in_place(std::span<std::int64_t> sums,
                                        std::span<std::int64_t> maxima) const {
  std::vector<std::int64_t> v{std::int64_t(sums.size())};
  v.insert(v.end(), sums.begin(), sums.end());
  v.insert(v.end(), maxima.begin(), maxima.end());
  const MpiHandle<MPI_Op, MPI_Op_free> op(
      [](MPI_Op* o) { MPI_Op_create(&sum_then_max, /*commute=*/1, o); });
  note(1);
  MPI_Allreduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_INT64_T, op.get(), comm_);
  std::copy(v.begin() + 1, v.begin() + 1 + std::ptrdiff_t(sums.size()), sums.begin());
  std::copy(v.end() - std::ptrdiff_t(maxima.size()), v.end(), maxima.begin());
}

std::int64_t Communicator::sum(std::int64_t v) const {
  note(1);
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_SUM, comm_);
  return v;
}
std::int64_t Communicator::max(std::int64_t v) const {
  note(1);
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_MAX, comm_);
  return v;
}
double Communicator::max(double v) const {
  note(1);
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, comm_);
  return v;
}
bool Communicator::any(bool v) const {
  note(1);
  int x = v ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_LOR, comm_);
  return x != 0;
}
std::vector<std::int64_t> Communicator::allgather(std::int64_t mine) const {
  note(1);
  std::vector<std::int64_t> all(static_cast<std::size_t>(size_));
  MPI_Allgather(&mine, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, comm_);
  return all;
}

Communicator::PrefixSum Communicator::prefix_sum(std::int64_t mine) const {
  // One collective in either build, and no P^2 / 2 messages of SMPI's MPI_Exscan.
  const Tally t = tally(*this, std::span(&mine, 1));
  return {t.before[0], t.total[0]};
}

std::vector<std::vector<std::int64_t>> Communicator::gather(
    std::span<const std::int64_t> mine) const {
  int n = int(mine.size());
  std::vector<int> counts(is_root() ? std::size_t(size_) : 0);
  note(2);
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm_);
  const std::vector<int> displs = displacements(counts);
  std::vector<std::int64_t> flat(counts.empty() ? 0 : std::size_t(displs.back() + counts.back()));
  MPI_Gatherv(mine.data(), n, MPI_INT64_T, flat.data(), counts.data(), displs.data(), MPI_INT64_T,
              0, comm_);
  std::vector<std::vector<std::int64_t>> out;
  for (std::size_t r = 0; r < counts.size(); ++r)
    out.emplace_back(flat.begin() + displs[r], flat.begin() + displs[r] + counts[r]);
  return out;
}

void Communicator::allgather_bytes(const void* mine, int bytes, void* all) const {
  if (!nodes_) nodes_ = std::make_unique<NodeAllgather>(comm_);
  note(1);
  nodes_->allgather(mine, bytes, all);
}

void Communicator::group_nodes(int node) const {
  nodes_.reset();
  nodes_ = std::make_unique<NodeAllgather>(comm_, node);
}

void Communicator::gather_bytes(const void* mine, int bytes, void* all) const {
  note(1);
  MPI_Gather(mine, bytes, MPI_BYTE, all, bytes, MPI_BYTE, 0, comm_);
}

void Communicator::broadcast_bytes(void* data, int bytes) const {
  note(1);
  MPI_Bcast(data, bytes, MPI_BYTE, 0, comm_);
}

void Communicator::scatter_bytes(const void* all, int bytes, void* mine) const {
  note(1);
  MPI_Scatter(all, bytes, MPI_BYTE, mine, bytes, MPI_BYTE, 0, comm_);
}

void Communicator::broadcast_values(std::vector<double>& values, std::size_t inline_count) const {
  const std::size_t fit = std::max<std::size_t>(inline_count, 1) - 1;  // after the count
  std::vector<double> head(fit + 1, 0.0);
  if (is_root()) {
    head[0] = double(values.size());
    std::copy_n(values.begin(), std::min(values.size(), fit), head.begin() + 1);
  }
  broadcast_bytes(head.data(), int(head.size() * sizeof(double)));
  const auto n = std::size_t(head[0]);
  if (!is_root()) {
    values.assign(n, 0.0);
    std::copy_n(head.begin() + 1, std::min(n, fit), values.begin());
  }
  if (n > fit) broadcast_bytes(values.data() + fit, int((n - fit) * sizeof(double)));
}

Spread spread(const Communicator& comm, double local) {
  comm.note(2);
  double extremes[2] = {-local, local};  // max of -x is -min: one reduction for min and max
  double sum = local;
  MPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_DOUBLE, MPI_MAX, comm.get());
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, comm.get());
  return {-extremes[0], sum / comm.size(), extremes[1]};
}

}  // namespace miniamr::comm
