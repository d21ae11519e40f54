#include "reports/progress_line.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

TEST(ProgressLineTest, CountsAndWhatRuns) {
  EXPECT_EQ(RenderProgressLine(12, 40, "B3 res.memory", 80),
            "sandprobe: 12/40 checks - running B3 res.memory");
  EXPECT_EQ(RenderProgressLine(40, 40, "", 80), "sandprobe: 40/40 checks");
}

TEST(ProgressLineTest, CutToTheTerminalAndFreeOfEscapes) {
  std::string line = RenderProgressLine(1, 2, std::string(200, 'x'), 40);
  EXPECT_EQ(line.size(), 40u);
  EXPECT_EQ(line.substr(37), "...");
  EXPECT_EQ(RenderProgressLine(1, 2, "B1 \x1b[31mred", 80).find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace sandprobe
