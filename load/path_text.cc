#include "load/path_text.h"

#include <cstdint>

#include <fmt/format.h>
#include <utf8.h>

namespace sandprobe {
namespace {

struct CodePointRange {
  char32_t first, last;
  const char* what;
};

// C0 and C1 controls, and Unicode's general category Cf (format characters) as of Unicode 15.
constexpr CodePointRange kInvisible[] = {
    {0x0000, 0x001F, "a control character"},        {0x007F, 0x009F, "a control character"},
    {0x00AD, 0x00AD, "a soft hyphen"},              {0x0600, 0x0605, "a format character"},
    {0x061C, 0x061C, "a bidi control"},             {0x06DD, 0x06DD, "a format character"},
    {0x070F, 0x070F, "a format character"},         {0x0890, 0x0891, "a format character"},
    {0x08E2, 0x08E2, "a format character"},         {0x180E, 0x180E, "a format character"},
    {0x200B, 0x200F, "an invisible format character"}, {0x202A, 0x202E, "a bidi control"},
    {0x2060, 0x2064, "an invisible format character"}, {0x2066, 0x206F, "a bidi control"},
    {0xFEFF, 0xFEFF, "a byte order mark"},          {0xFFF9, 0xFFFB, "a format character"},
    {0x110BD, 0x110BD, "a format character"},       {0x110CD, 0x110CD, "a format character"},
    {0x13430, 0x1343F, "a format character"},       {0x1BCA0, 0x1BCA3, "a format character"},
    {0x1D173, 0x1D17A, "a format character"},       {0xE0001, 0xE0001, "a tag character"},
    {0xE0020, 0xE007F, "a tag character"},
};

const char* Invisible(char32_t cp) {
  for (const CodePointRange& range : kInvisible) {
    if (cp >= range.first && cp <= range.last) return range.what;
  }
  return nullptr;
}

}  // namespace

std::optional<std::string> InvisibleCharacterProblem(std::string_view text) {
  auto it = text.begin();
  for (std::size_t index = 1; it != text.end(); ++index) {
    char32_t cp = 0;
    try {
      cp = utf8::next(it, text.end());
    } catch (const utf8::exception&) {
      return fmt::format("is not valid UTF-8 at character {}", index);
    }
    if (const char* what = Invisible(cp)) {
      return fmt::format("contains U+{:04X} ({}) at character {}: it looks like another path", static_cast<std::uint32_t>(cp),
                         what, index);
    }
  }
  return std::nullopt;
}

}  // namespace sandprobe
