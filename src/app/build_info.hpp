// What this miniamr is: its version and git revision, and the compiler and libraries it was
// built with, for --version and the provenance of every results file.
#pragma once

#include <string>

namespace miniamr::app {

struct BuildInfo {
  std::string version;       // project(VERSION), e.g. "0.1.0"
  std::string git_revision;  // `git describe --always --dirty` at configure time, or "unknown"
  std::string compiler;      // e.g. "GCC 12.2.0"
  std::string mpi_library;   // the first line of MPI_Get_library_version
  std::string kokkos;        // "3.4.1" or "not built"
  std::string tbb;           // oneTBB's version
};

BuildInfo build_info();

// The text of --version.
std::string version_text();

}  // namespace miniamr::app
