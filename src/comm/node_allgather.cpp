#include "comm/node_allgather.hpp"

#include <cstddef>
#include <cstring>

#include "comm/mpi.hpp"

namespace miniamr::comm {

namespace {

void free_comm(MPI_Comm& c) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (c != MPI_COMM_NULL && !finalized) MPI_Comm_free(&c);
  c = MPI_COMM_NULL;
}

}  // namespace

NodeAllgather::NodeAllgather(MPI_Comm comm, std::optional<int> node) : comm_(comm) {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &size_);
  if (node)
    MPI_Comm_split(comm_, *node, rank, &node_);
  else
    MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_);
  int node_rank = 0;
  MPI_Comm_rank(node_, &node_rank);
  MPI_Comm_size(node_, &node_size_);
  leader_ = node_rank == 0;
  int leading = leader_ ? 1 : 0, nodes = 0;
  MPI_Allreduce(&leading, &nodes, 1, MPI_INT, MPI_SUM, comm_);
  two_level_ = nodes > 1 && nodes < size_;
  if (!two_level_) {
    free_comm(node_);
    return;
  }
  MPI_Comm_split(comm_, leader_ ? 0 : MPI_UNDEFINED, rank, &leaders_);
  // Each node's ranks, in node order (the split keeps rank order within a node), on its leader;
  // then every node's, in the leaders' order, on every leader.
  std::vector<int> members(leader_ ? std::size_t(node_size_) : 0);
  MPI_Gather(&rank, 1, MPI_INT, members.data(), 1, MPI_INT, 0, node_);
  if (!leader_) return;
  node_sizes_.resize(std::size_t(nodes));
  MPI_Allgather(&node_size_, 1, MPI_INT, node_sizes_.data(), 1, MPI_INT, leaders_);
  rank_at_.resize(std::size_t(size_));
  const std::vector<int> at = displacements(node_sizes_);
  MPI_Allgatherv(members.data(), node_size_, MPI_INT, rank_at_.data(), node_sizes_.data(),
                 at.data(), MPI_INT, leaders_);
  // Nodes of consecutive ranks (the usual placement) gather straight into rank order.
  bool in_order = true;
  for (int p = 0; p < size_; ++p) in_order = in_order && rank_at_[std::size_t(p)] == p;
  if (in_order) rank_at_.clear();
}

NodeAllgather::~NodeAllgather() {
  free_comm(leaders_);
  free_comm(node_);
}

void NodeAllgather::allgather(const void* mine, int bytes, void* all) const {
  if (!two_level_) {
    MPI_Allgather(mine, bytes, MPI_BYTE, all, bytes, MPI_BYTE, comm_);
    return;
  }
  if (leader_) {
    std::vector<std::byte> node(std::size_t(node_size_) * std::size_t(bytes));
    MPI_Gather(mine, bytes, MPI_BYTE, node.data(), bytes, MPI_BYTE, 0, node_);
    std::vector<int> counts(node_sizes_);
    for (int& c : counts) c *= bytes;
    const std::vector<int> at = displacements(counts);
    std::vector<std::byte> gathered(rank_at_.empty() ? 0 : std::size_t(size_) * std::size_t(bytes));
    void* into = rank_at_.empty() ? all : gathered.data();
    MPI_Allgatherv(node.data(), node_size_ * bytes, MPI_BYTE, into, counts.data(), at.data(),
                   MPI_BYTE, leaders_);
    for (std::size_t p = 0; p < rank_at_.size(); ++p)
      std::memcpy(static_cast<std::byte*>(all) + std::size_t(rank_at_[p]) * std::size_t(bytes),
                  gathered.data() + p * std::size_t(bytes), std::size_t(bytes));
  } else {
    MPI_Gather(mine, bytes, MPI_BYTE, nullptr, bytes, MPI_BYTE, 0, node_);
  }
  MPI_Bcast(all, size_ * bytes, MPI_BYTE, 0, node_);
}

}  // namespace miniamr::comm
