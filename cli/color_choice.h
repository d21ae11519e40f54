// Whether the console text is coloured: one rule for every subcommand that prints it.
//
// The conventions: NO_COLOR (https://no-color.org) turns colour off when it is set to a
// non-empty value (an empty NO_COLOR= is "unset", as a `VAR= cmd` override means); FORCE_COLOR
// (https://force-color.org) set to a non-empty value other than "0" turns it on where it would
// be off (a CI log, a pipe). When both are set NO_COLOR wins, as CMake's CLICOLOR_FORCE yields to
// it: asking for no colour is the safe side (stray escape codes garble a log; missing colour
// loses nothing). The command line beats the environment: --no-color is off whatever is set.
#pragma once

#include <cstdio>
#include <optional>
#include <string>

namespace sandprobe {

// What the choice depends on, read apart from the choice so that a test can tabulate it.
struct ColorInputs {
  bool no_color_flag = false;              // --no-color
  std::optional<std::string> no_color;     // $NO_COLOR; nullopt when unset
  std::optional<std::string> force_color;  // $FORCE_COLOR; nullopt when unset
  bool is_terminal = false;                // the stream the text goes to is a terminal
};

bool UseColor(const ColorInputs& inputs);

// UseColor for `stream` with this process's environment.
bool UseColor(bool no_color_flag, std::FILE* stream);

}  // namespace sandprobe
