#include "netbench/topology.hpp"

#include <map>

#include "comm/mpi.hpp"

namespace miniamr::netbench {

Topology gather_topology(MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // A node's colour is its lowest rank in comm: the same on all its ranks, whatever the
  // launcher's placement.
  int colour = rank;
  {
    // The ranks of comm that share this rank's memory.
    const comm::MpiHandle<MPI_Comm, MPI_Comm_free> node(
        [&](MPI_Comm* c) { MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, c); });
    MPI_Allreduce(MPI_IN_PLACE, &colour, 1, MPI_INT, MPI_MIN, node.get());
  }
  std::vector<int> colours(rank == 0 ? std::size_t(size) : 0);
  MPI_Gather(&colour, 1, MPI_INT, colours.data(), 1, MPI_INT, 0, comm);
  Topology t;
  std::map<int, int> node_of_colour;
  for (int c : colours) {
    const auto [it, added] = node_of_colour.emplace(c, t.nodes);
    if (added) ++t.nodes;
    t.node_of_rank.push_back(it->second);
  }
  return t;
}

std::string_view pair_class_name(PairClass c) {
  return c == PairClass::kSameNode ? "same_node" : "other_node";
}

std::vector<RankPair> representative_pairs(const Topology& topology) {
  const std::vector<int>& node = topology.node_of_rank;
  const int size = int(node.size());
  std::vector<RankPair> pairs;
  // Same node: rank 0's node (id 0) first, so that rank 0 times it when it can.
  bool found = false;
  for (int home = 0; home < topology.nodes && !found; ++home) {
    int first = -1;
    for (int r = 0; r < size && !found; ++r) {
      if (node[r] != home) continue;
      if (first < 0) {
        first = r;
      } else {
        pairs.push_back({PairClass::kSameNode, first, r});
        found = true;
      }
    }
  }
  for (int r = 1; r < size; ++r)
    if (node[r] != node[0]) {
      pairs.push_back({PairClass::kOtherNode, 0, r});
      break;
    }
  return pairs;
}

}  // namespace miniamr::netbench
