#include "stencil/split_coarsen.hpp"

#include <algorithm>
#include <cassert>

namespace miniamr::stencil {

namespace {

// Zeroes b's ghost layer and the padding after each variable. Coarsening then writes every
// interior cell, so clearing the whole block first would only add a pass over it. (Splitting
// writes each child in memory order, zeros included; coarsening that way, reading the eight
// children in turn, measured slower.)
void clear_ghosts(Block& b) {
  const BlockShape& s = b.shape();
  for (int v = 0; v < s.num_vars; ++v) {
    double* d = b.data() + std::size_t(v) * s.var_stride();
    std::fill_n(d, s.plane(), 0.0);                         // x = 0
    std::fill_n(d + s.at(s.nx + 1, 0, 0), s.plane(), 0.0);  // x = nx + 1
    for (int i = 1; i <= s.nx; ++i) {
      std::fill_n(d + s.at(i, 0, 0), s.row(), 0.0);         // y = 0
      std::fill_n(d + s.at(i, s.ny + 1, 0), s.row(), 0.0);  // y = ny + 1
      for (int j = 1; j <= s.ny; ++j) {
        d[s.at(i, j, 0)] = 0.0;         // z = 0
        d[s.at(i, j, s.nz + 1)] = 0.0;  // z = nz + 1
      }
    }
    std::fill(d + s.cells(), d + s.var_stride(), 0.0);
  }
}

}  // namespace

void split_child_into(const Block& parent, int octant, Block& child) {
  const BlockShape& s = parent.shape();
  assert(child.shape() == s);
  assert(s.nx % 2 == 0 && s.ny % 2 == 0 && s.nz % 2 == 0);
  assert(octant >= 0 && octant < 8);
  const int ox = (octant & 1) * s.nx / 2;
  const int oy = ((octant >> 1) & 1) * s.ny / 2;
  const int oz = ((octant >> 2) & 1) * s.nz / 2;
  const std::size_t row = s.row(), plane = s.plane();
  // One pass over each variable in memory order, ghosts (0) and padding included: the child is
  // new storage, and lines written once, front to back, cost the least.
  for (int v = 0; v < s.num_vars; ++v) {
    const double* p = parent.var(v).data();
    double* c = child.data() + std::size_t(v) * s.var_stride();
    std::fill_n(c, plane, 0.0);  // x = 0
    for (int i = 1; i <= s.nx; ++i) {
      double* cp = c + std::size_t(i) * plane;
      std::fill_n(cp, row, 0.0);  // y = 0
      for (int j = 1; j <= s.ny; ++j) {
        const double* prow = p + s.at(ox + (i + 1) / 2, oy + (j + 1) / 2, oz);
        double* crow = cp + std::size_t(j) * row;
        crow[0] = 0.0;
        // Each parent value / 8 (exact: a power of two) into two neighbouring child cells.
        for (int k = 1; k <= s.nz / 2; ++k) {
          const double x = prow[k] / 8.0;
          crow[2 * k - 1] = x;
          crow[2 * k] = x;
        }
        crow[s.nz + 1] = 0.0;
      }
      std::fill_n(cp + std::size_t(s.ny + 1) * row, row, 0.0);  // y = ny + 1
    }
    std::fill(c + s.at(s.nx + 1, 0, 0), c + s.var_stride(), 0.0);  // x = nx + 1, padding
  }
}

Block split_child(const Block& parent, int octant) {
  Block child(parent.shape());
  split_child_into(parent, octant, child);
  return child;
}

void coarsen_into(std::span<const Block* const, 8> children, Block& parent) {
  const BlockShape& s = children[0]->shape();
  assert(parent.shape() == s);
  assert(s.nx % 2 == 0 && s.ny % 2 == 0 && s.nz % 2 == 0);
  clear_ghosts(parent);  // the 8 children cover the interior
  const int hx = s.nx / 2, hy = s.ny / 2, hz = s.nz / 2;
  for (int octant = 0; octant < 8; ++octant) {
    const Block& child = *children[octant];
    assert(child.shape() == s);
    const int ox = (octant & 1) * hx, oy = ((octant >> 1) & 1) * hy, oz = ((octant >> 2) & 1) * hz;
    const std::size_t dx = s.plane(), dy = s.row();
    for (int v = 0; v < s.num_vars; ++v) {
      const double* c = child.var(v).data();
      double* p = parent.var(v).data();
      for (int i = 1; i <= hx; ++i) {
        for (int j = 1; j <= hy; ++j) {
          const double* c0 = c + s.at(2 * i - 1, 2 * j - 1, 0);
          double* prow = p + s.at(ox + i, oy + j, oz);
          for (int k = 1; k <= hz; ++k) {
            const double* q = c0 + (2 * k - 1);
            // x fastest, then y, then z
            prow[k] =
                q[0] + q[dx] + q[dy] + q[dx + dy] + q[1] + q[dx + 1] + q[dy + 1] + q[dx + dy + 1];
          }
        }
      }
    }
  }
}

Block coarsen(std::span<const Block* const, 8> children) {
  Block parent(children[0]->shape());
  coarsen_into(children, parent);
  return parent;
}

}  // namespace miniamr::stencil
