#include "load/path_text.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

TEST(PathTextTest, VisiblePathsPass) {
  for (const char* path : {"/etc/shadow", "/home/jos\u00e9/\u6587\u4ef6", "{workspace}/a b", "/tmp/[x]"}) {
    EXPECT_EQ(InvisibleCharacterProblem(path), std::nullopt) << path;
  }
}

TEST(PathTextTest, InvisibleAndControlCharactersAreNamedWithTheirPlace) {
  EXPECT_EQ(InvisibleCharacterProblem("/etc/sha\u200bdow"),
            "contains U+200B (an invisible format character) at character 9: it looks like another path");
  EXPECT_NE(InvisibleCharacterProblem("/etc/\u202eshadow"), std::nullopt);  // right-to-left override
  EXPECT_NE(InvisibleCharacterProblem("\ufeff/etc/shadow"), std::nullopt);
  EXPECT_NE(InvisibleCharacterProblem("/etc/shadow\n"), std::nullopt);
  EXPECT_NE(InvisibleCharacterProblem("/etc/shad\u00adow"), std::nullopt);
  EXPECT_NE(InvisibleCharacterProblem("/x\U000E0041"), std::nullopt);  // a tag character
  EXPECT_EQ(InvisibleCharacterProblem("/a\xff"), "is not valid UTF-8 at character 3");
}

}  // namespace
}  // namespace sandprobe
