#include "app/launch.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>
#include <string_view>
#include <thread>

#include <fmt/format.h>

namespace miniamr::app {

namespace {

// Open MPI 4 is known to hang now and then inside a spawn or the merge that follows. A run that
// cannot start must say so and end rather than sit in the batch queue's time.
class Watchdog {
 public:
  Watchdog(std::chrono::seconds deadline, std::string message)
      : message_(std::move(message)), thread_([this, deadline] {
          std::unique_lock lock(mutex_);
          if (!done_cv_.wait_for(lock, deadline, [this] { return done_; })) {
            std::fflush(stdout);
            fmt::print(stderr, "miniamr: {}\n", message_);
            std::fflush(stderr);
            std::_Exit(RunError::kExitStatus);
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_one();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::string message_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

// MPI_Info objects freed on every path.
class InfoList {
 public:
  explicit InfoList(std::size_t n) : infos_(n, MPI_INFO_NULL) {}
  ~InfoList() {
    for (MPI_Info& i : infos_)
      if (i != MPI_INFO_NULL) MPI_Info_free(&i);
  }
  InfoList(const InfoList&) = delete;
  InfoList& operator=(const InfoList&) = delete;
  void set(std::size_t i, const char* key, const std::string& value) {
    if (infos_[i] == MPI_INFO_NULL) MPI_Info_create(&infos_[i]);
    MPI_Info_set(infos_[i], key, value.c_str());
  }
  MPI_Info* data() { return infos_.data(); }

 private:
  std::vector<MPI_Info> infos_;
};

std::string error_string(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(text, std::size_t(len));
}

// The running executable itself: argv[0] may be relative to a directory the workers do not
// start in, or a name found through PATH.
std::string this_executable() {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, std::size_t(n)) : std::string("miniamr");
}

// Started without mpirun, Open MPI gives a singleton one slot, its own: each host must come with
// the slots it needs ("name:slots"), the main process's one included.
std::vector<std::string> singleton_hosts(std::vector<std::string> hosts, int workers) {
  if (hosts.empty()) hosts.assign(std::size_t(workers), processor_name());
  std::map<std::string, int> slots;
  for (const auto& h : hosts) ++slots[h];
  for (auto& h : hosts) h = fmt::format("{}:{}", h, slots[h] + 1);
  return hosts;
}

// What a spawned worker learns of its main process, in its environment: "HOST PID SECONDS", the
// main process's host and process id and how long the worker may take to join it.
constexpr const char* kSpawnedBy = "MINIAMR_SPAWNED_BY";

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

}  // namespace

bool oversubscription_allowed() {
  const char* v = std::getenv("OMPI_MCA_rmaps_base_oversubscribe");
  if (v == nullptr) return false;
  const std::string_view on(v);
  return on == "1" || on == "true" || on == "yes";
}

int available_slots() {
  const int cores = std::max(1, int(std::thread::hardware_concurrency()));
  if (std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr) return cores;  // no launcher: this machine
  int* universe = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &found);
  return found != 0 && universe != nullptr && *universe > 0 ? *universe : cores;
}

void check_worker_slots(int workers) {
  const int slots = available_slots();
  const bool oversubscribe = oversubscription_allowed();
  const std::int64_t most = std::int64_t(slots) * (oversubscribe ? kMaxOversubscription : 1) - 1;
  if (workers <= most) return;
  const bool launcher = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr;
  std::string why = fmt::format(
      "--workers {}: the run would have {} processes, but {} has {} slot{}", workers,
      std::int64_t(workers) + 1, launcher ? "the launcher's allocation" : "this machine", slots,
      slots == 1 ? "" : "s");
  if (oversubscribe)
    why += fmt::format(" ({} processes per slot at most, oversubscribed)", kMaxOversubscription);
  why += most > 0 ? fmt::format(": at most {} worker{}", most, most == 1 ? "" : "s")
                  : std::string(": no room for a worker");
  if (!oversubscribe)
    why += launcher ? "; add hosts or slots, or allow oversubscribing (mpirun --oversubscribe)"
                    : "; allow oversubscribing (OMPI_MCA_rmaps_base_oversubscribe=1), or start "
                      "from mpirun with more slots";
  throw UsageError(why);
}

SpawnGuard::SpawnGuard() {
  const char* by = std::getenv(kSpawnedBy);
  if (by == nullptr) return;
  std::istringstream in(by);
  std::string host;
  long pid = 0, seconds = 0;
  if (!(in >> host >> pid >> seconds) || pid <= 0 || seconds <= 0) return;
  const bool same_host = host == host_name();
  thread_ = std::thread([this, host, pid, seconds, same_host] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    const auto end = [&](const std::string& why) {
      std::fflush(stdout);
      fmt::print(stderr, "miniamr: spawned worker {}: {}; ending\n", ::getpid(), why);
      std::fflush(stderr);
      std::_Exit(RunError::kExitStatus);
    };
    std::unique_lock lock(mutex_);
    while (!stopped_) {
      wake_.wait_for(lock, std::chrono::milliseconds(200));
      if (stopped_) break;
      // (the process id is only meaningful on the main process's host)
      if (same_host && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH)
        end(fmt::format("its main process {} on {} is gone", pid, host));
      if (!joined_ && std::chrono::steady_clock::now() > deadline)
        end(fmt::format("it did not join its main process {} on {} within {} s", pid, host,
                        seconds));
    }
  });
}

void SpawnGuard::joined() {
  const std::lock_guard lock(mutex_);
  joined_ = true;
}

void SpawnGuard::stop() {
  {
    const std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

std::string processor_name() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  return std::string(name, std::size_t(len));
}

World::World() {
#ifndef MINIAMR_SIMGRID  // SMPI has no spawned processes, hence no parent to ask for
  MPI_Comm_get_parent(&parent_);
  if (parent_ != MPI_COMM_NULL) MPI_Intercomm_merge(parent_, 1, &comm_);
#endif
}

World::~World() {
  if (comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
  if (parent_ != MPI_COMM_NULL) MPI_Comm_free(&parent_);
  if (children_ != MPI_COMM_NULL) MPI_Comm_free(&children_);
}

int World::rank() const {
  int r = 0;
  MPI_Comm_rank(comm_, &r);
  return r;
}

int World::size() const {
  int s = 1;
  MPI_Comm_size(comm_, &s);
  return s;
}

void World::spawn(const std::vector<std::string>& args, int workers,
                  const std::vector<std::string>& hosts, std::chrono::seconds deadline) {
  const bool singleton = std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr;
  const std::vector<std::string> placed = singleton ? singleton_hosts(hosts, workers) : hosts;
  const std::string exe = this_executable();
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const auto n = std::size_t(workers);
  std::vector<char*> commands(n, const_cast<char*>(exe.c_str()));
  std::vector<char**> argvs(n, argv.data());
  std::vector<int> counts(n, 1);
  InfoList infos(n);
  for (std::size_t i = 0; i < placed.size() && i < n; ++i) infos.set(i, "host", placed[i]);
  // Each worker's SpawnGuard: this process, and a little longer than this spawn may take.
  const std::string spawned_by =
      fmt::format("{}={} {} {}", kSpawnedBy, host_name(), ::getpid(), deadline.count() + 30);
  for (std::size_t i = 0; i < n; ++i) infos.set(i, "env", spawned_by);
  std::vector<int> codes(n, MPI_SUCCESS);

  // Errors come back as codes, to be reported, instead of aborting the job.
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int rc = MPI_SUCCESS;
  {
    const Watchdog watchdog(
        deadline, fmt::format("spawning {} workers did not finish within {} s; ending the run",
                              workers, deadline.count()));
    rc = MPI_Comm_spawn_multiple(workers, commands.data(), argvs.data(), counts.data(),
                                 infos.data(), 0, MPI_COMM_SELF, &children_, codes.data());
    if (rc == MPI_SUCCESS) MPI_Intercomm_merge(children_, 0, &comm_);
  }
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
  if (rc != MPI_SUCCESS) {
    std::string where = "where the launcher maps them";
    if (!placed.empty()) {
      where = "on ";
      for (std::size_t i = 0; i < placed.size(); ++i) where += (i ? "," : "") + placed[i];
    }
    throw SpawnError(fmt::format(
        "--launch spawn: starting {} workers {} failed: {} (a host outside the allocation, or "
        "not enough slots: add hosts or slots, or run mpirun with --oversubscribe)",
        workers, where, error_string(rc)));
  }
}

}  // namespace miniamr::app
