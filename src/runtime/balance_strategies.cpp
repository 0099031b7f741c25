#include "runtime/balance_strategies.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sfc/partition.hpp"

namespace miniamr::runtime {

namespace {

std::vector<double> all_speeds(const Communicator& comm, double speed) {
  std::vector<double> s(std::size_t(comm.size()));
  MPI_Allgather(&speed, 1, MPI_DOUBLE, s.data(), 1, MPI_DOUBLE, comm.get());
  return s;
}

// Targets of weights starting at `offset` for the share bounds (the part containing the middle
// of each block's weight, so targets never decrease).
std::vector<int> cut_by_bounds(std::span<const std::int64_t> weights, std::int64_t offset,
                               std::span<const std::int64_t> bounds) {
  std::vector<int> t(weights.size());
  std::int64_t at = offset;
  const int parts = int(bounds.size()) - 1;
  for (std::size_t p = 0; p < weights.size(); ++p) {
    const std::int64_t mid = at + weights[p] / 2;
    const auto it = std::upper_bound(bounds.begin(), bounds.end(), mid);
    t[p] = std::clamp(int(it - bounds.begin()) - 1, 0, parts - 1);
    at += weights[p];
  }
  return t;
}

std::vector<int> none(const Communicator& comm, const BalanceInput& in) {
  return std::vector<int>(in.weights.size(), comm.rank());
}

// A weighted re-cut of the whole curve, each rank's share proportional to its speed.
std::vector<int> sfc_cut(const Communicator& comm, const BalanceInput& in) {
  const std::int64_t local = std::accumulate(in.weights.begin(), in.weights.end(), std::int64_t{0});
  const auto [offset, total] = comm.prefix_sum(local);
  const auto bounds = speed_shares(total, all_speeds(comm, in.speed));
  auto t = cut_by_bounds(in.weights, offset, bounds);
  sfc::keep_families_together(t, in.family_start);
  return t;
}

// Neighbours on the curve shift their common boundary so that their predicted times agree;
// each rank talks to its two neighbours only. A hot spot spreads over several decisions.
std::vector<int> diffusion(const Communicator& comm, const BalanceInput& in) {
  const int me = comm.rank(), P = comm.size();
  const double W = double(std::accumulate(in.weights.begin(), in.weights.end(), std::int64_t{0}));
  const double mine[2] = {W, in.speed};
  double left[2] = {0, 0}, right[2] = {0, 0};
  const int lo = me > 0 ? me - 1 : MPI_PROC_NULL, hi = me + 1 < P ? me + 1 : MPI_PROC_NULL;
  MPI_Sendrecv(mine, 2, MPI_DOUBLE, hi, 401, left, 2, MPI_DOUBLE, lo, 401, comm.get(),
               MPI_STATUS_IGNORE);
  MPI_Sendrecv(mine, 2, MPI_DOUBLE, lo, 402, right, 2, MPI_DOUBLE, hi, 402, comm.get(),
               MPI_STATUS_IGNORE);
  // Whole families move (a family split across ranks could not coarsen): trailing families to
  // the right neighbour, leading ones to the left, while each one lowers the slower time of the
  // pair (with unequal speeds, the family's middle may lie well before the equal-time point),
  // and never every family.
  const std::size_t n = in.weights.size();
  std::vector<std::size_t> starts;  // first position of each family, then n
  for (std::size_t p = 0; p < n; ++p)
    if (in.family_start[p] == p) starts.push_back(p);
  starts.push_back(n);
  const std::size_t families = starts.size() - 1;
  const auto family_weight = [&](std::size_t f) {
    return double(std::accumulate(in.weights.begin() + std::ptrdiff_t(starts[f]),
                                  in.weights.begin() + std::ptrdiff_t(starts[f + 1]),
                                  std::int64_t{0}));
  };
  // The slower time of this rank and neighbour `other` after `given` weight went across.
  const auto pair_time = [&](const double* other, double kept, double given) {
    return std::max((kept - given) / in.speed, (other[0] + given) / other[1]);
  };
  std::vector<int> t(n, me);
  std::size_t kept_from = 0, kept_to = families;  // families [kept_from, kept_to) stay
  double kept = W;
  if (hi != MPI_PROC_NULL) {
    for (double given = 0; kept_to > 1;) {
      const double w = family_weight(kept_to - 1);
      if (!(pair_time(right, W, given + w) < pair_time(right, W, given))) break;
      given += w;
      --kept_to;
      for (std::size_t p = starts[kept_to]; p < starts[kept_to + 1]; ++p) t[p] = hi;
      kept = W - given;
    }
  }
  if (lo != MPI_PROC_NULL) {
    for (double given = 0; kept_from + 1 < kept_to;) {
      const double w = family_weight(kept_from);
      if (!(pair_time(left, kept, given + w) < pair_time(left, kept, given))) break;
      given += w;
      for (std::size_t p = starts[kept_from]; p < starts[kept_from + 1]; ++p) t[p] = lo;
      ++kept_from;
    }
  }
  return t;
}

// Rank 0 acts as the main task: it gathers every cost and speed, decides, and sends each rank
// its blocks' owners; a decision moves at most max_move of the blocks (boundaries are moved
// only part of the way to the ideal cut).
std::vector<int> central(const Communicator& comm, const BalanceInput& in) {
  const int P = comm.size();
  const int n = int(in.weights.size());
  std::vector<int> counts(std::size_t(P), 0);
  std::vector<int> displs(std::size_t(P), 0);
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm.get());
  for (std::size_t r = 1; r < counts.size(); ++r) displs[r] = displs[r - 1] + counts[r - 1];
  const std::size_t N = comm.is_root() ? std::size_t(displs.back() + counts.back()) : 0;
  std::vector<std::int64_t> w(N);
  MPI_Gatherv(in.weights.data(), n, MPI_INT64_T, w.data(), counts.data(), displs.data(),
              MPI_INT64_T, 0, comm.get());
  std::vector<std::uint64_t> fam_local(in.family_start.size());
  for (std::size_t p = 0; p < fam_local.size(); ++p) fam_local[p] = in.family_start[p];
  std::vector<std::uint64_t> fam(N);
  MPI_Gatherv(fam_local.data(), n, MPI_UINT64_T, fam.data(), counts.data(), displs.data(),
              MPI_UINT64_T, 0, comm.get());
  const auto speeds = all_speeds(comm, in.speed);
  std::vector<int> targets(N);
  if (comm.is_root()) {
    const std::int64_t total = std::accumulate(w.begin(), w.end(), std::int64_t{0});
    targets = cut_by_bounds(w, 0, speed_shares(total, speeds));
    std::vector<std::size_t> family(N);
    for (int r = 0; r < P; ++r)
      for (int p = 0; p < counts[std::size_t(r)]; ++p)
        family[std::size_t(displs[std::size_t(r)] + p)] =
            std::size_t(displs[std::size_t(r)]) + fam[std::size_t(displs[std::size_t(r)] + p)];
    sfc::keep_families_together(targets, family);
    // Limit the moved fraction: move each rank boundary only part of the way.
    std::vector<int> old(N);
    for (int r = 0; r < P; ++r)
      for (int p = 0; p < counts[std::size_t(r)]; ++p)
        old[std::size_t(displs[std::size_t(r)] + p)] = r;
    std::size_t moved = 0;
    for (std::size_t i = 0; i < N; ++i) moved += targets[i] != old[i] ? 1 : 0;
    const double allowed = in.max_move * double(N);
    if (double(moved) > allowed && moved > 0) {
      const double k = allowed / double(moved);
      // Boundary r: first position of rank r, old and new.
      std::vector<std::size_t> nb(std::size_t(P) + 1, N);
      for (int r = P - 1; r >= 0; --r) {
        const auto first = std::lower_bound(targets.begin(), targets.end(), r) - targets.begin();
        const double was = double(displs[std::size_t(r)]);
        nb[std::size_t(r)] = std::size_t(std::llround(was + k * (double(first) - was)));
      }
      nb[0] = 0;
      for (std::size_t r = 1; r <= std::size_t(P); ++r) nb[r] = std::max(nb[r], nb[r - 1]);
      for (int r = 0; r < P; ++r)
        for (std::size_t i = nb[std::size_t(r)]; i < nb[std::size_t(r) + 1]; ++i) targets[i] = r;
      sfc::keep_families_together(targets, family);
    }
  }
  std::vector<int> mine(in.weights.size());
  MPI_Scatterv(targets.data(), counts.data(), displs.data(), MPI_INT, mine.data(), n, MPI_INT, 0,
               comm.get());
  return mine;
}

}  // namespace

std::vector<std::int64_t> speed_shares(std::int64_t total, std::span<const double> speeds) {
  const double sum = std::accumulate(speeds.begin(), speeds.end(), 0.0);
  std::vector<std::int64_t> bounds(speeds.size() + 1, 0);
  double before = 0;
  for (std::size_t r = 0; r < speeds.size(); ++r) {
    bounds[r] = sum > 0 ? std::int64_t(std::floor(double(total) * (before / sum)))
                        : std::int64_t(r) * total / std::int64_t(speeds.size());
    before += speeds[r];
  }
  bounds.back() = total;
  return bounds;
}

Strategy find_strategy(std::string_view name) {
  if (name == "none") return none;
  if (name == "diffusion") return diffusion;
  if (name == "sfc") return sfc_cut;
  if (name == "central") return central;
  return nullptr;
}

}  // namespace miniamr::runtime
