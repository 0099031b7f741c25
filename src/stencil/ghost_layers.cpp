#include "stencil/ghost_layers.hpp"

#include <cassert>

namespace miniamr::stencil {

namespace {

// The axes of a face, as ghost_fill.cpp's FaceGeom has them.
struct FaceAxes {
  std::ptrdiff_t sa = 0, sb = 0, sc = 0;  // block strides along the normal and in-plane axes
  int na = 0, nb = 0, nc = 0;             // interior cells along them
};

FaceAxes face_axes(const BlockShape& s, int face) {
  const std::ptrdiff_t stride[3] = {std::ptrdiff_t(s.plane()), std::ptrdiff_t(s.row()), 1};
  const int n[3] = {s.nx, s.ny, s.nz};
  const int a = face / 2, b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
  return {stride[a], stride[b], stride[c], n[a], n[b], n[c]};
}

}  // namespace

GhostLayers ghost_layers(const Block& block, int var, const GhostSources& sources) {
  GhostLayers l = own_ghost_layers(block, var);
  const BlockShape& s = block.shape();
  const double* u = block.var(var).data();
  const auto next = std::ptrdiff_t(s.var_stride());
  for (int f = 0; f < 6; ++f) {
    const GhostSource& src = sources[std::size_t(f)];
    if (src.kind == GhostSource::Kind::kGhost) continue;
    const FaceAxes x = face_axes(s, f);
    const bool upper = (f & 1) != 0;
    GhostLayer& layer = l.face[std::size_t(f)];
    switch (src.kind) {
      case GhostSource::Kind::kGhost:
        break;
      case GhostSource::Kind::kMirror:  // the receiver's own layer next to the face
        layer = {u + (upper ? x.na : 1) * x.sa + x.sb + x.sc, x.sb, x.sc, next};
        break;
      case GhostSource::Kind::kNeighbour: {  // the sender's layer facing the receiver
        assert(src.neighbour != nullptr && src.neighbour->shape() == s);
        const double* n = src.neighbour->var(var).data();
        layer = {n + (upper ? 1 : x.na) * x.sa + x.sb + x.sc, x.sb, x.sc, next};
        break;
      }
      case GhostSource::Kind::kPacked:  // pack()'s order: rows along c, one after the other
        assert(src.packed != nullptr && var >= src.packed_v0);
        layer = {src.packed + std::size_t(var - src.packed_v0) * src.packed_stride, x.nc, 1,
                 std::ptrdiff_t(src.packed_stride)};
        break;
    }
  }
  return l;
}

void copy_ghost_layers(Block& block, int var, const GhostLayers& layers) {
  double* u = block.var(var).data();
  for (int f = 0; f < 6; ++f) {
    const FaceAxes x = face_axes(block.shape(), f);
    const GhostLayer own = own_ghost_layers(block, var).face[std::size_t(f)];
    const GhostLayer& from = layers.face[std::size_t(f)];
    if (from.first == own.first) continue;
    double* to = u + (own.first - u);  // the same address, writable
    for (int ib = 0; ib < x.nb; ++ib)
      for (int ic = 0; ic < x.nc; ++ic)
        to[ib * x.sb + ic * x.sc] = from.first[ib * from.sb + ic * from.sc];
  }
}

}  // namespace miniamr::stencil
