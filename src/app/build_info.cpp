#include "app/build_info.hpp"

#include <mpi.h>
#include <oneapi/tbb/version.h>

#include <fmt/format.h>

#include "app/version.hpp"
#ifdef MINIAMR_HAVE_KOKKOS
#include "stencil_kokkos/kokkos_stencil.hpp"
#endif

namespace miniamr::app {

BuildInfo build_info() {
  BuildInfo b;
  b.version = MINIAMR_VERSION;
  b.git_revision = MINIAMR_GIT_REVISION;
#if defined(__clang__)
  b.compiler =
      fmt::format("Clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  b.compiler = fmt::format("GCC {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  b.compiler = "unknown";
#endif
  // MPI-3 allows this call before MPI_Init, so --version needs no running MPI.
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  b.mpi_library = std::string(text, std::size_t(length));
  b.mpi_library = b.mpi_library.substr(0, b.mpi_library.find_first_of("\n,"));
#ifdef MINIAMR_HAVE_KOKKOS
  b.kokkos = stencil_kokkos::version();
#else
  b.kokkos = "not built";
#endif
  b.tbb = fmt::format("{}.{}", TBB_VERSION_MAJOR, TBB_VERSION_MINOR);
  return b;
}

std::string version_text() {
  const BuildInfo b = build_info();
  return fmt::format(
      "miniamr {} (git {})\ncompiler: {}\nMPI: {}\noneTBB: {}\nKokkos: {}\n"
      "License BSD-3-Clause: <https://opensource.org/licenses/BSD-3-Clause>\n",
      b.version, b.git_revision, b.compiler, b.mpi_library, b.tbb, b.kokkos);
}

}  // namespace miniamr::app
