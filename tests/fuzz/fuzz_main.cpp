// A main() for LLVMFuzzerTestOneInput where libFuzzer is missing (GCC, the normal and sanitizer
// builds): runs every corpus input, then seeded random mutations of them, deterministic for a
// seed and bounded by a count and by seconds. Takes libFuzzer's flag spelling, so one command
// line serves both:
//   fuzz_options [-runs=N] [-max_total_time=S] [-seed=K] [-dict=FILE] [-max_len=N]
//                [-artifact_prefix=P] [-print=1] CORPUS_DIR_OR_FILE...
// -print=1 shows each input decoded (deck and words) before running it. A finding writes the
// input to <artifact_prefix>crash-<hash>, prints it decoded and ends the run with a failure.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "fuzz_input.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define MINIAMR_FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MINIAMR_FUZZ_ASAN 1
#endif
#endif
#ifdef MINIAMR_FUZZ_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

struct Flags {
  long runs = 10000;
  double max_total_time = 0;  // seconds; 0: no limit
  std::uint64_t seed = 1;
  std::size_t max_len = 4096;
  std::string dict;
  std::string artifact_prefix = "./";
  bool print = false;
  std::vector<std::string> inputs;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "fuzz_options: %s\nusage: fuzz_options [-runs=N] [-max_total_time=S] [-seed=K] "
               "[-dict=FILE] [-max_len=N] [-artifact_prefix=P] [-print=1] CORPUS...\n",
               why.c_str());
  std::exit(2);
}

