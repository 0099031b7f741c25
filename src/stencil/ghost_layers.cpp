#include "stencil/ghost_layers.hpp"

#include <cassert>

#include "stencil/face_geom.hpp"
#include "stencil/ghost_fill.hpp"

namespace miniamr::stencil {

LayerPlace layer_place(const BlockShape& shape, int face, GhostSource::Kind kind) {
  const FaceGeom g = face_geom(shape, face, false);
  const auto sb = std::ptrdiff_t(g.sb), sc = std::ptrdiff_t(g.sc);
  switch (kind) {
    case GhostSource::Kind::kMirror:  // the receiver's own layer next to the face
      return {std::ptrdiff_t(g.inner) + sb + sc, sb, sc};
    case GhostSource::Kind::kNeighbour:  // the sender's layer facing the receiver
      return {std::ptrdiff_t(g.sender) + sb + sc, sb, sc};
    case GhostSource::Kind::kPacked:  // pack()'s order: rows along c, one after the other
      return {0, g.nc, 1};
    case GhostSource::Kind::kGhost:
    default:
      return {std::ptrdiff_t(g.ghost) + sb + sc, sb, sc};
  }
}

GhostLayers ghost_layers(const Block& block, int var, const GhostSources& sources) {
  GhostLayers l = own_ghost_layers(block, var);
  const BlockShape& s = block.shape();
  for (int f = 0; f < 6; ++f) {
    const GhostSource& src = sources[std::size_t(f)];
    const double* from = nullptr;
    auto next = std::ptrdiff_t(s.var_stride());
    switch (src.kind) {
      case GhostSource::Kind::kGhost:
        continue;
      case GhostSource::Kind::kMirror:
        from = block.var(var).data();
        break;
      case GhostSource::Kind::kNeighbour:
        assert(src.neighbour != nullptr && src.neighbour->shape() == s);
        from = src.neighbour->var(var).data();
        break;
      case GhostSource::Kind::kPacked:
        assert(src.packed != nullptr && var >= src.packed_v0);
        from = src.packed + std::size_t(var - src.packed_v0) * src.packed_stride;
        next = std::ptrdiff_t(src.packed_stride);
        break;
    }
    const LayerPlace at = layer_place(s, f, src.kind);
    l.face[std::size_t(f)] = {from + at.offset, at.sb, at.sc, next};
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

void copy_out_layers(const Block& block, int var, const GhostLayers& layers) {
  constexpr auto kSame = GhostRelation::kSameLevel;
  for (int f = 0; f < 6; ++f)
    if (double* to = layers.copy[std::size_t(f)].to)  // as the block across f packs its face f ^ 1
      pack(block, {kSame, f ^ 1, {}}, {var, var + 1}, false,
           {to, packed_size(block.shape(), kSame, f / 2, 1, false)});
}

}  // namespace miniamr::stencil
