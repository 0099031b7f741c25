// User text echoed in messages and written to files: bytes a terminal or a viewer would act on
// (control codes, broken UTF-8) are escaped, and long text is cut, so a message stays one
// readable line whatever was typed or read.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace miniamr::io {

// Length of the well-formed UTF-8 sequence starting at s[i] (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 when there is none.
std::size_t utf8_length(std::string_view s, std::size_t i);

// `text` in single quotes for a message: control bytes and bytes outside well-formed UTF-8 as
// \xNN, and past `max_bytes` cut with "... (N bytes)".
std::string shown(std::string_view text, std::size_t max_bytes = 60);

// The same escaping for a whole message, without quotes or cutting (newlines kept).
std::string printable(std::string_view text);

// `word` as one POSIX shell word: unchanged when it needs no quoting, else in single quotes.
std::string shell_quoted(std::string_view word);

// `text` without the blanks (space, tab, CR, form feed, vertical tab) at either end.
std::string_view trim(std::string_view text);

}  // namespace miniamr::io