Flags parse_flags(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!arg.starts_with('-')) {
      flags.inputs.push_back(arg);
      continue;
    }
    const auto eq = arg.find('=');
    if (eq == std::string::npos) usage("flags are written -name=value: " + arg);
    const std::string name = arg.substr(1, eq - 1);
    const std::string value = arg.substr(eq + 1);
    try {
      if (name == "runs") {
        flags.runs = std::stol(value);
      } else if (name == "max_total_time") {
        flags.max_total_time = std::stod(value);
      } else if (name == "seed") {
        flags.seed = std::stoull(value);
      } else if (name == "max_len") {
        flags.max_len = std::stoul(value);
      } else if (name == "dict") {
        flags.dict = value;
      } else if (name == "artifact_prefix") {
        flags.artifact_prefix = value;
      } else if (name == "print") {
        flags.print = value != "0";
      } else {
        usage("unknown flag " + arg);
      }
    } catch (const std::logic_error&) {
      usage("bad value in " + arg);
    }
  }
  return flags;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) usage("cannot read " + path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The corpus: the files named, and the regular files of the folders named, in name order.
std::vector<std::string> load_corpus(const std::vector<std::string>& names) {
  std::vector<std::string> corpus;
  for (const std::string& name : names) {
    std::vector<fs::path> files;
    if (fs::is_directory(name)) {
      for (const auto& entry : fs::directory_iterator(name)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
    } else {
      files.emplace_back(name);
    }
    for (const fs::path& file : files) corpus.push_back(read_file(file));
  }
  return corpus;
}

// libFuzzer's dictionary format: one "quoted" token per line (optionally name=), with \\, \"
// and \xNN escapes; '#' lines are comments.
std::vector<std::string> load_dict(const std::string& path) {
  std::vector<std::string> tokens;
  if (path.empty()) return tokens;
  std::istringstream lines(read_file(path));
  std::string line;
  while (std::getline(lines, line)) {
    const auto open = line.find('"');
    const auto close = line.rfind('"');
    if (line.starts_with('#') || open == std::string::npos || close <= open) continue;
    std::string token;
    for (std::size_t i = open + 1; i < close; ++i) {
      if (line[i] == '\\' && i + 1 < close && line[i + 1] == 'x' && i + 3 < close) {
        token += static_cast<char>(std::stoi(line.substr(i + 2, 2), nullptr, 16));
        i += 3;
      } else if (line[i] == '\\' && i + 1 < close) {
        token += line[++i];
      } else {
        token += line[i];
      }
    }
    tokens.push_back(token);
  }
  return tokens;
}

// ---- Reporting ---------------------------------------------------------------------------------

// The input being run, for the crash report (signal handlers and sanitizer callbacks read it).
const std::string* g_current = nullptr;
std::string g_artifact_prefix = "./";

std::string printable(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u >= 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

void print_decoded(const std::string& bytes) {
  const miniamr::fuzz::FuzzInput input = miniamr::fuzz::decode(bytes);
  if (input.deck.empty()) {
    std::fprintf(stderr, "  deck: none\n");
  } else {
    std::fprintf(stderr, "  deck %s:\n", std::string(miniamr::fuzz::kDeckName).c_str());
    std::istringstream lines(input.deck);
    std::string line;
    while (std::getline(lines, line)) std::fprintf(stderr, "    | %s\n", printable(line).c_str());
  }
  std::string args = "  args: miniamr";
  for (const std::string& word : input.args()) args += " \"" + printable(word) + "\"";
  std::fprintf(stderr, "%s\n", args.c_str());
}

std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : bytes) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

// Saves the input and prints it decoded. Called once, while the process dies.
void report_current() {
  static bool reported = false;
  if (reported || g_current == nullptr) return;
  reported = true;
  char name[32];
  std::snprintf(name, sizeof name, "crash-%016llx",
                static_cast<unsigned long long>(fnv1a(*g_current)));
  const std::string path = g_artifact_prefix + name;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    std::size_t done = 0;
    while (done < g_current->size()) {
      const ssize_t n = ::write(fd, g_current->data() + done, g_current->size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::close(fd);
  }
  std::fprintf(stderr, "==== fuzz_options: finding; input saved to %s (%zu bytes), decoded:\n",
               path.c_str(), g_current->size());
  print_decoded(*g_current);
  std::fflush(stderr);
}

void on_fatal_signal(int sig) {
  report_current();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// UBSan ends through abort(), where the SIGABRT handler reports the input: under GCC it is a
// runtime of its own, which never calls the death callback set in ASan's.
extern "C" const char* __ubsan_default_options() {
  return "abort_on_error=1:print_stacktrace=1";
}

void install_reporters() {
#ifdef MINIAMR_FUZZ_ASAN
  // The sanitizers print their own report, then call this before exiting.
  __sanitizer_set_death_callback(report_current);
  std::signal(SIGABRT, on_fatal_signal);  // (ASan leaves abort() alone)
#else
  for (const int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL})
    std::signal(sig, on_fatal_signal);
#endif
}

void run_one(const std::string& input) {
  g_current = &input;
  try {
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "==== fuzz_options: uncaught exception: %s\n", e.what());
    report_current();
    std::_Exit(1);
  } catch (...) {
    std::fprintf(stderr, "==== fuzz_options: uncaught exception of an unknown type\n");
    report_current();
    std::_Exit(1);
  }
  g_current = nullptr;
}

// ---- Mutations ---------------------------------------------------------------------------------

// Numbers and words at the edges of what the parser converts.
constexpr std::string_view kValues[] = {
    "0",          "-1",          "1",           "2",     "7",     "27",  "2147483647",
    "2147483648", "-2147483648", "-2147483649", "1e308", "1e309", "-0",  "nan",
    "inf",        "0x10",        "4.",          ".5",    "+4",    "+-4", "1e-320",
    "",           "true",        "false",       "1:2",   ":",     "0:1", "static",
    "dynamic",    "central"};
constexpr std::string_view kBytes = std::string_view(" \t\r\n\0=#-+.:019eE", 17);

class Mutator {
 public:
  Mutator(std::uint64_t seed, const std::vector<std::string>& corpus,
          const std::vector<std::string>& dict)
      : rng_(seed), corpus_(corpus), dict_(dict) {}

  std::string next(std::size_t max_len) {
    // Mostly a fresh corpus entry; sometimes the last mutant again, to go deeper.
    if (last_.empty() || below(4) != 0) last_ = corpus_.empty() ? "" : pick(corpus_);
    const std::size_t n = 1 + below(4);
    for (std::size_t i = 0; i < n; ++i) mutate(last_);
    if (last_.size() > max_len) last_.resize(max_len);
    return last_;
  }

 private:
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng_() % n); }
  const std::string& pick(const std::vector<std::string>& from) { return from[below(from.size())]; }
  char byte() {
    return below(2) == 0 ? kBytes[below(kBytes.size())] : static_cast<char>(below(256));
  }
  // A position where a new command-line word or deck line may start.
  std::size_t boundary(const std::string& s) {
    std::vector<std::size_t> at{s.size()};
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\0' || s[i] == '\n') at.push_back(i);
    }
    return at[below(at.size())];
  }
  // A whole word (between NULs) or line of a random corpus entry, with its separator.
  std::string piece() {
    const std::string& from = corpus_.empty() ? last_ : pick(corpus_);
    if (from.empty()) return {};
    std::size_t start = below(from.size());
    while (start > 0 && from[start - 1] != '\0' && from[start - 1] != '\n') --start;
    std::size_t end = start;
    while (end < from.size() && from[end] != '\0' && from[end] != '\n') ++end;
    const char sep = start > 0 ? from[start - 1] : '\0';
    return sep + from.substr(start, end - start);
  }

  void mutate(std::string& s) {
    const std::size_t at = below(s.size() + 1);
    switch (below(9)) {
      case 0:  // flip a bit
        if (!s.empty()) s[below(s.size())] ^= static_cast<char>(1 << below(8));
        break;
      case 1:  // replace a byte
        if (!s.empty()) s[below(s.size())] = byte();
        break;
      case 2:  // insert a byte
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), byte());
        break;
      case 3:  // delete a few bytes
        if (at < s.size()) s.erase(at, 1 + below(std::min<std::size_t>(16, s.size() - at)));
        break;
      case 4:  // a dictionary token, inside a word or as a word of its own
        if (!dict_.empty()) {
          const std::string& token = pick(dict_);
          if (below(2) == 0) {
            s.insert(at, token);
          } else {
            s.insert(boundary(s), '\0' + token);
          }
        }
        break;
      case 5:  // a word or line of another input
        s.insert(boundary(s), piece());
        break;
      case 6: {  // repeat a range (more objects, repeated options)
        if (s.empty()) break;
        const std::size_t from = below(s.size());
        const std::size_t len = 1 + below(std::min<std::size_t>(64, s.size() - from));
        s.insert(boundary(s), s.substr(from, len));
        break;
      }
      case 7: {  // replace a word by a value at the edge of a conversion
        const std::size_t start = boundary(s);
        std::size_t end = start + 1;
        while (end < s.size() && s[end] != '\0' && s[end] != '\n') ++end;
        const std::string value(kValues[below(std::size(kValues))]);
        if (start >= s.size()) {
          s += '\0' + value;
        } else {
          s.replace(start + 1, end - start - 1, value);
        }
        break;
      }
      default: {  // cross over: this input's deck with another's words
        if (corpus_.empty()) break;
        const std::string& other = pick(corpus_);
        const auto mine = s.find('\0');
        const auto theirs = other.find('\0');
        const std::string deck = s.substr(0, mine);
        s = below(2) == 0
                ? deck + (theirs == std::string::npos ? "" : other.substr(theirs))
                : other.substr(0, theirs) + (mine == std::string::npos ? "" : s.substr(mine));
        break;
      }
    }
  }

  std::mt19937_64 rng_;  // the same sequence for a seed on every platform
  const std::vector<std::string>& corpus_;
  const std::vector<std::string>& dict_;
  std::string last_;
};

}  // namespace

int main(int argc, char** argv) {
  const Flags flags = parse_flags(argc, argv);
  g_artifact_prefix = flags.artifact_prefix;
  install_reporters();
  const std::vector<std::string> corpus = load_corpus(flags.inputs);
  const std::vector<std::string> dict = load_dict(flags.dict);
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };

  for (const std::string& input : corpus) {
    if (flags.print) {
      std::fprintf(stderr, "input (%zu bytes):\n", input.size());
      print_decoded(input);
    }
    run_one(input);
  }
  Mutator mutator(flags.seed, corpus, dict);
  long runs = 0;
  for (; runs < flags.runs; ++runs) {
    if (flags.max_total_time > 0 && runs % 256 == 0 && elapsed() > flags.max_total_time) break;
    const std::string input = mutator.next(flags.max_len);
    if (flags.print) print_decoded(input);
    run_one(input);
  }
  std::printf(
      "fuzz_options: %zu corpus inputs and %ld mutations (seed %llu) in %.1f s: no findings\n",
      corpus.size(), runs, static_cast<unsigned long long>(flags.seed), elapsed());
  return 0;
}
