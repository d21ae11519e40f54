// LeftoverProcess: a process the launcher found still alive after a launch's direct child had
// ended, and SIGKILLed. Its own header so the launcher (which finds them) and the report
// records (which keep them) share it without depending on each other.
#pragma once

#include <cstddef>
#include <string>

namespace sandprobe {

struct LeftoverProcess {
  int pid = 0;
  // /proc/<pid>/cmdline read before the kill: NULs as spaces, capped (kLeftoverArgvCap bytes,
  // then "...").
  std::string argv;
};

inline constexpr std::size_t kLeftoverArgvCap = 4096;

}  // namespace sandprobe
