// One loop nest per relation, shared by the three forms (direct, pack, unpack): the sender's
// arithmetic lives in load() and the receiver's placement in store(), so direct and packed
// fills run the same floating-point operations and agree bitwise by construction.
#include "stencil/ghost_fill.hpp"

#include <cassert>
#include <cstring>
#include <type_traits>

#include "stencil/face_geom.hpp"
#include "stencil/ghost_layers.hpp"
#include "stencil/isa_variants.hpp"

namespace miniamr::stencil {

namespace {

// The same geometry for a face of an N^3 block without edges, every member a constant: the
// loops below then unroll into straight copies with fixed offsets (a z face is 64 scalar moves
// for N = 8), where the run-time geometry spends as much on index arithmetic as on the copy.
template <int N, int Face>
struct FixedGeom {
  static constexpr FaceGeom g = face_geom(BlockShape{N, N, N, 1}, Face, false);
  static constexpr std::size_t sb = g.sb, sc = g.sc, ghost = g.ghost, sender = g.sender,
                               inner = g.inner;
  static constexpr int face = Face, a = g.a, b = g.b, c = g.c;
  static constexpr int nb = g.nb, nc = g.nc, b_lo = g.b_lo, b_hi = g.b_hi, c_lo = g.c_lo,
                       c_hi = g.c_hi;
};

// Where one side of a face holds the face's cells: cell (ib, ic), 1-based along the face's
// in-plane axes, at at(ib, ic) from the side's first value. A padded block's layer (the sender's
// facing layer, the receiver's ghost layer, a block's own layer next to a boundary face), the
// facing layer of a sender stored compact (compact_stencil.hpp), or a dense ghost layer (one
// face's ghosts alone, rows along c one after the other: the kPacked layer place of
// ghost_layers.hpp). With a FixedGeom every offset is a constant.
template <class Geom>
struct PaddedLayer {
  Geom g;
  std::size_t layer;
  std::ptrdiff_t sb() const { return std::ptrdiff_t(g.sb); }
  std::ptrdiff_t sc() const { return std::ptrdiff_t(g.sc); }
  std::ptrdiff_t at(int ib, int ic) const {
    return std::ptrdiff_t(layer + std::size_t(ib) * g.sb + std::size_t(ic) * g.sc);
  }
};

template <class Geom>
struct CompactLayer {
  Geom g;
  LayerPlace p = compact_layer_place(g.nb, g.face, false);  // the sender's layer facing g's face
  std::ptrdiff_t sb() const { return p.sb; }
  std::ptrdiff_t sc() const { return p.sc; }
  std::ptrdiff_t at(int ib, int ic) const { return p.offset + (ib - 1) * p.sb + (ic - 1) * p.sc; }
};

template <class Geom>
struct DenseLayer {
  Geom g;
  std::ptrdiff_t sb() const { return g.nc; }
  std::ptrdiff_t sc() const { return 1; }
  std::ptrdiff_t at(int ib, int ic) const { return std::ptrdiff_t(ib - 1) * g.nc + (ic - 1); }
};

// Which storage each side of a fill is: a maker of the From (sender) and To (receiver)
// placements for a face geometry.
struct PaddedSides {  // padded blocks on both sides
  template <class Geom>
  static auto from(const Geom& g) {
    return PaddedLayer<Geom>{g, g.sender};
  }
  template <class Geom>
  static auto to(const Geom& g) {
    return PaddedLayer<Geom>{g, g.ghost};
  }
};
struct CompactToDense {  // a compact sender into a dense ghost layer
  template <class Geom>
  static auto from(const Geom& g) {
    return CompactLayer<Geom>{g};
  }
  template <class Geom>
  static auto to(const Geom& g) {
    return DenseLayer<Geom>{g};
  }
};

// Same level and boundary: one value per ghost cell, a plain copy.
template <class Geom, class From, class To>
struct Copy {
  Geom g;
  From from;
  To to;
  int b_lo() const { return g.b_lo; }
  int b_hi() const { return g.b_hi; }
  int c_lo() const { return g.c_lo; }
  int c_hi() const { return g.c_hi; }
  double load(const double* src, int ib, int ic) const { return src[from.at(ib, ic)]; }
  void store(double* dst, int ib, int ic, double x) const { dst[to.at(ib, ic)] = x; }
};

// Coarse sender, fine receiver: the sender's quadrant cells / 4, each spread over 2x2 ghosts.
template <class Geom, class From, class To>
struct CoarseToFine {
  Geom g;
  From from;
  To to;
  int qb, qc;  // first coarse cell of the quadrant, minus one
  int b_lo() const { return 1; }
  int b_hi() const { return g.nb / 2; }
  int c_lo() const { return 1; }
  int c_hi() const { return g.nc / 2; }
  double load(const double* src, int jb, int jc) const {
    return src[from.at(qb + jb, qc + jc)] / 4.0;
  }
  void store(double* dst, int jb, int jc, double x) const {
    double* p = dst + to.at(2 * jb - 1, 2 * jc - 1);
    p[0] = x;
    p[to.sc()] = x;
    p[to.sb()] = x;
    p[to.sb() + to.sc()] = x;
  }
};

// Fine sender, coarse receiver: sum of 2x2 sender face cells (second in-plane index fastest)
// into one ghost of the quadrant the sender covers.
template <class Geom, class From, class To>
struct FineToCoarse {
  Geom g;
  From from;
  To to;
  int qb, qc;
  int b_lo() const { return 1; }
  int b_hi() const { return g.nb / 2; }
  int c_lo() const { return 1; }
  int c_hi() const { return g.nc / 2; }
  double load(const double* src, int jb, int jc) const {
    const double* p = src + from.at(2 * jb - 1, 2 * jc - 1);
    return p[0] + p[from.sc()] + p[from.sb()] + p[from.sb() + from.sc()];
  }
  void store(double* dst, int jb, int jc, double x) const { dst[to.at(qb + jb, qc + jc)] = x; }
};

// Same-level faces across x and y: the in-plane axis c is z, contiguous, so each row is one
// block copy (the generic loops below cannot know the stride is 1). Copies the face's rows of
// one variable from `from` to `to`, each side either storage in its placement or a packed face
// (rows one after the other); returns the doubles of the packed face. Rows are short (nz
// doubles): a copy of a size known at compile time is inlined, a libc call per row is not.
template <bool kFromPacked, bool kToPacked, class Rule>
std::size_t copy_rows(const Rule& r, const double* from, double* to) {
  const auto rows = [&](auto width) {
    std::size_t k = 0;
    for (int ib = r.b_lo(); ib <= r.b_hi(); ++ib, k += width) {
      std::memcpy(to + (kToPacked ? std::ptrdiff_t(k) : r.to.at(ib, r.c_lo())),
                  from + (kFromPacked ? std::ptrdiff_t(k) : r.from.at(ib, r.c_lo())),
                  width * sizeof(double));
    }
    return k;
  };
  switch (const auto n = std::size_t(r.c_hi() - r.c_lo() + 1)) {
    case 8:
      return rows(std::integral_constant<std::size_t, 8>{});
    case 16:
      return rows(std::integral_constant<std::size_t, 16>{});
    default:
      return rows(n);
  }
}

template <class Rule>
constexpr bool is_copy = false;
template <class Geom, class From, class To>
constexpr bool is_copy<Copy<Geom, From, To>> = true;

// One variable of a face from `from` to `to` under rule `r`, each side either a block's
// variable (the rule's load at the sender, its store at the receiver) or a packed face (values
// in loop order). Returns the doubles of the packed face.
template <bool kFromPacked, bool kToPacked, class Rule>
std::size_t move_face(const Rule& r, const double* from, double* to) {
  if constexpr (is_copy<Rule>) {
    if ((kFromPacked || r.from.sc() == 1) && (kToPacked || r.to.sc() == 1))
      return copy_rows<kFromPacked, kToPacked>(r, from, to);
  }
  std::size_t n = 0;
  for (int ib = r.b_lo(); ib <= r.b_hi(); ++ib)
    for (int ic = r.c_lo(); ic <= r.c_hi(); ++ic, ++n) {
      double x;
      if constexpr (kFromPacked)
        x = from[n];
      else
        x = r.load(from, ib, ic);
      if constexpr (kToPacked)
        to[n] = x;
      else
        r.store(to, ib, ic, x);
    }
  return n;
}

template <class Rule>
void direct(const Rule& r, const Block& src, Block& dst, VarRange vars) {
  for (int v = vars.v0; v < vars.v1; ++v)
    move_face<false, false>(r, src.var(v).data(), dst.var(v).data());
}

template <class Rule>
std::size_t pack_rule(const Rule& r, const Block& src, VarRange vars, std::span<double> out) {
  std::size_t n = 0;
  for (int v = vars.v0; v < vars.v1; ++v)
    n += move_face<false, true>(r, src.var(v).data(), out.data() + n);
  return n;
}

template <class Rule>
std::size_t unpack_rule(const Rule& r, Block& dst, VarRange vars, std::span<const double> in) {
  std::size_t n = 0;
  for (int v = vars.v0; v < vars.v1; ++v)
    n += move_face<true, false>(r, in.data() + n, dst.var(v).data());
  return n;
}

// Runs `op` with the rule object of the link's relation on face geometry `g`, its sides placed
// as `Sides` says.
template <class Sides, class Geom, class Op>
auto with_relation(const Geom& g, const FaceLink& link, Op&& op) {
  assert(link.relation == GhostRelation::kSameLevel || (g.nb % 2 == 0 && g.nc % 2 == 0));
  const auto from = Sides::from(g);
  const auto to = Sides::to(g);
  using From = decltype(from);
  using To = decltype(to);
  const int qb = link.quadrant.q1 * (g.nb / 2);
  const int qc = link.quadrant.q2 * (g.nc / 2);
  switch (link.relation) {
    case GhostRelation::kCoarseToFine:
      return op(CoarseToFine<Geom, From, To>{g, from, to, qb, qc});
    case GhostRelation::kFineToCoarse:
      return op(FineToCoarse<Geom, From, To>{g, from, to, qb, qc});
    case GhostRelation::kSameLevel:
    default:
      return op(Copy<Geom, From, To>{g, from, to});
  }
}

// Runs `op` with the geometry of `face`: a FixedGeom for faces of 8^3 and 16^3 blocks without
// edges (the 7-point stencils' fills), the run-time FaceGeom otherwise.
template <int N, class Op>
auto with_fixed_geom(int face, Op&& op) {
  switch (face) {
    case 0:
      return op(FixedGeom<N, 0>{});
    case 1:
      return op(FixedGeom<N, 1>{});
    case 2:
      return op(FixedGeom<N, 2>{});
    case 3:
      return op(FixedGeom<N, 3>{});
    case 4:
      return op(FixedGeom<N, 4>{});
    default:
      return op(FixedGeom<N, 5>{});
  }
}

template <class Op>
auto with_geom(const BlockShape& s, int face, bool with_edges, Op&& op) {
  if (!with_edges && s.nx == s.ny && s.ny == s.nz) {
    if (s.nx == 8) return with_fixed_geom<8>(face, op);
    if (s.nx == 16) return with_fixed_geom<16>(face, op);
  }
  return op(face_geom(s, face, with_edges));
}

template <class Sides = PaddedSides, class Op>
auto with_rule(const BlockShape& s, const FaceLink& link, bool with_edges, Op&& op) {
  return with_geom(s, link.face, with_edges,
                   [&](const auto& g) { return with_relation<Sides>(g, link, op); });
}

}  // namespace

std::size_t packed_size(const BlockShape& shape, GhostRelation relation, int axis, int num_vars,
                        bool with_edges) {
  const FaceGeom g = face_geom(shape, 2 * axis, with_edges);
  std::size_t per_var = 0;
  if (relation == GhostRelation::kSameLevel)
    per_var = std::size_t(g.b_hi - g.b_lo + 1) * std::size_t(g.c_hi - g.c_lo + 1);
  else
    per_var = std::size_t(g.nb / 2) * std::size_t(g.nc / 2);
  return per_var * std::size_t(num_vars);
}

void fill_direct(Block& dst, const Block& src, const FaceLink& link, VarRange vars,
                 bool with_edges) {
  assert(src.shape() == dst.shape());
  with_rule(dst.shape(), link, with_edges, [&](const auto& rule) { direct(rule, src, dst, vars); });
}

std::size_t pack(const Block& src, const FaceLink& link, VarRange vars, bool with_edges,
                 std::span<double> out) {
  assert(out.size() >=
         packed_size(src.shape(), link.relation, link.face / 2, vars.count(), with_edges));
  return with_rule(src.shape(), link, with_edges,
                   [&](const auto& rule) { return pack_rule(rule, src, vars, out); });
}

std::size_t unpack(Block& dst, const FaceLink& link, VarRange vars, bool with_edges,
                   std::span<const double> in) {
  assert(in.size() >=
         packed_size(dst.shape(), link.relation, link.face / 2, vars.count(), with_edges));
  return with_rule(dst.shape(), link, with_edges,
                   [&](const auto& rule) { return unpack_rule(rule, dst, vars, in); });
}

void fill_boundary(Block& block, int face, VarRange vars, bool with_edges) {
  with_geom(block.shape(), face, with_edges, [&](const auto& g) {
    // The block is both sides: its interior layer next to the face into its ghost layer.
    using Geom = std::decay_t<decltype(g)>;
    const PaddedLayer<Geom> inner{g, g.inner};
    const Copy<Geom, PaddedLayer<Geom>, PaddedLayer<Geom>> rule{g, inner, PaddedSides::to(g)};
    for (int v = vars.v0; v < vars.v1; ++v)
      move_face<false, false>(rule, block.var(v).data(), block.var(v).data());
  });
}

void fill_layer(double* layer, std::ptrdiff_t layer_next, const double* src,
                std::ptrdiff_t src_next, const BlockShape& shape, const FaceLink& link,
                VarRange vars) {
  assert(shape.nx == shape.ny && shape.ny == shape.nz);
  with_rule<CompactToDense>(shape, link, false, [&](const auto& rule) {
    for (int v = 0; v < vars.count(); ++v)
      move_face<false, false>(rule, src + v * src_next, layer + v * layer_next);
  });
}

std::size_t pack_compact(const double* src, std::ptrdiff_t src_next, const BlockShape& shape,
                         const FaceLink& link, VarRange vars, std::span<double> out) {
  assert(shape.nx == shape.ny && shape.ny == shape.nz);
  assert(out.size() >= packed_size(shape, link.relation, link.face / 2, vars.count(), false));
  return with_rule<CompactToDense>(shape, link, false, [&](const auto& rule) {
    std::size_t n = 0;
    for (int v = 0; v < vars.count(); ++v)
      n += move_face<false, true>(rule, src + v * src_next, out.data() + n);
    return n;
  });
}

std::size_t unpack_layer(double* layer, std::ptrdiff_t layer_next, const BlockShape& shape,
                         const FaceLink& link, VarRange vars, std::span<const double> in) {
  assert(shape.nx == shape.ny && shape.ny == shape.nz);
  assert(in.size() >= packed_size(shape, link.relation, link.face / 2, vars.count(), false));
  return with_rule<CompactToDense>(shape, link, false, [&](const auto& rule) {
    std::size_t n = 0;
    for (int v = 0; v < vars.count(); ++v)
      n += move_face<true, false>(rule, in.data() + n, layer + v * layer_next);
    return n;
  });
}

// The instruction-set variants (kernel_set.hpp).
#define MINIAMR_GHOST_VARIANTS(ns, tgt)                                                         \
  MINIAMR_KERNEL_VARIANT(ns, tgt, void, fill_direct,                                            \
                         (Block & d, const Block& s, const FaceLink& l, VarRange v, bool e),    \
                         (d, s, l, v, e))                                                       \
  MINIAMR_KERNEL_VARIANT(ns, tgt, void, fill_boundary, (Block & b, int f, VarRange v, bool e),  \
                         (b, f, v, e))                                                          \
  MINIAMR_KERNEL_VARIANT(                                                                       \
      ns, target, std::size_t, pack,                                                            \
      (const Block& s, const FaceLink& l, VarRange v, bool e, std::span<double> o),             \
      (s, l, v, e, o))                                                                          \
  MINIAMR_KERNEL_VARIANT(                                                                       \
      ns, target, std::size_t, unpack,                                                          \
      (Block & d, const FaceLink& l, VarRange v, bool e, std::span<const double> i),            \
      (d, l, v, e, i))                                                                          \
  MINIAMR_KERNEL_VARIANT(ns, tgt, void, fill_layer,                                             \
                         (double* l, std::ptrdiff_t ln, const double* s, std::ptrdiff_t sn,     \
                          const BlockShape& b, const FaceLink& f, VarRange v),                  \
                         (l, ln, s, sn, b, f, v))                                               \
  MINIAMR_KERNEL_VARIANT(ns, tgt, std::size_t, pack_compact,                                    \
                         (const double* s, std::ptrdiff_t sn, const BlockShape& b,              \
                          const FaceLink& f, VarRange v, std::span<double> o),                  \
                         (s, sn, b, f, v, o))                                                   \
  MINIAMR_KERNEL_VARIANT(ns, tgt, std::size_t, unpack_layer,                                    \
                         (double* l, std::ptrdiff_t ln, const BlockShape& b, const FaceLink& f, \
                          VarRange v, std::span<const double> i),                               \
                         (l, ln, b, f, v, i))
MINIAMR_FOR_EACH_WIDER_ISA(MINIAMR_GHOST_VARIANTS)

}  // namespace miniamr::stencil
