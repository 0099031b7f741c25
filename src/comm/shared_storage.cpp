#include "comm/shared_storage.hpp"

#include <algorithm>
#include <mutex>
#include <new>
#include <vector>

#ifdef MINIAMR_SIMGRID
#include <smpi/smpi.h>
#endif

#include "stencil/aligned_doubles.hpp"

namespace miniamr::comm {

namespace {

// One buffer for the whole process, as large as the largest request. SMPI_SHARED_MALLOC would
// map its file at each block's address, a mapping per block, and 4096 simulated ranks' blocks
// outnumber the mappings Linux allows a process (vm.max_map_count, 65530 by default); the
// simulated ranks all live in this process, so its own buffer serves them all.
class OneBuffer {
 public:
  double* at_least(std::size_t doubles) {
    const std::lock_guard lock(mutex_);  // SMPI may run ranks on several threads
    if (doubles > size_) {
      buffers_.push_back(stencil::aligned_doubles(doubles));
      size_ = doubles;
    }
    return buffers_.back().get();
  }

 private:
  std::mutex mutex_;
  std::vector<stencil::AlignedDoubles> buffers_;
  std::size_t size_ = 0;
};

}  // namespace

double* shared_doubles(std::size_t n) {
  static OneBuffer buffer;
  return buffer.at_least(std::max<std::size_t>(n, 1));
}

#ifdef MINIAMR_SIMGRID
namespace {

void keep(double*) {}  // the buffer outlives every block

stencil::Block shared_block(const stencil::BlockShape& shape) {
  return stencil::Block::adopt(shape, shared_doubles(shape.doubles()), &keep);
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

}  // namespace miniamr::comm
