// The ids a profile's sweep `list` command printed (docker ps -aq, docker volume ls -q), read
// from its whole output. An id is a complete, newline-terminated line (spaces and a CR around
// it trimmed) of the form [A-Za-z0-9][A-Za-z0-9_.-]*, at most 255 characters: never a line cut
// by the launcher's output cap (with docker, a cut id is a prefix that can match another run's
// container), never something that would read as an option to `remove` ("-f"). Whatever is not
// taken is said, so the sweep is reported incomplete instead of guessing.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sandprobe {

struct SweepIds {
  std::vector<std::string> ids;       // in listed order, each once
  std::vector<std::string> problems;  // "line 3: not an id: \"a b\"", "output cut after ..."
};

// `out` is what the launcher kept of the list's stdout; `dropped` the bytes it dropped beyond
// its cap (LaunchResult::out_dropped).
SweepIds ParseSweepIds(std::string_view out, std::size_t dropped);

}  // namespace sandprobe
