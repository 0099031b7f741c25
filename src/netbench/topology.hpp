// Where the ranks are: which share a node (MPI_Comm_split_type, shared memory), and the pairs
// of ranks that stand for each class of link a message may take.
#pragma once

#include <string_view>
#include <vector>

#include <mpi.h>

namespace miniamr::netbench {

struct Topology {
  std::vector<int> node_of_rank;  // node ids 0, 1, ... in the order of each node's lowest rank
  int nodes = 0;
};

// Collective over comm. Every rank's node, on rank 0 only (elsewhere empty).
Topology gather_topology(MPI_Comm comm);

enum class PairClass { kSameNode, kOtherNode };
std::string_view pair_class_name(PairClass c);  // "same_node", "other_node"

struct RankPair {
  PairClass pair_class = PairClass::kSameNode;
  int a = 0, b = 0;  // a starts and times every exchange
};

// One pair per class that exists: two ranks of rank 0's node (else of the first node with two
// ranks), and rank 0 with the lowest rank of another node. Rank 0 is in every pair it can be in,
// so its clock times them all. None with one rank.
std::vector<RankPair> representative_pairs(const Topology& topology);

}  // namespace miniamr::netbench
