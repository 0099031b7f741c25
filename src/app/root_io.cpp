#include "app/root_io.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "app/errors.hpp"
#include "app/output_file.hpp"

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
  int ok = 1;
  if (is_root(comm)) {
    try {
      text = read();
    } catch (const UsageError& e) {
      ok = 0;
      text = e.what();
    }
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
  std::uint64_t size = text.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, 0, comm);
  text.resize(size);
  MPI_Bcast(text.data(), int(size), MPI_CHAR, 0, comm);
  if (!ok) throw UsageError(text);
  return text;
}

void write_on_root(MPI_Comm comm, const std::string& path, std::string_view text,
                   std::string_view what) {
  int ok = 1;
  if (is_root(comm)) ok = write_file_atomically(path, text) ? 1 : 0;
  MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
  if (!ok) throw RunError(fmt::format("cannot write {} '{}'", what, path));
}

}  // namespace miniamr::app
