#include "cli/console_width.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstring>

namespace sandprobe {

std::size_t ConsoleWidthFrom(std::size_t terminal_columns, const char* columns_env) {
  if (terminal_columns > 0) return terminal_columns;
  if (columns_env == nullptr) return 0;
  std::size_t columns = 0;
  const char* end = columns_env + std::strlen(columns_env);
  const auto [ptr, ec] = std::from_chars(columns_env, end, columns);
  return ec == std::errc() && ptr == end ? columns : 0;
}

std::size_t ConsoleWidth(FILE* stream) {
  struct winsize ws {};
  const bool terminal = ::isatty(::fileno(stream)) && ::ioctl(::fileno(stream), TIOCGWINSZ, &ws) == 0;
  return ConsoleWidthFrom(terminal ? ws.ws_col : 0, std::getenv("COLUMNS"));
}

}  // namespace sandprobe
