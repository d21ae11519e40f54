#include "model/policy_ref.h"

#include <charconv>

#include <fmt/format.h>

namespace sandprobe {

std::string PolicyRef::Where() const {
  if (file.empty()) return "";
  if (!position.known()) return file;
  return fmt::format("{}:{}:{}", file, position.line, position.column);
}

std::string PolicyRef::Text() const {
  if (file.empty()) return words;
  std::string text = pointer.empty() ? Where() : Where() + " " + pointer;
  return words.empty() ? text : text + ": " + words;
}

namespace {

// "…:7:44" at the end of `where`: the position, and `where` cut to the file.
std::optional<SourcePosition> TakePosition(std::string& where) {
  auto number_before = [&](std::size_t end, int& value) -> std::size_t {
    std::size_t start = where.find_last_not_of("0123456789", end - 1);
    start = start == std::string::npos ? 0 : start + 1;
    if (start == end || start == 0 || where[start - 1] != ':') return std::string::npos;
    std::from_chars(where.data() + start, where.data() + end, value);
    return start - 1;  // the ':'
  };
  SourcePosition pos;
  const std::size_t col_colon = number_before(where.size(), pos.column);
  if (col_colon == std::string::npos) return std::nullopt;
  const std::size_t line_colon = number_before(col_colon, pos.line);
  if (line_colon == std::string::npos || line_colon == 0) return std::nullopt;
  where.resize(line_colon);
  return pos;
}

}  // namespace

std::optional<PolicyRef> ParsePolicyRef(const std::string& text) {
  // The pointer is the last word (policy keys and indexes hold no spaces); the file before it.
  const std::size_t space = text.rfind(" /");
  if (space == std::string::npos || space == 0) return std::nullopt;
  PolicyRef ref;
  ref.pointer = text.substr(space + 1);
  if (std::size_t note = ref.pointer.find(": "); note != std::string::npos) {
    ref.words = ref.pointer.substr(note + 2);
    ref.pointer.resize(note);
  }
  ref.file = text.substr(0, space);
  if (ref.file.back() == ':') ref.file.pop_back();  // "tier-low.json: /limits/pids" (old reports)
  if (std::optional<SourcePosition> pos = TakePosition(ref.file)) ref.position = *pos;
  if (ref.file.empty()) return std::nullopt;
  return ref;
}

}  // namespace sandprobe
