// Where a unit step finds the values it fills, packs and sweeps: the storage policy of the
// schedule kit (schedule_kit.hpp). Two types with one interface, so the kit's loops are written
// once and neither mapper branches on storage:
//   * PaddedStorage: each block's variables with their ghost layers (stencil/block.hpp);
//   * CompactStorage: the 8^3 interiors of the chunk's variables stored compact
//     (stencil/compact_stencil.hpp), the faces a sweep reads as ghosts in dense ghost layers.
// Both run the same operations in the same order, so they give the same bits
// (stencil/ghost_fill.hpp).
#pragma once

#include <array>
#include <cassert>
#include <cstddef>
#include <span>
#include <vector>

#include "mesh/domain.hpp"
#include "runtime/schedule.hpp"
#include "runtime/stage_kernels.hpp"
#include "stencil/compact_stencil.hpp"

namespace miniamr::runtime {

// Variable v0 of a packed face in one of the kit's buffers, and the doubles from there to the
// next variable's copy.
struct PackedLayer {
  const double* first = nullptr;
  std::ptrdiff_t next = 0;
};

// The dense ghost layers of a compact sweep: one per face that a block's sweep reads from its
// ghost layer (FaceRead::Kind::kGhost: level changes), each holding the chunk's variables one
// after the other.
class DenseGhostLayers {
 public:
  // Numbers the faces of `reads` (per block) read from the ghost layer.
  void number(std::span<const std::array<FaceRead, 6>> reads);
  // Room for `vars` variables of every layer.
  void resize(std::size_t vars);
  // Block b's layer of face f, at its variable `var` (counted from the chunk's first).
  double* layer(std::size_t b, int f, std::size_t var = 0);

 private:
  static constexpr std::size_t kNoSlot = ~std::size_t{0};
  std::vector<std::array<std::size_t, 6>> slot_;  // per block and face (kNoSlot: read elsewhere)
  std::size_t slots_ = 0, vars_ = 0;
  std::vector<double> data_;
};

class PaddedStorage {
 public:
  PaddedStorage(mesh::Domain& domain, const StageKernels& kernels)
      : domain_(domain), kernels_(kernels), k_(kernels.native()) {}

  void direct(const GhostTask& t, stencil::VarRange v, bool edges) {
    k_.fill_direct(domain_.blocks[t.dst], domain_.blocks[t.src], t.link, v, edges);
  }
  void boundary(const GhostTask& t, stencil::VarRange v, bool edges) {
    k_.fill_boundary(domain_.blocks[t.dst], t.link.face, v, edges);
  }
  void pack(std::size_t src, const stencil::FaceLink& link, stencil::VarRange v, bool edges,
            std::span<double> out) {
    k_.pack(domain_.blocks[src], link, v, edges, out);
  }
  void unpack(std::size_t dst, const stencil::FaceLink& link, stencil::VarRange v, bool edges,
              std::span<const double> in) {
    k_.unpack(domain_.blocks[dst], link, v, edges, in);
  }
  // Sweeps block b reading its faces where `reads` says (face-only stencils) and copying out the
  // layers `copies` asks for. `faces` finds variable v.v0 of a packed face (faces.read(r), a
  // PackedLayer) and of a deferred slot (faces.copy_to(slot), a double*).
  template <class Faces>
  void sweep(std::size_t b, const StageWork& work, stencil::VarRange v,
             const std::array<FaceRead, 6>& reads, const std::array<FaceSlot, 6>& copies,
             Faces& faces, std::span<double> scratch, std::span<double> sums) {
    stencil::Block& block = domain_.blocks[b];
    stencil::GhostLayers l = stencil::own_ghost_layers(block, v.v0);
    const auto var_next = std::ptrdiff_t(block.shape().var_stride());
    for (std::size_t f = 0; f < 6; ++f) {
      const FaceRead& r = reads[f];
      PackedLayer from{nullptr, var_next};
      switch (r.kind) {
        case FaceRead::Kind::kGhost:
          continue;
        case FaceRead::Kind::kMirror:
          from.first = block.var(v.v0).data();
          break;
        case FaceRead::Kind::kNeighbour:
          from.first = domain_.blocks[r.from].var(v.v0).data();
          break;
        case FaceRead::Kind::kDeferred:
        case FaceRead::Kind::kPacked:
          from = faces.read(r);
          break;
      }
      l.face[f] = {from.first + r.place.offset, r.place.sb, r.place.sc, from.next};
    }
    copy_layers(copies, faces, l);
    kernels_.sweep(block, work, v, scratch, sums, &l);
  }
  // Sweeps block b from its own ghosts (stencils that read edges, the variable-work kernels).
  void sweep_ghosts(std::size_t b, const StageWork& work, stencil::VarRange v,
                    std::span<double> scratch, std::span<double> sums) {
    kernels_.sweep(domain_.blocks[b], work, v, scratch, sums);
  }
  // Sweeps are counted by the kernels as they run.
  void count(std::int64_t) const {}

