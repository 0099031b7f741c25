// Text written as a YAML scalar: some text written plain reads back as another type (a git
// revision of decimal digits as an integer, "1e5" as a number, "yes" as true).
#pragma once

#include <string_view>

namespace miniamr::io {

// Whether `text`, written as a plain YAML scalar, would be read as something other than text
// by a YAML 1.1 or 1.2 reader: empty, a whole decimal, octal or hexadecimal integer or a whole
// floating-point number, digits with underscores or colons (YAML 1.1's "1_000" and base-60
// "1:2"), or one of the words for true, false and null. Such text is written quoted.
bool yaml_plain_misreads(std::string_view text);

}  // namespace miniamr::io
