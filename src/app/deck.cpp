#include "app/deck.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <system_error>

#include <fmt/format.h>

#include "app/errors.hpp"
#include "io/printable.hpp"

namespace miniamr::app {
namespace {

constexpr std::string_view kSpace = " \t\r\f\v";
constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(kSpace);
  return s.substr(first, last - first + 1);
}

std::vector<std::string> split_words(std::string_view s) {
  std::vector<std::string> words;
  std::size_t pos = 0;
  while ((pos = s.find_first_not_of(kSpace, pos)) != std::string_view::npos) {
    const auto end = s.find_first_of(kSpace, pos);
    words.emplace_back(s.substr(pos, end == std::string_view::npos ? s.size() - pos : end - pos));
    pos = end;
  }
  return words;
}

// One non-blank, comment-free line -> entry. `where` is "<name>:<line>" for messages.
DeckEntry parse_line(std::string_view text, std::string_view where, int line) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos) {
    throw UsageError(fmt::format("{}: expected 'key = value', got {}", where, io::shown(text)));
  }
  const std::string_view key = trim(text.substr(0, eq));
  if (key.empty()) throw UsageError(fmt::format("{}: missing key before '='", where));
  if (key.find_first_of(kSpace) != std::string_view::npos) {
    throw UsageError(fmt::format("{}: key {} must be one word", where, io::shown(key)));
  }
  return DeckEntry{std::string(key), split_words(text.substr(eq + 1)), line};
}

}  // namespace

Deck parse_deck(std::string_view text, std::string_view name) {
  Deck deck{std::string(name), {}};
  const std::string shown_name = io::printable(name);
  // Editors on some systems start UTF-8 files with a byte-order mark; it is not part of a key.
  if (text.starts_with(kByteOrderMark)) text.remove_prefix(kByteOrderMark.size());
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + std::ptrdiff_t(nul), '\n');
    throw UsageError(fmt::format("{}:{}: a NUL byte: a deck is a text file", shown_name, line));
  }
  int line = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view raw = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line;
    raw = trim(raw.substr(0, raw.find('#')));
    if (raw.empty()) continue;
    deck.entries.push_back(parse_line(raw, fmt::format("{}:{}", shown_name, line), line));
  }
  return deck;
}

std::string read_deck_text(const std::string& path) {
  const std::string name = io::shown(path, 200);
  const auto refuse = [&](std::string_view why) {
    return UsageError(fmt::format("cannot read deck file {}: {}", name, why));
  };
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever; the file type is
  // checked on the open descriptor, so it cannot change between the check and the read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw refuse(std::generic_category().message(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw refuse(std::generic_category().message(errno));
  if (S_ISDIR(st.st_mode)) throw refuse("it is a directory");
  if (!S_ISREG(st.st_mode))
    throw refuse("it is not a regular file (a pipe, device or socket); decks are read from files");
  const auto too_big = [&] {
    return refuse(
        fmt::format("it is larger than {} KiB, the limit for a deck", kMaxDeckBytes / 1024));
  };
  if (std::uint64_t(st.st_size) > kMaxDeckBytes) throw too_big();
  std::string text;
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw refuse(std::generic_category().message(errno));
    if (n == 0) break;
    text.append(buffer, std::size_t(n));
    if (text.size() > kMaxDeckBytes) throw too_big();  // the file grew while being read
  }
  return text;
}

Deck read_deck(const std::string& path) {
  return parse_deck(read_deck_text(path), path);
}

}  // namespace miniamr::app
