// Parallel HDF5 files: rows written by every rank at once read back whole under any other
// distribution, attributes round-trip, and what is missing or foreign is an h5::Error.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "h5/h5file.hpp"
#include "mpi_checks.hpp"

using miniamr::h5::Error;
using miniamr::h5::File;
using mpi_checks::all_ranks;
using mpi_checks::world_rank;
using mpi_checks::world_size;

namespace {

// One path for all ranks, named after rank 0's process.
std::string shared_path(const char* suffix) {
  return "/tmp/miniamr_h5_test_" + std::to_string(mpi_checks::run_id()) + suffix;
}

TEST(H5File, RowsWrittenByEveryRankReadBackUnderAnotherDistribution) {
  const std::string path = shared_path(".h5");
  const int p = world_size(), r = world_rank();
  // Rank r holds r+1 rows of width 3: row i holds 3i, 3i+1, 3i+2.
  const std::int64_t total = std::int64_t(p) * (p + 1) / 2, first = std::int64_t(r) * (r + 1) / 2;
  std::vector<double> mine(std::size_t(3 * (r + 1)));
  std::iota(mine.begin(), mine.end(), double(3 * first));
  {
    File f = File::create(path, MPI_COMM_WORLD);
    f.write_rows<double>("fields/values", mine, first, total, 3);
    f.set_attribute("program", "miniamr");
    f.set_attribute("timestep", std::int64_t{42});
    f.close();
  }
  File f = File::open(path, MPI_COMM_WORLD);
  EXPECT_TRUE(all_ranks(f.rows("fields/values") == total));
  // Every rank reads all rows: the whole dataset in order.
  const std::vector<double> all = f.read_rows<double>("fields/values", 0, total, 3);
  std::vector<double> want(std::size_t(3 * total));
  std::iota(want.begin(), want.end(), 0.0);
  EXPECT_TRUE(all_ranks(all == want, "rows read back differ"));
  // Rows with gaps: every other row from this rank's parity on, in one collective read.
  std::vector<std::int64_t> rows;
  for (std::int64_t i = r % 2; i < total; i += 2) rows.push_back(i);
  const std::vector<double> some = f.read_row_list<double>("fields/values", rows, 3);
  bool same = some.size() == rows.size() * 3;
  for (std::size_t j = 0; same && j < rows.size(); ++j)
    for (std::size_t c = 0; c < 3; ++c)
      same = same && some[3 * j + c] == double(3 * rows[j]) + double(c);
  EXPECT_TRUE(all_ranks(same, "rows read by list differ"));
  EXPECT_TRUE(all_ranks(f.text_attribute("program") == "miniamr"));
  EXPECT_TRUE(all_ranks(f.int_attribute("timestep") == 42));
  bool threw = false;
  try {
    (void)f.read_rows<double>("fields/missing", 0, 1, 3);
  } catch (const Error& e) {
    threw = std::string(e.what()).find("has no dataset fields/missing") != std::string::npos;
  }
  EXPECT_TRUE(all_ranks(threw, "no error for a missing dataset"));
  threw = false;
  try {
    (void)f.read_rows<double>("fields/values", total - 1, 2, 3);
  } catch (const Error&) {
    threw = true;
  }
  EXPECT_TRUE(all_ranks(threw, "no error for rows past the end"));
  f.close();
  MPI_Barrier(MPI_COMM_WORLD);
  if (r == 0) std::remove(path.c_str());
}

TEST(H5File, RanksWithoutRowsTakePartAndRealAttributesRoundTrip) {
  const std::string path = shared_path(".empty.h5");
  const int p = world_size(), r = world_rank();
  // Only the last rank holds rows (x, y, z, level words), as ranks without blocks hold none.
  const std::vector<std::uint32_t> mine = r == p - 1
                                              ? std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6, 7, 8}
                                              : std::vector<std::uint32_t>{};
  {
    File f = File::create(path, MPI_COMM_WORLD);
    f.write_rows<std::uint32_t>("cells/key", mine, 0, 2, 4);
    f.set_attribute("time", 2.5);
    f.close();
  }
  File f = File::open(path, MPI_COMM_WORLD);
  const std::vector<std::uint32_t> all = f.read_rows<std::uint32_t>("cells/key", 0, 2, 4);
  EXPECT_TRUE(all_ranks(all == std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6, 7, 8},
                        "rows of the only rank that had any"));
  EXPECT_TRUE(all_ranks(f.real_attribute("time") == 2.5));
  f.close();
  MPI_Barrier(MPI_COMM_WORLD);
  if (r == 0) std::remove(path.c_str());
}

TEST(H5File, AForeignFileIsAnError) {
  const std::string path = shared_path(".txt");
  if (world_rank() == 0) std::ofstream(path) << "not an HDF5 file\n";
  MPI_Barrier(MPI_COMM_WORLD);
  bool threw = false;
  try {
    (void)File::open(path, MPI_COMM_WORLD);
  } catch (const Error& e) {
    threw = std::string(e.what()).find("not a readable HDF5 file") != std::string::npos;
  }
  EXPECT_TRUE(all_ranks(threw, "a text file opened as HDF5"));
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) std::remove(path.c_str());
}

}  // namespace
