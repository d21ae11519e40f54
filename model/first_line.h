// The first line of a program's output, cut at 300 bytes: one clause of an error message
// (a failed sweep, a failed preflight), never a wall of stderr.
#pragma once

#include <string>

namespace sandprobe {

inline std::string FirstLineOf(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

}  // namespace sandprobe
