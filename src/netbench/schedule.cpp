#include "netbench/schedule.hpp"

#include <fmt/format.h>

namespace miniamr::netbench {

Schedule make_schedule(const BenchConfig& config, const Topology& topology) {
  Schedule s;
  s.ranks = int(topology.node_of_rank.size());
  s.nodes = topology.nodes;
  s.pairs = representative_pairs(topology);
  for (int t = 0; t < int(config.tests.size()); ++t) {
    const TestKind kind = config.tests[std::size_t(t)].kind;
    if (!is_point_to_point(kind)) {
      s.steps.push_back({t, -1});
      continue;
    }
    if (s.pairs.empty())
      s.notes.push_back(fmt::format("Note: {} skipped: it needs two ranks", test_name(kind)));
    for (int p = 0; p < int(s.pairs.size()); ++p) s.steps.push_back({t, p});
  }
  if (s.ranks > 1 && s.nodes == 1)
    s.notes.push_back("Note: every rank is on one node: no other_node measurements");
  else if (s.ranks > 1 && s.nodes == s.ranks)
    s.notes.push_back("Note: one rank per node: no same_node measurements");
  return s;
}

Schedule broadcast_schedule(const Schedule& schedule, MPI_Comm comm) {
  // Flattened: ranks, nodes, pair count, step count, then (class, a, b) per pair and (test,
  // pair) per step.
  std::vector<int> flat;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    flat = {schedule.ranks, schedule.nodes, int(schedule.pairs.size()), int(schedule.steps.size())};
    for (const RankPair& p : schedule.pairs) flat.insert(flat.end(), {int(p.pair_class), p.a, p.b});
    for (const Step& st : schedule.steps) flat.insert(flat.end(), {st.test, st.pair});
  }
  int n = int(flat.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, comm);
  flat.resize(std::size_t(n));
  MPI_Bcast(flat.data(), n, MPI_INT, 0, comm);
  if (rank == 0) return schedule;
  Schedule s;
  s.ranks = flat[0];
  s.nodes = flat[1];
  std::size_t at = 4;
  for (int i = 0; i < flat[2]; ++i, at += 3)
    s.pairs.push_back({PairClass(flat[at]), flat[at + 1], flat[at + 2]});
  for (int i = 0; i < flat[3]; ++i, at += 2) s.steps.push_back({flat[at], flat[at + 1]});
  return s;
}

}  // namespace miniamr::netbench
