// octree_sphere L [--ranks-note] [--check]: the p4est-style octree benchmark. Refines the unit
// cube around the sphere surface |p - (0.5,0.5,0.5)| = 0.3 down to level L, 2:1 balances it
// across faces, and partitions it with sfc::cut (unit weights) into P parts, then prints
//   octants_refined N octants_balanced M refine_s X balance_s Y partition_s Z
// Under mpirun (P > 1) every rank refines and balances the whole mesh (the algorithms are
// serial), then starts from the slice of the curve it held before balance and the partition
// runs across ranks: offsets by MPI_Exscan, targets by sfc::cut, keys moved by MPI_Alltoallv.
// Times are the maximum over ranks.
//   --ranks-note  adds a line on what the ranks did and how many octants each ends with
//   --check       verifies 2:1 face balance with LeafSet::across (slow; not timed)
#include <mpi.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "octree/key.hpp"
#include "octree/leaf_set.hpp"
#include "sfc/partition.hpp"
#include "sphere_octree.hpp"

namespace {

using miniamr::octree::Key;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Started by mpirun (Open MPI, MPICH/PMI or PMIx)? Otherwise MPI is never initialised, so a
// plain run does not pay for a singleton MPI start-up.
bool under_mpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

struct Partitioned {
  std::vector<Key> mine;  // this rank's leaves after the partition
  std::int64_t sent = 0;  // leaves this rank sent to another
  double seconds = 0;
};

// The timed partition: cut the curve by unit weights and move every leaf to its part.
Partitioned partition(std::vector<Key> local, bool mpi, int rank, int ranks) {
  Partitioned out;
  const double t0 = now();
  const std::int64_t n = std::int64_t(local.size());
  std::int64_t offset = 0, total = n;
  if (mpi) {
    MPI_Exscan(&n, &offset, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) offset = 0;  // MPI_Exscan leaves rank 0's result undefined
    MPI_Allreduce(&n, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  }
  const std::vector<std::int64_t> weights(local.size(), 1);
  const std::vector<int> target = miniamr::sfc::cut(weights, offset, total, ranks);
  if (!mpi) {
    out.mine = std::move(local);
  } else {
    // Targets never decrease along the curve: each destination gets one contiguous run, and
    // receiving in rank order keeps the result sorted.
    std::vector<int> send_n(std::size_t(ranks), 0), recv_n(std::size_t(ranks), 0);
    for (const int t : target) send_n[std::size_t(t)] += int(sizeof(Key));
    out.sent = std::int64_t(local.size()) - send_n[std::size_t(rank)] / std::int64_t(sizeof(Key));
    MPI_Alltoall(send_n.data(), 1, MPI_INT, recv_n.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::vector<int> send_at(std::size_t(ranks), 0), recv_at(std::size_t(ranks), 0);
    for (std::size_t r = 1; r < std::size_t(ranks); ++r) {
      send_at[r] = send_at[r - 1] + send_n[r - 1];
      recv_at[r] = recv_at[r - 1] + recv_n[r - 1];
    }
    out.mine.resize(std::size_t(recv_at.back() + recv_n.back()) / sizeof(Key));
    MPI_Alltoallv(local.data(), send_n.data(), send_at.data(), MPI_BYTE, out.mine.data(),
                  recv_n.data(), recv_at.data(), MPI_BYTE, MPI_COMM_WORLD);
  }
  out.seconds = now() - t0;
  return out;
}

int usage() {
  std::fprintf(stderr, "usage: octree_sphere L [--ranks-note] [--check]   (1 <= L <= 20)\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int level = -1;
  bool ranks_note = false, check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--ranks-note") {
      ranks_note = true;
    } else if (a == "--check") {
      check = true;
    } else if (level < 0) {
      const auto [p, ec] = std::from_chars(a.data(), a.data() + a.size(), level);
      if (ec != std::errc{} || p != a.data() + a.size()) return usage();
    } else {
      return usage();
    }
  }
  if (level < 1 || level > miniamr::octree::kMaxLevel) return usage();

  const bool mpi = under_mpirun();
  int rank = 0, ranks = 1;
  if (mpi) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  }

  double t0 = now();
  const std::vector<Key> refined = miniamr::bench::refine_sphere_surface(level, 0.5, 0.5, 0.5, 0.3);
  double t1 = now();
  const std::vector<Key> balanced = miniamr::bench::balance_faces(refined);
  double t2 = now();

  // Where this rank starts: its equal share of the refined curve, now holding balanced leaves
  // (balance only splits, so a share's first refined leaf starts the same balanced run).
  auto slice_start = [&](int r) {
    if (r >= ranks) return balanced.end();
    const Key& first = refined[refined.size() * std::size_t(r) / std::size_t(ranks)];
    return std::lower_bound(balanced.begin(), balanced.end(), first, miniamr::octree::MortonLess{});
  };
  std::vector<Key> local(slice_start(rank), slice_start(rank + 1));
  if (mpi) MPI_Barrier(MPI_COMM_WORLD);
  Partitioned part = partition(std::move(local), mpi, rank, ranks);

  double times[3] = {t1 - t0, t2 - t1, part.seconds};
  std::int64_t held = std::int64_t(part.mine.size()), held_min = held, held_max = held;
  std::int64_t moved = part.sent;
  if (mpi) {
    MPI_Allreduce(&part.sent, &moved, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, times, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&held, &held_min, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&held, &held_max, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  }
  if (rank == 0) {
    std::printf(
        "octants_refined %zu octants_balanced %zu refine_s %.6f balance_s %.6f "
        "partition_s %.6f\n",
        refined.size(), balanced.size(), times[0], times[1], times[2]);
    if (ranks_note)
      std::printf(
          "ranks %d: refine and balance on the whole mesh on every rank; partition across "
          "ranks (sfc::cut, %s); octants per rank %lld..%lld, %lld moved\n",
          ranks, mpi ? "MPI_Alltoallv" : "no MPI", static_cast<long long>(held_min),
          static_cast<long long>(held_max), static_cast<long long>(moved));
    if (check) {
      const std::int64_t bad =
          miniamr::bench::count_face_balance_violations(miniamr::octree::LeafSet(balanced));
      std::printf("check: %lld face(s) break 2:1 balance\n", static_cast<long long>(bad));
    }
  }
  if (mpi) MPI_Finalize();
  return 0;
}
