// Files that matter (results, plots, traces, logs) are never seen half-written: the text goes to
// a fresh temporary name beside the target, is synced, and is renamed over the target only when
// every write and the close succeeded. A run killed midway leaves the previous file intact.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace miniamr::io {

// Why `path` cannot be written by an OutputFile, in words with the system's reason ("the folder
// 'out' does not exist", "'results.yaml' is a directory", "permission denied"), or "" when it
// can. Creates nothing.
std::string unwritable_reason(const std::string& path);

// One output file being written. Streams: put() may be called any number of times, so a large
// file never has to be held in memory.
class OutputFile {
 public:
  OutputFile() = default;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile() { discard(); }

  // Creates the temporary file (O_EXCL, never through a symbolic link). False with error() set
  // when the target cannot be written.
  bool open(const std::string& path);
  // Appends; a failed write (full disk, quota) is remembered and reported by commit().
  void put(std::string_view text);
  // fsync, close, rename. False with error() set when any step failed; the temporary file is
  // removed and the target left as it was.
  bool commit();
  // The reason of the last failure, naming the file and the system's reason.
  const std::string& error() const { return error_; }

 private:
  void fail(std::string_view what, int err);
  void discard();

  std::filesystem::path target_, temp_;
  int fd_ = -1;
  std::string error_;
};

// A new, empty file beside `target` under a random name that no other writer shares
// (".<name>.<pid>.<random>.tmp"), created with O_EXCL | O_NOFOLLOW so that a file or link planted
// at that name is never written through. `fd` is open for writing (the caller closes it), or -1
// with `error` the errno when no such file could be made.
struct TemporaryFile {
  std::filesystem::path path;
  int fd = -1;
  int error = 0;
};
TemporaryFile create_temporary(const std::filesystem::path& target);

// The whole text into `path` through an OutputFile. Returns "" on success, else the reason.
std::string write_file_atomically(const std::string& path, std::string_view text);

// Publishes a file written elsewhere (by MPI-IO, whose close promises nothing about the disk):
// syncs `temp`, renames it over `path`, and syncs the folder, so that a crash never leaves a
// complete-looking name over missing data. Returns "" on success, else the reason.
std::string sync_and_rename(const std::string& temp, const std::string& path);

}  // namespace miniamr::io
