// Storage that all the ranks of a simulation share, for values nobody reads: the blocks of a
// run whose kernels are priced instead of run (--compute model: no sum is checked, no field
// written), and messages that only time a link or carry such blocks. The simulator keeps every
// rank in one process; with one copy standing for all of them its memory no longer grows with
// the mesh, nor with the messages in flight.
#pragma once

#include <cstddef>
#include <memory>

#include "stencil/block_pool.hpp"

namespace miniamr::comm {

// The maker of such blocks in the simulation build (all of them over shared_doubles); null in
// a build over a real MPI, where every rank is a process of its own.
stencil::BlockPool::Maker shared_block_storage();

// At least n doubles, 64-byte aligned, whose values nobody reads: the same storage for every
// caller in the process, valid until it ends (a larger request gets a larger buffer; the older
// one stays for those pointing into it).
double* shared_doubles(std::size_t n);

// n bytes whose values nobody reads: in the simulation build SMPI_SHARED_MALLOC's (one small
// file mapped at every such allocation, whose messages SMPI does not copy), elsewhere the
// rank's own, zeroed.
class UnreadBytes {
 public:
  explicit UnreadBytes(std::size_t n);
  char* data() { return data_.get(); }

 private:
  struct Free {
    void operator()(char* p) const;
  };
  std::unique_ptr<char[], Free> data_;
};

}  // namespace miniamr::comm
