#include "stencil/ghost_layers.hpp"

#include <cassert>

#include "stencil/face_geom.hpp"

namespace miniamr::stencil {

GhostLayers ghost_layers(const Block& block, int var, const GhostSources& sources) {
  GhostLayers l = own_ghost_layers(block, var);
  const BlockShape& s = block.shape();
  const auto next = std::ptrdiff_t(s.var_stride());
  for (int f = 0; f < 6; ++f) {
    const GhostSource& src = sources[std::size_t(f)];
    if (src.kind == GhostSource::Kind::kGhost) continue;
    const FaceGeom g = face_geom(s, f, false);
    const auto sb = std::ptrdiff_t(g.sb), sc = std::ptrdiff_t(g.sc);
    GhostLayer& layer = l.face[std::size_t(f)];
    switch (src.kind) {
      case GhostSource::Kind::kGhost:
        break;
      case GhostSource::Kind::kMirror:  // the receiver's own layer next to the face
        layer = {block.var(var).data() + g.inner + g.sb + g.sc, sb, sc, next};
        break;
      case GhostSource::Kind::kNeighbour:  // the sender's layer facing the receiver
        assert(src.neighbour != nullptr && src.neighbour->shape() == s);
        layer = {src.neighbour->var(var).data() + g.sender + g.sb + g.sc, sb, sc, next};
        break;
      case GhostSource::Kind::kPacked:  // pack()'s order: rows along c, one after the other
        assert(src.packed != nullptr && var >= src.packed_v0);
        layer = {src.packed + std::size_t(var - src.packed_v0) * src.packed_stride, g.nc, 1,
                 std::ptrdiff_t(src.packed_stride)};
        break;
    }
  }
  return l;
}

void copy_ghost_layers(Block& block, int var, const GhostLayers& layers) {
  const GhostLayers own = own_ghost_layers(block, var);
  double* u = block.var(var).data();
  for (int f = 0; f < 6; ++f) {
    const GhostLayer& from = layers.face[std::size_t(f)];
    if (from.first == own.face[std::size_t(f)].first) continue;
    const FaceGeom g = face_geom(block.shape(), f, false);
    double* to = u + g.ghost + g.sb + g.sc;  // ghost (1, 1) of the face
    for (int ib = 0; ib < g.nb; ++ib)
      for (int ic = 0; ic < g.nc; ++ic)
        to[std::size_t(ib) * g.sb + std::size_t(ic) * g.sc] =
            from.first[ib * from.sb + ic * from.sc];
  }
}

}  // namespace miniamr::stencil
