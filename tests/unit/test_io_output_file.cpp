// Output files: written whole or not at all, under a name no other writer shares, with the
// system's reason when they cannot be.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "io/output_file.hpp"

namespace fs = std::filesystem;
using miniamr::io::OutputFile;
using miniamr::io::unwritable_reason;
using miniamr::io::write_file_atomically;

namespace {

struct Scratch {
  fs::path dir;
  Scratch() {
    std::string pattern = (fs::temp_directory_path() / "miniamr-io-XXXXXX").string();
    dir = ::mkdtemp(pattern.data());
  }
  ~Scratch() {
    std::error_code ec;
    fs::permissions(dir, fs::perms::owner_all, ec);
    fs::remove_all(dir, ec);
  }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

std::string contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST(OutputFile, WritesWholeFileAndLeavesNoTemporary) {
  Scratch s;
  EXPECT_EQ(write_file_atomically(s / "r.yaml", "a: 1\n"), "");
  EXPECT_EQ(write_file_atomically(s / "r.yaml", "a: 2\n"), "");
  EXPECT_EQ(contents(s / "r.yaml"), "a: 2\n");
  EXPECT_EQ(s.names(), std::vector<std::string>{"r.yaml"});
}

TEST(OutputFile, ReasonsNameTheProblem) {
  Scratch s;
  EXPECT_EQ(unwritable_reason(s / "new.json"), "");
  { std::ofstream(s / "old.json") << "x"; }
  EXPECT_EQ(unwritable_reason(s / "old.json"), "");
  EXPECT_NE(unwritable_reason(s / "missing/t.json").find("does not exist"), std::string::npos);
  EXPECT_NE(unwritable_reason(s.dir.string()).find("is a folder"), std::string::npos);
  EXPECT_NE(unwritable_reason(s.dir.string() + "/").find("names a folder"), std::string::npos);
  EXPECT_NE(unwritable_reason(""), "");
  EXPECT_NE(unwritable_reason("/dev/null").find("not a regular file"), std::string::npos);
  EXPECT_EQ(s.names(), std::vector<std::string>{"old.json"}) << "a check created a file";
  if (::geteuid() != 0) {  // root writes anywhere
    fs::permissions(s.dir, fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_NE(unwritable_reason(s / "new.json").find("Permission denied"), std::string::npos);
  }
}

TEST(OutputFile, FailedWriteKeepsTheOldFile) {
  Scratch s;
  ASSERT_EQ(write_file_atomically(s / "r.yaml", "old\n"), "");
  // A file size limit makes write() fail as a full disk would.
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit old{};
  ::getrlimit(RLIMIT_FSIZE, &old);
  rlimit small = old;
  small.rlim_cur = 16;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string why = write_file_atomically(s / "r.yaml", std::string(1000, 'x'));
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, SIG_DFL);
  EXPECT_NE(why.find("cannot write"), std::string::npos) << why;
  EXPECT_EQ(contents(s / "r.yaml"), "old\n");
  EXPECT_EQ(s.names(), std::vector<std::string>{"r.yaml"});
}

TEST(OutputFile, UncommittedFileIsDiscarded) {
  Scratch s;
  {
    OutputFile f;
    ASSERT_TRUE(f.open(s / "t.json"));
    f.put("partial");
  }
  EXPECT_TRUE(s.names().empty());
}

TEST(OutputFile, LinkAtTargetIsFollowed) {
  Scratch s;
  { std::ofstream(s / "real.yaml") << "old"; }
  fs::create_symlink(s / "real.yaml", s / "link.yaml");
  ASSERT_EQ(write_file_atomically(s / "link.yaml", "new"), "");
  EXPECT_TRUE(fs::is_symlink(s / "link.yaml"));
  EXPECT_EQ(contents(s / "real.yaml"), "new");
}

TEST(OutputFile, ConcurrentWritersNeverMix) {
  Scratch s;
  const std::string path = s / "results.yaml";
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w)
    writers.emplace_back([&, w] {
      const std::string text(4096, char('a' + w));
      for (int i = 0; i < 50; ++i) ASSERT_EQ(write_file_atomically(path, text), "");
    });
  for (auto& t : writers) t.join();
  const std::string got = contents(path);
  ASSERT_EQ(got.size(), 4096u);
  EXPECT_EQ(got, std::string(4096, got[0]));
  EXPECT_EQ(s.names(), std::vector<std::string>{"results.yaml"});
}
