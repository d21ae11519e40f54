// What a path in a policy or profile may not hold: characters no one can see.
//
// "/etc/sha\u200bdow" prints as /etc/shadow, names another (absent) file, and a check of it
// passes on ENOENT: a promise that checks nothing. So a path with a control character, or a
// Unicode format character (zero-width spaces and joiners, bidi controls, the BOM, soft hyphen,
// tags: general category Cf), is invalid input, named with its code point.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sandprobe {

// "contains U+200B (an invisible format character) at character 9", or nullopt. `text` is
// UTF-8 (the JSON parser has checked it); invalid UTF-8 is a problem too.
std::optional<std::string> InvisibleCharacterProblem(std::string_view text);

}  // namespace sandprobe
