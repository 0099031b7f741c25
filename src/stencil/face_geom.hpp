// The geometry of one ghost face as its receiver sees it: the normal and in-plane axes, their
// strides and the offsets of the layers a face's values come from. Shared by the ghost fills
// (ghost_fill.cpp) and the layers a sweep reads in place of its ghosts (ghost_layers.cpp).
// Internal to the stencil layer.
#pragma once

#include <cassert>
#include <cstddef>

#include "stencil/block.hpp"

namespace miniamr::stencil {

// Geometry of one face as the receiver sees it.
struct FaceGeom {
  int face = 0;                // the receiver's face, 0..5
  int a = 0, b = 0, c = 0;     // normal axis and the two in-plane axes (x,y,z order)
  std::size_t sb = 0, sc = 0;  // strides of the in-plane axes
  std::size_t ghost = 0;       // offset of the receiver's ghost layer
  std::size_t sender = 0;      // offset of the sender's layer facing the receiver
  std::size_t inner = 0;       // offset of the receiver's own interior layer next to the ghost
  int nb = 0, nc = 0;          // interior cells along b and c
  int b_lo = 1, b_hi = 0;      // same-level / boundary iteration range along b (inclusive)
  int c_lo = 1, c_hi = 0;      // same along c
};

constexpr FaceGeom face_geom(const BlockShape& s, int face, bool with_edges) {
  assert(face >= 0 && face < 6);
  const std::size_t stride[3] = {s.plane(), s.row(), 1};
  const int n[3] = {s.nx, s.ny, s.nz};
  FaceGeom g;
  g.face = face;
  g.a = face / 2;
  const bool upper = (face & 1) != 0;
  g.b = g.a == 0 ? 1 : 0;
  g.c = g.a == 2 ? 1 : 2;
  g.sb = stride[g.b];
  g.sc = stride[g.c];
  const std::size_t sa = stride[g.a];
  g.ghost = std::size_t(upper ? n[g.a] + 1 : 0) * sa;
  g.sender = std::size_t(upper ? 1 : n[g.a]) * sa;
  g.inner = std::size_t(upper ? n[g.a] : 1) * sa;
  g.nb = n[g.b];
  g.nc = n[g.c];
  // Edges: an in-plane axis that an earlier phase already filled is covered ghost to ghost.
  const bool edge_b = with_edges && g.b < g.a;
  const bool edge_c = with_edges && g.c < g.a;
  g.b_lo = edge_b ? 0 : 1;
  g.b_hi = edge_b ? g.nb + 1 : g.nb;
  g.c_lo = edge_c ? 0 : 1;
  g.c_hi = edge_c ? g.nc + 1 : g.nc;
  return g;
}

}  // namespace miniamr::stencil
