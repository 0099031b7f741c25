#include "runtime/unit_storage.hpp"

namespace miniamr::runtime {

void DenseGhostLayers::number(std::span<const std::array<FaceRead, 6>> reads) {
  slot_.assign(reads.size(), {});
  slots_ = 0;
  for (std::size_t b = 0; b < reads.size(); ++b)
    for (std::size_t f = 0; f < 6; ++f)
      slot_[b][f] = reads[b][f].kind == FaceRead::Kind::kGhost ? slots_++ : kNoSlot;
}

void DenseGhostLayers::resize(std::size_t vars) {
  vars_ = vars;
  data_.resize(slots_ * vars * stencil::kCompactFaceCells);
}

double* DenseGhostLayers::layer(std::size_t b, int f, std::size_t var) {
  const std::size_t slot = slot_[b][std::size_t(f)];
  assert(slot != kNoSlot && var < vars_);
  return data_.data() + (slot * vars_ + var) * stencil::kCompactFaceCells;
}

}  // namespace miniamr::runtime
