// Memory for large buffers (blocks, migration messages) mapped in before it is first written.
#pragma once

#include <cstddef>

namespace miniamr::stencil {

// Asks the system to back the whole pages of [p, p + bytes) with memory now, in one call. A new
// allocation written page by page takes a fault per 4 KiB page, which on a virtual machine made
// first touch three times slower than this call. Only a hint: the contents do not change, and
// where it is unsupported the first writes fault the pages in as before. False when the system
// had no memory for them.
bool map_pages(void* p, std::size_t bytes);

// The memory page size in bytes.
std::size_t page_bytes();

}  // namespace miniamr::stencil
