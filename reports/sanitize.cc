#include "reports/sanitize.h"

#include <cstdint>
#include <filesystem>
#include <iterator>

#include <fmt/format.h>
#include <utf8cpp/utf8.h>

namespace sandprobe {
namespace {

constexpr char kEsc = '\x1b';
constexpr char kBel = '\x07';

bool InRange(char c, unsigned lo, unsigned hi) {
  const auto u = static_cast<unsigned char>(c);
  return u >= lo && u <= hi;
}

// Index just past the escape sequence starting at text[i] == ESC.
std::size_t SkipEscape(std::string_view text, std::size_t i) {
  std::size_t j = i + 1;
  if (j == text.size()) return j;
  const char kind = text[j++];
  switch (kind) {
    case '[': {  // CSI: parameter bytes, intermediate bytes, one final byte
      while (j < text.size() && InRange(text[j], 0x30, 0x3F)) ++j;
      while (j < text.size() && InRange(text[j], 0x20, 0x2F)) ++j;
      if (j < text.size() && InRange(text[j], 0x40, 0x7E)) ++j;
      return j;
    }
    case ']': case 'P': case 'X': case '^': case '_': {  // string up to BEL or ST (ESC \)
      for (std::size_t k = j; k < text.size(); ++k) {
        if (text[k] == kBel) return k + 1;
        if (text[k] == kEsc && k + 1 < text.size() && text[k + 1] == '\\') return k + 2;
      }
      return j;  // unterminated: drop the introducer only, keep the text visible
    }
    default:
      // Not printable ASCII (a control, a UTF-8 lead byte): drop the ESC alone so that the
      // next character survives intact.
      if (!InRange(kind, 0x20, 0x7E)) return i + 1;
      if (InRange(kind, 0x20, 0x2F)) {  // nF: ESC, intermediates, one final byte
        while (j < text.size() && InRange(text[j], 0x20, 0x2F)) ++j;
        if (j < text.size() && InRange(text[j], 0x30, 0x7E)) ++j;
      }
      return j;  // else a two-byte Fp/Fe/Fs sequence such as ESC 7 or ESC M
  }
}

bool XmlAllows(std::uint32_t cp) {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
         (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
}

// `text` must be valid UTF-8 (RepairUtf8 output).
std::string DropXmlForbidden(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  auto it = text.begin();
  while (it != text.end()) {
    auto start = it;
    const std::uint32_t cp = utf8::unchecked::next(it);
    if (XmlAllows(cp)) out.append(start, it);
  }
  return out;
}

// "\r\n" and a lone "\r" become "\n": XML parsers do the same to raw text, and a file without
// CR bytes survives git's line-end conversion byte for byte.
std::string NormalizeLineEnds(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\r') {
      out.push_back(text[i]);
    } else if (i + 1 == text.size() || text[i + 1] != '\n') {
      out.push_back('\n');
    }
  }
  return out;
}

// Cuts valid UTF-8 `text` to at most `keep` bytes without splitting a code point.
std::size_t BoundaryAtOrBefore(const std::string& text, std::size_t keep) {
  auto is_continuation = [&](std::size_t i) {
    return (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80;
  };
  while (keep > 0 && keep < text.size() && is_continuation(keep)) --keep;
  return keep;
}

}  // namespace

std::string RepairUtf8(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  utf8::replace_invalid(raw.begin(), raw.end(), std::back_inserter(out));
  return out;
}

std::string StripAnsiEscapes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == kEsc) {
      i = SkipEscape(text, i);
    } else {
      out.push_back(text[i++]);
    }
  }
  return out;
}

std::string SanitizeForXml(std::string_view raw, std::size_t cap) {
  std::string clean = NormalizeLineEnds(DropXmlForbidden(StripAnsiEscapes(RepairUtf8(raw))));
  if (clean.size() <= cap) return clean;
  // Reserve room for the longest marker so the result stays within `cap`.
  const std::size_t budget = cap > kMaxTruncationMarker ? cap - kMaxTruncationMarker : 0;
  const std::size_t keep = BoundaryAtOrBefore(clean, budget);
  const std::size_t dropped = clean.size() - keep;
  clean.resize(keep);
  clean += fmt::format("\n[... {} bytes truncated]", dropped);
  return clean;
}

std::string SanitizeOneLine(std::string_view raw, std::size_t cap) {
  std::string out = SanitizeForXml(raw, cap);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return out;
}

std::string NameOrStem(const std::string& name, const std::string& path, const char* unnamed) {
  if (!name.empty()) return name;
  std::string stem = std::filesystem::path(path).stem().string();
  return stem.empty() ? unnamed : stem;
}

}  // namespace sandprobe
