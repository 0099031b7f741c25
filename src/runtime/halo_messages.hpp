// The layout of halo messages, shared by every mapper: one message per peer rank (and axis
// group) whose faces are in the order both sides derive from keys, so a message carries values
// only. A face's slice holds its variables one after the other.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "mesh/domain.hpp"
#include "mesh/ghost_plan.hpp"
#include "stencil/ghost_fill.hpp"
#include "stencil/kernel_set.hpp"

namespace miniamr::runtime {

// One face of a message: the local block it is packed from (sends) or into (receives).
struct FaceSlice {
  std::size_t block = 0;
  stencil::FaceLink link;   // as the receiver sees it
  std::size_t offset = 0;   // doubles before this face, per variable of the message
  std::size_t per_var = 0;  // doubles of this face per variable
};

struct MessageLayout {
  int peer = 0;
  int group = 0;  // axis group (0 when every axis travels in one message)
  std::vector<FaceSlice> faces;
  std::size_t per_var = 0;  // doubles per variable
  std::size_t size(int num_vars) const { return per_var * std::size_t(num_vars); }
};

// The messages to (send = true) or from every peer for the faces on `axes`, tagged `group`.
// Peers without such faces get no message.
std::vector<MessageLayout> message_layouts(const mesh::GhostPlan& plan,
                                           const stencil::BlockShape& shape,
                                           std::span<const int> axes, bool edges, bool send,
                                           int group);

// The slice of a message holding `message_vars` where variables `vars` (a part of them) of
// `face` lie.
std::span<double> face_slice(const FaceSlice& face, stencil::VarRange message_vars,
                             stencil::VarRange vars, std::span<double> message);
std::span<const double> face_slice(const FaceSlice& face, stencil::VarRange message_vars,
                                   stencil::VarRange vars, std::span<const double> message);

// Packs variables `vars` of one face into its slice of a message holding exactly `vars`.
void pack_face(const stencil::KernelSet& kernels, const mesh::Domain& domain, const FaceSlice& face,
               stencil::VarRange vars, bool edges, std::span<double> message);

// Unpacks variables `vars` (a part of the message's `message_vars`) of one face.
void unpack_face(const stencil::KernelSet& kernels, mesh::Domain& domain, const FaceSlice& face,
                 stencil::VarRange message_vars, stencil::VarRange vars, bool edges,
                 std::span<const double> message);

}  // namespace miniamr::runtime
