// An allgather of a few bytes from every rank, in two levels where ranks share nodes: each
// node's ranks to their leader, the leaders among themselves, each leader back to its node's
// ranks. A flat MPI_Allgather brings every rank its own copy of the whole array over its node's
// network link, so the node's link carries (ranks on the node) x P x bytes; in two levels one
// copy a node crosses the network, and the copies within a node go through its memory. That
// is the partition's exchange after every migration (8 bytes a rank): simulated on
// platforms/cluster_fat_tree.xml (64 ranks a node), 58.5 us flat against 21.8 us in two levels
// at 1024 ranks, 203 against 43 us at 4096. On one node, or with one rank a node, it is the
// flat allgather.
#pragma once

#include <optional>
#include <vector>

#include <mpi.h>

namespace miniamr::comm {

class NodeAllgather {
 public:
  // Collective over `comm`, which must outlive this. Ranks with the same `node` value share a
  // node; by default, the ranks that MPI_COMM_TYPE_SHARED puts together.
  explicit NodeAllgather(MPI_Comm comm, std::optional<int> node = std::nullopt);
  ~NodeAllgather();
  NodeAllgather(const NodeAllgather&) = delete;
  NodeAllgather& operator=(const NodeAllgather&) = delete;

  // Whether it gathers in two levels: more than one node, and some node with several ranks.
  bool two_level() const { return two_level_; }

  // Collective: every rank's `bytes` bytes at `mine`, in rank order, into `all` (size * bytes).
  void allgather(const void* mine, int bytes, void* all) const;

 private:
  MPI_Comm comm_;
  MPI_Comm node_ = MPI_COMM_NULL;     // this rank's node
  MPI_Comm leaders_ = MPI_COMM_NULL;  // the nodes' first ranks (null elsewhere)
  int size_ = 1, node_size_ = 1;
  bool leader_ = true, two_level_ = false;
  // On the leaders: each node's rank count in the leaders' order, and the rank whose bytes
  // come at each place of the leaders' gather (empty where that is rank order).
  std::vector<int> node_sizes_;
  std::vector<int> rank_at_;
};

}  // namespace miniamr::comm
