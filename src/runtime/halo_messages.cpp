#include "runtime/halo_messages.hpp"

namespace miniamr::runtime {

std::vector<MessageLayout> message_layouts(const mesh::GhostPlan& plan,
                                           const stencil::BlockShape& shape,
                                           std::span<const int> axes, bool edges, bool send,
                                           int group) {
  std::vector<MessageLayout> out;
  for (const mesh::PeerLinks& p : plan.peers) {
    MessageLayout m;
    m.peer = p.rank;
    m.group = group;
    for (const int a : axes) {
      for (const mesh::RemoteLink& l : (send ? p.send : p.recv)[std::size_t(a)]) {
        const std::size_t n = stencil::packed_size(shape, l.link.relation, a, 1, edges);
        m.faces.push_back({l.block, l.link, m.per_var, n});
        m.per_var += n;
      }
    }
    if (!m.faces.empty()) out.push_back(std::move(m));
  }
  return out;
}

namespace {

template <class T>
std::span<T> slice(const FaceSlice& face, stencil::VarRange message_vars, stencil::VarRange vars,
                   std::span<T> message) {
  const auto first = std::size_t(vars.v0 - message_vars.v0) * face.per_var;
  return message.subspan(face.offset * std::size_t(message_vars.count()) + first,
                         face.per_var * std::size_t(vars.count()));
}

}  // namespace

std::span<double> face_slice(const FaceSlice& face, stencil::VarRange message_vars,
                             stencil::VarRange vars, std::span<double> message) {
  return slice(face, message_vars, vars, message);
}

std::span<const double> face_slice(const FaceSlice& face, stencil::VarRange message_vars,
                                   stencil::VarRange vars, std::span<const double> message) {
  return slice(face, message_vars, vars, message);
}

void pack_face(const stencil::KernelSet& kernels, const mesh::Domain& domain, const FaceSlice& face,
               stencil::VarRange vars, bool edges, std::span<double> message) {
  kernels.pack(domain.blocks[face.block], face.link, vars, edges,
               face_slice(face, vars, vars, message));
}

void unpack_face(const stencil::KernelSet& kernels, mesh::Domain& domain, const FaceSlice& face,
                 stencil::VarRange message_vars, stencil::VarRange vars, bool edges,
                 std::span<const double> message) {
  kernels.unpack(domain.blocks[face.block], face.link, vars, edges,
                 face_slice(face, message_vars, vars, message));
}

}  // namespace miniamr::runtime
