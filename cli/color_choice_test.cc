#include "cli/color_choice.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

using Env = std::optional<std::string>;

struct ColorCase {
  bool flag;
  Env no_color, force_color;
  bool terminal, expected;
};

// Every environment case, on a terminal and off one.
constexpr bool kOn = true, kOff = false;
const ColorCase kCases[] = {
    // nothing set: the terminal decides
    {false, std::nullopt, std::nullopt, true, kOn},
    {false, std::nullopt, std::nullopt, false, kOff},
    // NO_COLOR: only a non-empty value counts
    {false, "1", std::nullopt, true, kOff},
    {false, "false", std::nullopt, true, kOff},  // any non-empty value, even "false" or "0"
    {false, "0", std::nullopt, true, kOff},
    {false, "", std::nullopt, true, kOn},
    {false, "", std::nullopt, false, kOff},
    // FORCE_COLOR: non-empty and not "0" forces colour off a terminal
    {false, std::nullopt, "1", false, kOn},
    {false, std::nullopt, "3", false, kOn},
    {false, std::nullopt, "true", true, kOn},
    {false, std::nullopt, "0", false, kOff},
    {false, std::nullopt, "0", true, kOn},
    {false, std::nullopt, "", false, kOff},
    // both: NO_COLOR wins; an empty NO_COLOR leaves FORCE_COLOR in force
    {false, "1", "1", false, kOff},
    {false, "1", "1", true, kOff},
    {false, "", "1", false, kOn},
    // --no-color beats everything
    {true, std::nullopt, std::nullopt, true, kOff},
    {true, std::nullopt, "1", true, kOff},
    {true, "", "1", false, kOff},
};

TEST(ColorChoiceTest, EnvironmentCasesTimesTerminal) {
  for (const ColorCase& c : kCases) {
    const ColorInputs inputs{.no_color_flag = c.flag, .no_color = c.no_color,
                             .force_color = c.force_color, .is_terminal = c.terminal};
    EXPECT_EQ(UseColor(inputs), c.expected)
        << "--no-color=" << c.flag << " NO_COLOR=" << c.no_color.value_or("(unset)")
        << " FORCE_COLOR=" << c.force_color.value_or("(unset)") << " tty=" << c.terminal;
  }
}

}  // namespace
}  // namespace sandprobe
