#include "cli/console_width.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

TEST(ConsoleWidth, ATerminalsColumnsElseColumnsElseWholeLines) {
  EXPECT_EQ(ConsoleWidthFrom(132, nullptr), 132u);
  EXPECT_EQ(ConsoleWidthFrom(132, "80"), 132u);  // the terminal itself knows best
  EXPECT_EQ(ConsoleWidthFrom(0, "100"), 100u);   // a pipe with COLUMNS set
  EXPECT_EQ(ConsoleWidthFrom(0, "0"), 0u);       // COLUMNS=0: whole lines
  EXPECT_EQ(ConsoleWidthFrom(0, nullptr), 0u);   // a CI log: whole lines
  EXPECT_EQ(ConsoleWidthFrom(0, "wide"), 0u);
  EXPECT_EQ(ConsoleWidthFrom(0, "80x"), 0u);
  EXPECT_EQ(ConsoleWidthFrom(0, ""), 0u);
}

}  // namespace
}  // namespace sandprobe
