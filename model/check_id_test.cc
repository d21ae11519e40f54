#include "model/check_id.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

TEST(PlaceholderFreeId, SpellsEachPlaceholderAsAWord) {
  EXPECT_EQ(PlaceholderFreeId("fs.read.denied:{host_canary}"), "fs.read.denied:host-canary");
  EXPECT_EQ(PlaceholderFreeId("fs.alias.denied:{host_canary}[symlink]"), "fs.alias.denied:host-canary[symlink]");
  EXPECT_EQ(PlaceholderFreeId("fs.write.allowed:{workspace}/out"), "fs.write.allowed:workspace/out");
  EXPECT_EQ(PlaceholderFreeId("fs.read.denied:{mounted_canary:/root}"), "fs.read.denied:mounted-canary:/root");
  EXPECT_EQ(PlaceholderFreeId("fs.*:{host_canary}*"), "fs.*:host-canary*");  // a glob too
}

TEST(PlaceholderFreeId, LeavesEverythingElseAlone) {
  EXPECT_EQ(PlaceholderFreeId("fs.read.denied:/etc/shadow"), "fs.read.denied:/etc/shadow");
  EXPECT_EQ(PlaceholderFreeId("fs.read.denied:/srv/{a}"), "fs.read.denied:/srv/{a}");
  EXPECT_EQ(PlaceholderFreeId("fs.read.denied:{mounted_canary:/unclosed"), "fs.read.denied:{mounted_canary:/unclosed");
  EXPECT_EQ(PlaceholderFreeId("fs.read.denied:host-canary"), "fs.read.denied:host-canary");  // idempotent
  EXPECT_EQ(PlaceholderFreeId(""), "");
}

}  // namespace
}  // namespace sandprobe
