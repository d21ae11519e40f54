#include "reports/progress_line.h"

#include <fmt/format.h>

#include "reports/sanitize.h"

namespace sandprobe {

std::string RenderProgressLine(std::size_t done, std::size_t total, const std::string& running,
                               std::size_t width) {
  std::string line = fmt::format("sandprobe: {}/{} checks", done, total);
  if (!running.empty()) line += " - running " + running;
  // Families and batch ids are ours, but keep the terminal safe whatever they hold.
  line = StripAnsiEscapes(line);
  if (width > 3 && line.size() > width) line = line.substr(0, width - 3) + "...";
  return line;
}

}  // namespace sandprobe
