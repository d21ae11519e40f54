#include "load/placeholders.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

TEST(PlaceholdersTest, ExpandsInsideElementsAndSplicesProbeArgs) {
  PlaceholderValues values;
  values.scalars = {{"probe_dir", "/b/probe"}, {"probe", "/opt/p"}, {"instance", "sp-1"}};
  values.probe_args = {"--nonce", "n1", "fs.read", "/etc/shadow"};
  auto argv = ExpandArgv({"docker", "run", "--name", "{instance}", "-v", "{probe_dir}:/opt:ro",
                          "{probe}", "{probe_args...}", "tail"},
                         values);
  ASSERT_TRUE(argv.ok()) << argv.status().message();
  EXPECT_EQ(*argv, (std::vector<std::string>{"docker", "run", "--name", "sp-1", "-v",
                                             "/b/probe:/opt:ro", "/opt/p", "--nonce", "n1",
                                             "fs.read", "/etc/shadow", "tail"}));
}

TEST(PlaceholdersTest, EmptyProbeArgsExpandToNothing) {
  auto argv = ExpandArgv({"a", "{probe_args...}", "b"}, PlaceholderValues{});
  ASSERT_TRUE(argv.ok());
  EXPECT_EQ(*argv, (std::vector<std::string>{"a", "b"}));
}

TEST(PlaceholdersTest, UnknownPlaceholderIsAnErrorNamingIt) {
  auto argv = ExpandArgv({"--name", "{instanse}"}, PlaceholderValues{});
  ASSERT_FALSE(argv.ok());
  EXPECT_EQ(argv.status().message(), "unknown placeholder {instanse} in \"{instanse}\"");
}

TEST(PlaceholdersTest, ValuesAreNotReExpanded) {
  auto text = ExpandString("{a}", {{"a", "{b}"}, {"b", "boom"}});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "{b}");
}

TEST(PlaceholdersTest, LoneBraceIsLiteral) {
  auto text = ExpandString("x{y", {});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "x{y");
}

}  // namespace
}  // namespace sandprobe
