#include "runtime/shared_storage.hpp"

#include <new>

#ifdef MINIAMR_SIMGRID
#include <smpi/smpi.h>

#include <mutex>
#include <vector>
#endif

namespace miniamr::runtime {

#ifdef MINIAMR_SIMGRID
namespace {

// The storage of every block of every simulated rank: one buffer, as large as the largest
// block asked for. SMPI_SHARED_MALLOC would map its file at each block's address, a mapping per
// block, and 4096 ranks' blocks outnumber the mappings Linux allows a process
// (vm.max_map_count, 65530 by default). The simulator's ranks all live in this process, so
// the buffer is the process's; a larger block gets a larger buffer, and an older one is kept
// for the blocks still pointing into it.
class OneBlockBuffer {
 public:
  double* at_least(std::size_t doubles) {
    const std::lock_guard lock(mutex_);  // SMPI may run ranks on several threads
    if (doubles > size_) {
      buffers_.emplace_back(
          static_cast<double*>(::operator new[](doubles * sizeof(double), std::align_val_t{64})));
      size_ = doubles;
    }
    return buffers_.back().get();
  }

 private:
  struct AlignedFree {
    void operator()(double* p) const { ::operator delete[](p, std::align_val_t{64}); }
  };
  std::mutex mutex_;
  std::vector<std::unique_ptr<double[], AlignedFree>> buffers_;
  std::size_t size_ = 0;
};

void keep(double*) {}  // the buffer outlives every block

stencil::Block shared_block(const stencil::BlockShape& shape) {
  static OneBlockBuffer buffer;
  return stencil::Block::adopt(shape, buffer.at_least(shape.doubles()), &keep);
}

}  // namespace

stencil::BlockPool::Maker shared_block_storage() {
  return &shared_block;
}

UnreadBytes::UnreadBytes(std::size_t n) : data_(static_cast<char*>(SMPI_SHARED_MALLOC(n))) {
  if (data_ == nullptr) throw std::bad_alloc();
}
void UnreadBytes::Free::operator()(char* p) const {
  SMPI_SHARED_FREE(p);
}
#else
stencil::BlockPool::Maker shared_block_storage() {
  return nullptr;
}

UnreadBytes::UnreadBytes(std::size_t n) : data_(new char[n]()) {}
void UnreadBytes::Free::operator()(char* p) const {
  delete[] p;
}
#endif

}  // namespace miniamr::runtime