  template <class Faces>
  static void copy_layers(const std::array<FaceSlot, 6>& copies, Faces& faces,
                          stencil::GhostLayers& l) {
    for (std::size_t f = 0; f < 6; ++f)
      if (const FaceSlot& c = copies[f]; c.size > 0)
        l.copy[f] = {faces.copy_to(c), std::ptrdiff_t(c.size)};
  }

 private:
  mesh::Domain& domain_;
  const StageKernels& kernels_;
  const stencil::KernelSet& k_;
};

class CompactStorage {
 public:
  CompactStorage(const mesh::Domain& domain, const StageKernels& kernels,
                 stencil::CompactVars& compact, DenseGhostLayers& ghosts)
      : shape_(domain.shape),
        kernels_(kernels),
        k_(kernels.native()),
        compact_(compact),
        ghosts_(ghosts) {}

  void direct(const GhostTask& t, stencil::VarRange v, bool) {
    k_.fill_layer(layer(t.dst, t.link.face, v), kLayerNext, compact_.var(t.src, v.v0), kVarNext,
                  shape_, t.link, v);
  }
  void boundary(const GhostTask&, stencil::VarRange, bool) {
    assert(false);  // face-only sweeps read boundary faces in place
  }
  void pack(std::size_t src, const stencil::FaceLink& link, stencil::VarRange v, bool,
            std::span<double> out) {
    k_.pack_compact(compact_.var(src, v.v0), kVarNext, shape_, link, v, out);
  }
  void unpack(std::size_t dst, const stencil::FaceLink& link, stencil::VarRange v, bool,
              std::span<const double> in) {
    k_.unpack_layer(layer(dst, link.face, v), kLayerNext, shape_, link, v, in);
  }
  template <class Faces>
  void sweep(std::size_t b, const StageWork& work, stencil::VarRange v,
             const std::array<FaceRead, 6>& reads, const std::array<FaceSlot, 6>& copies,
             Faces& faces, std::span<double> scratch, std::span<double> sums) {
    stencil::GhostLayers l;
    for (std::size_t f = 0; f < 6; ++f) {
      const FaceRead& r = reads[f];
      if (r.kind == FaceRead::Kind::kGhost) {
        const stencil::LayerPlace at = stencil::kDenseLayerPlace;
        l.face[f] = {layer(b, int(f), v), at.sb, at.sc, kLayerNext};
      } else if (r.kind == FaceRead::Kind::kMirror || r.kind == FaceRead::Kind::kNeighbour) {
        const bool own = r.kind == FaceRead::Kind::kMirror;
        const stencil::LayerPlace at = stencil::compact_layer_place(int(f), own);
        l.face[f] = {compact_.var(own ? b : r.from, v.v0) + at.offset, at.sb, at.sc, kVarNext};
      } else {
        const PackedLayer from = faces.read(r);
        l.face[f] = {from.first + r.place.offset, r.place.sb, r.place.sc, from.next};
      }
    }
    PaddedStorage::copy_layers(copies, faces, l);
    kernels_.sweep_compact(compact_.var(b, v.v0), work, v, scratch, sums, l);
  }
  void sweep_ghosts(std::size_t, const StageWork&, stencil::VarRange, std::span<double>,
                    std::span<double>) {
    assert(false);  // stencils that read edges sweep padded blocks
  }
  // Compact sweeps are counted once per unit step (stage_kernels.hpp).
  void count(std::int64_t block_vars) const { kernels_.count_compact(block_vars); }

 private:
  static constexpr auto kVarNext = std::ptrdiff_t(stencil::kCompactCells);
  static constexpr auto kLayerNext = std::ptrdiff_t(stencil::kCompactFaceCells);
  double* layer(std::size_t b, int face, stencil::VarRange v) {
    return ghosts_.layer(b, face, std::size_t(v.v0 - compact_.vars().v0));
  }

  const stencil::BlockShape& shape_;
  const StageKernels& kernels_;
  const stencil::KernelSet& k_;
  stencil::CompactVars& compact_;
  DenseGhostLayers& ghosts_;
};

}  // namespace miniamr::runtime
