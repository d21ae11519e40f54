// The host side's name for an errno value in messages: "EACCES", or "errno 133" for a value
// glibc has no name for. (The probe has its own ErrnoName, "E133", because facts compare names
// as strings; messages for people need no such stability.)
#pragma once

#include <string.h>

#include <string>

#include <fmt/format.h>

namespace sandprobe {

inline std::string ErrnoText(int err) {
  const char* name = strerrorname_np(err);
  return name != nullptr ? name : fmt::format("errno {}", err);
}

}  // namespace sandprobe
