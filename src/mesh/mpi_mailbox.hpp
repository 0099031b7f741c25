// The refinement consensus across ranks: a leaf's change goes only to the ranks holding the
// leaves it affects (across its faces, or its siblings), aggregated per rank; each round is one
// message to and from every neighbour rank, whose size is bounded by what the neighbour can
// post (its leaves in this rank's neighbourhood), so no rank probes, counts senders or reduces.
#pragma once

#include <cstddef>
#include <vector>

#include "comm/mpi.hpp"
#include "mesh/neighbourhood.hpp"
#include "octree/refine.hpp"

namespace miniamr::mesh {

class MpiMailbox final : public octree::MarkMailbox {
 public:
  explicit MpiMailbox(const comm::Communicator& comm) : comm_(comm) {}
  // Must be called after every change of the mesh or of its partition; reads nb's keys from
  // then on, so nb must outlive it or the next call (the Mesh holds both).
  void set_neighbourhood(const Neighbourhood& nb);

  bool distributed() const override { return comm_.size() > 1; }
  int post_across(octree::Face f, const octree::MarkChange& change) override;
  int post_family(const octree::MarkChange& change) override;
  bool posts_from(std::size_t leaf) const override {
    return leaf >= posts_.size() || posts_[leaf] != 0;
  }
  std::vector<octree::MarkChange> exchange() override;
  void discard() override;

  // The ranks this rank exchanges marks with, ascending.
  std::vector<int> peers() const;

 private:
  struct Peer {
    int rank = 0;
    std::size_t capacity = 0;  // the most changes it can post in a round
    std::vector<octree::MarkChange> outbox;
  };
  void post_to(std::size_t leaf, const octree::MarkChange& change, int& posted);

  const comm::Communicator& comm_;
  octree::RootGrid grid_;
  const octree::LeafSet* all_ = nullptr;  // this rank's leaves and its neighbours' (nb.all)
  std::vector<int> slot_;                 // per leaf of all_: index into peers_, or -1 when local
  std::vector<char> posts_;               // per local leaf (Neighbourhood::local_index): posts_from
  std::vector<Peer> peers_;               // ascending rank
};

}  // namespace miniamr::mesh
