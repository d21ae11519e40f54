#include "run/sweep_ids.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

using Ids = std::vector<std::string>;

TEST(SweepIdsTest, WholeLinesTrimmedEmptyOnesAndRepeatsSkipped) {
  SweepIds parsed = ParseSweepIds("c1\n\n c2 \r\nc1\nvol_a.b-c\n", 0);
  EXPECT_EQ(parsed.ids, (Ids{"c1", "c2", "vol_a.b-c"}));
  EXPECT_TRUE(parsed.problems.empty());
}

// Not an id: never passed to `remove`, and said.
TEST(SweepIdsTest, WhatIsNotAnIdIsAProblem) {
  SweepIds parsed = ParseSweepIds("-f\nok1\na b\n.hidden\n../x\n" + std::string(256, 'a') + "\nok2\n", 0);
  EXPECT_EQ(parsed.ids, (Ids{"ok1", "ok2"}));
  ASSERT_EQ(parsed.problems.size(), 5u);
  EXPECT_EQ(parsed.problems[0], "line 1: not an id: \"-f\"");
  EXPECT_EQ(parsed.problems[2], "line 4: not an id: \".hidden\"");
  EXPECT_EQ(parsed.problems[1], "line 3: not an id: \"a b\"");
  EXPECT_EQ(parsed.problems[4], "line 6: not an id: \"" + std::string(80, 'a') + "\"...");
}

TEST(SweepIdsTest, AnUnterminatedLastLineIsNotTaken) {
  SweepIds parsed = ParseSweepIds("c1\nc2", 0);
  EXPECT_EQ(parsed.ids, (Ids{"c1"}));
  EXPECT_EQ(parsed.problems, (Ids{"line 2: not newline-terminated: \"c2\""}));
}

// The launcher kept the first bytes: the line it cut ("a") is never taken, and the sweep is
// incomplete.
TEST(SweepIdsTest, OutputCutByTheCapKeepsTheWholeLinesAndSaysItWasCut) {
  SweepIds parsed = ParseSweepIds("c1\nc2\na", 4096);
  EXPECT_EQ(parsed.ids, (Ids{"c1", "c2"}));
  EXPECT_EQ(parsed.problems,
            (Ids{"output cut after 7 bytes (4096 more dropped): ids past the cut were not removed"}));
}

TEST(SweepIdsTest, NothingListedIsNoProblem) {
  EXPECT_EQ(ParseSweepIds("", 0).ids, Ids{});
  EXPECT_TRUE(ParseSweepIds("\n\n", 0).problems.empty());
}

}  // namespace
}  // namespace sandprobe
