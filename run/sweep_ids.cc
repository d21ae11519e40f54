#include "run/sweep_ids.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace sandprobe {
namespace {

constexpr std::size_t kMaxIdLength = 255;
constexpr std::size_t kShownChars = 80;

bool IsIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

bool IsId(std::string_view line) {
  if (line.empty() || line.size() > kMaxIdLength || !IsIdChar(line[0]) || line[0] == '-' ||
      line[0] == '.' || line[0] == '_') {
    return false;
  }
  return std::all_of(line.begin(), line.end(), IsIdChar);
}

std::string_view Trim(std::string_view s) {
  std::size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

// Quoted, non-printable bytes escaped, capped: for messages only.
std::string Shown(std::string_view s) {
  std::string out = "\"";
  for (char c : s.substr(0, kShownChars)) {
    auto u = static_cast<unsigned char>(c);
    out += u >= 0x20 && u < 0x7f && c != '"' && c != '\\' ? std::string(1, c) : fmt::format("\\x{:02x}", u);
  }
  return out + (s.size() > kShownChars ? "\"..." : "\"");
}

}  // namespace

SweepIds ParseSweepIds(std::string_view out, std::size_t dropped) {
  SweepIds result;
  std::set<std::string_view> seen;
  std::size_t line_number = 0;
  for (std::size_t start = 0; start < out.size();) {
    ++line_number;
    std::size_t end = out.find('\n', start);
    bool terminated = end != std::string_view::npos;
    std::string_view line = Trim(out.substr(start, (terminated ? end : out.size()) - start));
    start = terminated ? end + 1 : out.size();
    if (line.empty()) continue;
    if (!terminated) {
      // Cut by the cap (said once below), or a last line the command never ended.
      if (dropped == 0) {
        result.problems.push_back(fmt::format("line {}: not newline-terminated: {}", line_number, Shown(line)));
      }
      break;
    }
    if (!IsId(line)) {
      result.problems.push_back(fmt::format("line {}: not an id: {}", line_number, Shown(line)));
      continue;
    }
    if (seen.insert(line).second) result.ids.emplace_back(line);
  }
  if (dropped > 0) {
    result.problems.push_back(fmt::format(
        "output cut after {} bytes ({} more dropped): ids past the cut were not removed", out.size(),
        dropped));
  }
  return result;
}

}  // namespace sandprobe
