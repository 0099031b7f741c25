// A folder used by one process at a time: the lock is refused while held, free again when its
// holder lets go, and never taken through a planted link.
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "io/folder_lock.hpp"
#include "io/output_file.hpp"

namespace fs = std::filesystem;
using miniamr::io::FolderLock;

namespace {

struct Scratch {
  fs::path dir;
  Scratch() {
    std::string pattern = (fs::temp_directory_path() / "miniamr-lock-XXXXXX").string();
    dir = ::mkdtemp(pattern.data());
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

}  // namespace

TEST(FolderLock, OneHolderAtATime) {
  Scratch s;
  FolderLock first, second;
  ASSERT_EQ(first.acquire(s.dir.string()), "");
  // flock locks belong to the open file: a second holder in this very process is refused too.
  const std::string why = second.acquire(s.dir.string());
  EXPECT_NE(why.find("another run is using it (process " + std::to_string(::getpid())),
            std::string::npos)
      << why;
  EXPECT_FALSE(second.held());
  first.release();
  EXPECT_EQ(second.acquire(s.dir.string()), "");
  FolderLock moved = std::move(second);
  EXPECT_TRUE(moved.held());
  EXPECT_FALSE(second.held());  // NOLINT(bugprone-use-after-move): the move empties it
}

TEST(FolderLock, NeverThroughALink) {
  Scratch s;
  fs::create_symlink(s.dir / "elsewhere", s.dir / FolderLock::kFileName);
  FolderLock lock;
  EXPECT_NE(lock.acquire(s.dir.string()).find("cannot open its lock file"), std::string::npos);
  EXPECT_FALSE(fs::exists(s.dir / "elsewhere"));
}

TEST(TemporaryFile, FreshHiddenNamesNeverThroughALink) {
  Scratch s;
  const auto a = miniamr::io::create_temporary(s.dir / "checkpoint.000005.h5");
  const auto b = miniamr::io::create_temporary(s.dir / "checkpoint.000005.h5");
  ASSERT_GE(a.fd, 0);
  ASSERT_GE(b.fd, 0);
  ::close(a.fd);
  ::close(b.fd);
  EXPECT_NE(a.path, b.path);
  EXPECT_TRUE(a.path.filename().string().starts_with(".checkpoint.000005.h5."));
  EXPECT_EQ(fs::file_size(a.path), 0u);
  EXPECT_FALSE(fs::is_symlink(fs::symlink_status(a.path)));
}
