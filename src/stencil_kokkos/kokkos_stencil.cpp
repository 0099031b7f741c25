#include "stencil_kokkos/kokkos_stencil.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "stencil/stencil_kernels.hpp"

namespace miniamr::stencil_kokkos {

// Kernels live in a named namespace with external linkage, as CUDA's extended lambdas require
// of their enclosing functions.
namespace detail {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
// One variable of a block: extents (nx+2, ny+2, nz+2), z fastest, so Grid(i,j,k) is the cell at
// offset shape.at(i,j,k) of Block::var().
using Grid = Kokkos::View<double***, Kokkos::LayoutRight, Mem, Unmanaged>;
using HostGrid = Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace, Unmanaged>;
using Buffer = Kokkos::View<double*, Mem>;
using Rows = Kokkos::RangePolicy<Exec, Kokkos::IndexType<int>>;
using Cells =
    Kokkos::MDRangePolicy<Exec, Kokkos::Rank<3, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                          Kokkos::IndexType<int>>;

// Two code paths, both valid for any execution space, giving the same bits:
//  * host path (host memory spaces): the kernels work on the block's own storage, one work item
//    per interior row (i,j) whose k loop runs over restrict pointers and vectorises like the
//    native one;
//  * device path: the variable is copied to a device View and back, one work item per cell, so
//    neighbouring work items touch neighbouring cells.
// MINIAMR_KOKKOS_DEVICE_PATH forces the device path on a host space, so that the tests run it.
#ifdef MINIAMR_KOKKOS_DEVICE_PATH
inline constexpr bool kHostPath = false;
#else
inline constexpr bool kHostPath = std::is_same_v<Mem, Kokkos::HostSpace>;
#endif

// The arithmetic of one cell, written once for both paths and as the native row kernels do it
// (stencil_rows.hpp): w, c, e point at cell (x,j,0) of planes i-1, i, i+1 (or of the plane-sum
// planes), r is the row stride, k the cell in the row.
KOKKOS_INLINE_FUNCTION double seven_point(const double* __restrict__ w,
                                          const double* __restrict__ c,
                                          const double* __restrict__ e, int r, int k) {
  return (w[k] + c[k - r] + c[k - 1] + c[k] + c[k + 1] + c[k + r] + e[k]) / 7.0;
}

KOKKOS_INLINE_FUNCTION double plane9(const double* __restrict__ p, int r, int k) {
  return p[k - r - 1] + p[k - r] + p[k - r + 1] + p[k - 1] + p[k] + p[k + 1] + p[k + r - 1] +
         p[k + r] + p[k + r + 1];
}

KOKKOS_INLINE_FUNCTION double combine27(const double* __restrict__ a, const double* __restrict__ b,
                                        const double* __restrict__ c, int k) {
  return (a[k] + b[k] + c[k]) / 27.0;
}

// Work Views, grown on demand and kept between calls; released before Kokkos::finalize.
struct Buffers {
  Buffer device_var;  // the variable itself on the device path
  Buffer work;        // old values (7-point) or plane sums (27-point)

  static Grid grid(Buffer& b, const stencil::BlockShape& s) {
    if (b.extent(0) < s.cells())
      b = Buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "miniamr::stencil_kokkos"),
                 s.cells());
    return Grid(b.data(), std::size_t(s.sx()), std::size_t(s.sy()), std::size_t(s.sz()));
  }
};

std::mutex g_lock;
std::unique_ptr<Buffers> g_buffers;  // guarded by g_lock
bool g_owns_kokkos = false;          // guarded by g_lock

HostGrid host_grid(stencil::Block& block, int var) {
  const stencil::BlockShape& s = block.shape();
  return HostGrid(block.var(var).data(), std::size_t(s.sx()), std::size_t(s.sy()),
                  std::size_t(s.sz()));
}

// The variable where the kernels can reach it: the block's storage itself on the host path, a
// device copy otherwise.
Grid to_space(Buffers& bufs, stencil::Block& block, int var) {
  const HostGrid host = host_grid(block, var);
  if constexpr (kHostPath) {
    return Grid(host.data(), host.extent(0), host.extent(1), host.extent(2));
  } else {
    const Grid dev = Buffers::grid(bufs.device_var, block.shape());
    Kokkos::deep_copy(dev, host);
    return dev;
  }
}

// Makes the kernels' result visible in the block, which is then safe to read on the host.
void from_space(const Grid& u, stencil::Block& block, int var) {
  if constexpr (kHostPath) {
    (void)u;
    (void)block;
    (void)var;
    Kokkos::fence();
  } else {
    Kokkos::deep_copy(host_grid(block, var), u);  // fences
  }
}

// 7-point: new = (W + S + D + C + U + N + E) / 7.0 from a copy of the old values.
void seven_point_rows(const Grid& u, const Grid& old, int nx, int ny, int nz) {
  const int r = nz + 2;
  Kokkos::parallel_for(
      "miniamr::stencil_kokkos::stencil7_rows", Rows(0, nx * ny), KOKKOS_LAMBDA(int n) {
        const int i = n / ny + 1, j = n % ny + 1;
        double* __restrict__ out = &u(i, j, 0);
        const double* __restrict__ w = &old(i - 1, j, 0);
        const double* __restrict__ c = &old(i, j, 0);
        const double* __restrict__ e = &old(i + 1, j, 0);
        for (int k = 1; k <= nz; ++k) out[k] = seven_point(w, c, e, r, k);
      });
}

