// One process at a time in a folder: an flock(2) on a lock file inside it, held while the
// FolderLock lives (and released by the kernel however the process ends, even by SIGKILL, so a
// killed run never leaves a stale lock).
#pragma once

#include <string>

namespace miniamr::io {

class FolderLock {
 public:
  // The name of the lock file inside the folder.
  static constexpr const char* kFileName = ".miniamr.lock";

  FolderLock() = default;
  ~FolderLock() { release(); }
  FolderLock(FolderLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FolderLock& operator=(FolderLock&& other) noexcept;
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

  // Takes the lock of `folder` without waiting. "" when this process holds it now; else why
  // not, in words: held by another process (naming it, "process 123 on node7", as that process
  // recorded itself), or the system's reason the lock file cannot be opened.
  std::string acquire(const std::string& folder);
  bool held() const { return fd_ >= 0; }
  void release();

 private:
  int fd_ = -1;
};

}  // namespace miniamr::io
