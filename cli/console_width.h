// How wide the console's lines may be (reports/console_report.h's ConsoleLayout::width).
#pragma once

#include <cstddef>
#include <cstdio>

namespace sandprobe {

// A terminal: its columns. Otherwise $COLUMNS when it is a number (0 there: not cut), else 0:
// a CI log or a pipe keeps whole lines, which wrap where they are read.
std::size_t ConsoleWidth(FILE* stream);

// The rule itself, for tests: `terminal_columns` is 0 when the stream is no terminal.
std::size_t ConsoleWidthFrom(std::size_t terminal_columns, const char* columns_env);

}  // namespace sandprobe
