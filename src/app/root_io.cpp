#include "app/root_io.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "app/collective_error.hpp"
#include "app/errors.hpp"
#include "io/output_file.hpp"

namespace miniamr::app {

namespace {

bool is_root(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank == 0;
}

}  // namespace

std::string text_from_root(MPI_Comm comm, const std::function<std::string()>& read) {
  std::string text;
  all_or_none(comm, "reading the input", [&] {
    if (is_root(comm)) text = read();
  });
  std::uint64_t size = text.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, 0, comm);
  text.resize(size);
  MPI_Bcast(text.data(), int(size), MPI_CHAR, 0, comm);
  return text;
}

void write_on_root(MPI_Comm comm, const std::string& path, std::string_view text,
                   std::string_view what) {
  all_or_none(comm, fmt::format("writing {}", what), [&] {
    if (!is_root(comm)) return;
    if (const std::string why = io::write_file_atomically(path, text); !why.empty())
      throw RunError(fmt::format("cannot write {} '{}': {}", what, path, why));
  });
}

}  // namespace miniamr::app
