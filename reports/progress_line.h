// The live progress line of `sandprobe run` on a terminal: checks decided / all, what runs.
// Plain text only (no colour, no escape sequence), so NO_COLOR needs nothing special; the
// caller rewrites it in place with '\r' and pads over a longer previous line.
#pragma once

#include <cstddef>
#include <string>

namespace sandprobe {

// "sandprobe: 12/40 checks · running B3 res.memory" cut to `width` columns; the running part is
// omitted when empty.
std::string RenderProgressLine(std::size_t done, std::size_t total, const std::string& running,
                               std::size_t width);

}  // namespace sandprobe