void seven_point_cells(const Grid& u, const Grid& old, int nx, int ny, int nz) {
  const int r = nz + 2;
  Kokkos::parallel_for(
      "miniamr::stencil_kokkos::stencil7_cells", Cells({1, 1, 1}, {nx + 1, ny + 1, nz + 1}),
      KOKKOS_LAMBDA(int i, int j, int k) {
        u(i, j, k) = seven_point(&old(i - 1, j, 0), &old(i, j, 0), &old(i + 1, j, 0), r, k);
      });
}

void stencil7_kernels(const Grid& u, const Grid& old, int nx, int ny, int nz) {
  Kokkos::deep_copy(old, u);  // contiguous, ghosts included
  if constexpr (kHostPath)
    seven_point_rows(u, old, nx, ny, nz);
  else
    seven_point_cells(u, old, nx, ny, nz);
}

// 27-point: the plane sums P(x) at every interior (j,k) of every plane x = 0..nx+1 from the old
// values, then new = (P(i-1) + P(i) + P(i+1)) / 27.0, the additions of the native kernel in its
// order. The second kernel reads only the plane sums, so it may overwrite the variable.
void twenty_seven_point_rows(const Grid& u, const Grid& q, int nx, int ny, int nz) {
  const int r = nz + 2;
  Kokkos::parallel_for(
      "miniamr::stencil_kokkos::stencil27_planes_rows", Rows(0, (nx + 2) * ny),
      KOKKOS_LAMBDA(int n) {
        const int x = n / ny, j = n % ny + 1;
        double* __restrict__ out = &q(x, j, 0);
        const double* __restrict__ p = &u(x, j, 0);
        for (int k = 1; k <= nz; ++k) out[k] = plane9(p, r, k);
      });
  Kokkos::parallel_for(
      "miniamr::stencil_kokkos::stencil27_rows", Rows(0, nx * ny), KOKKOS_LAMBDA(int n) {
        const int i = n / ny + 1, j = n % ny + 1;
        double* __restrict__ out = &u(i, j, 0);
        const double* __restrict__ a = &q(i - 1, j, 0);
        const double* __restrict__ b = &q(i, j, 0);
        const double* __restrict__ c = &q(i + 1, j, 0);
        for (int k = 1; k <= nz; ++k) out[k] = combine27(a, b, c, k);
      });
}

void twenty_seven_point_cells(const Grid& u, const Grid& q, int nx, int ny, int nz) {
  const int r = nz + 2;
  Kokkos::parallel_for(
      "miniamr::stencil_kokkos::stencil27_planes_cells", Cells({0, 1, 1}, {nx + 2, ny + 1, nz + 1}),
      KOKKOS_LAMBDA(int x, int j, int k) { q(x, j, k) = plane9(&u(x, j, 0), r, k); });
  Kokkos::parallel_for(
      "miniamr::stencil_kokkos::stencil27_cells", Cells({1, 1, 1}, {nx + 1, ny + 1, nz + 1}),
      KOKKOS_LAMBDA(int i, int j, int k) {
        u(i, j, k) = combine27(&q(i - 1, j, 0), &q(i, j, 0), &q(i + 1, j, 0), k);
      });
}

void stencil27_kernels(const Grid& u, const Grid& q, int nx, int ny, int nz) {
  if constexpr (kHostPath)
    twenty_seven_point_rows(u, q, nx, ny, nz);
  else
    twenty_seven_point_cells(u, q, nx, ny, nz);
}

template <class Kernel>
double run(stencil::Block& block, int var, Kernel&& kernel) {
  std::lock_guard<std::mutex> guard(g_lock);
  if (!Kokkos::is_initialized())
    throw std::logic_error("miniamr::stencil_kokkos: Kokkos is not initialised");
  if (!g_buffers) g_buffers = std::make_unique<Buffers>();
  const stencil::BlockShape& s = block.shape();
  const Grid u = to_space(*g_buffers, block, var);
  kernel(u, Buffers::grid(g_buffers->work, s), s.nx, s.ny, s.nz);
  from_space(u, block, var);
  // The native kernels' fused checksum is interior_sum's order, so this is bitwise that sum.
  return stencil::interior_sum(block, var);
}

}  // namespace detail

void initialize(int& argc, char** argv) {
  std::lock_guard<std::mutex> guard(detail::g_lock);
  if (Kokkos::is_initialized()) return;
  Kokkos::initialize(argc, argv);
  detail::g_owns_kokkos = true;
}

void finalize() {
  std::lock_guard<std::mutex> guard(detail::g_lock);
  detail::g_buffers.reset();
  if (detail::g_owns_kokkos && Kokkos::is_initialized()) Kokkos::finalize();
  detail::g_owns_kokkos = false;
}

bool available() {
  return Kokkos::is_initialized();
}

std::string version() {
  return std::to_string(KOKKOS_VERSION / 10000) + "." + std::to_string(KOKKOS_VERSION / 100 % 100) +
         "." + std::to_string(KOKKOS_VERSION % 100) + " (" + Kokkos::DefaultExecutionSpace::name() +
         ")";
}

const char* execution_space_name() {
  return detail::Exec::name();
}

double stencil7(stencil::Block& block, int var) {
  return detail::run(block, var, detail::stencil7_kernels);
}

double stencil27(stencil::Block& block, int var) {
  return detail::run(block, var, detail::stencil27_kernels);
}

}  // namespace miniamr::stencil_kokkos
