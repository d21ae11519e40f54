#include "contract/probe_identity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sandprobe {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

const ProbeIdentity kNative{"native", "native-0123456789abcdef", {"fs.read", "net.tcp"}};

ProbeFrames FramesOf(std::vector<nlohmann::json> facts) {
  ProbeFrames frames;
  frames.facts = std::move(facts);
  frames.done = true;
  return frames;
}

nlohmann::json Hello() {
  return {{"family", "hello"}, {"runtime", "native"}, {"build_id", "native-0123456789abcdef"},
          {"families", {"net.tcp", "fs.read"}}, {"pid", 1}};
}

TEST(HelloMismatch, TheInjectedProbesHelloMatchesInAnyFamilyOrder) {
  EXPECT_EQ(HelloMismatch(FramesOf({Hello(), {{"family", "fs.read"}, {"path", "/"}}}), kNative), std::nullopt);
}

TEST(HelloMismatch, ALaunchWithoutFactsSaysNothing) {
  EXPECT_EQ(HelloMismatch(FramesOf({}), kNative), std::nullopt);
}

TEST(HelloMismatch, EachDifferenceIsNamed) {
  nlohmann::json other_build = Hello();
  other_build["build_id"] = "native-ffffffffffffffff";
  EXPECT_THAT(HelloMismatch(FramesOf({other_build}), kNative),
              Optional(HasSubstr("hello build_id \"native-ffffffffffffffff\", the injected probe's is \"native-0123456789abcdef\"")));
  nlohmann::json old_probe = Hello();
  old_probe.erase("build_id");
  old_probe.erase("runtime");
  EXPECT_THAT(HelloMismatch(FramesOf({old_probe}), kNative), Optional(HasSubstr("hello runtime absent")));
  nlohmann::json js = Hello();
  js["runtime"] = "js";
  EXPECT_THAT(HelloMismatch(FramesOf({js}), kNative), Optional(HasSubstr("hello runtime \"js\"")));
  nlohmann::json fewer = Hello();
  fewer["families"] = {"fs.read"};
  EXPECT_THAT(HelloMismatch(FramesOf({fewer}), kNative), Optional(HasSubstr("hello families [\"fs.read\"]")));
  nlohmann::json not_names = Hello();
  not_names["families"] = {"fs.read", 7};
  EXPECT_THAT(HelloMismatch(FramesOf({not_names}), kNative), Optional(HasSubstr("hello families")));
}

TEST(HelloMismatch, FactsWithoutAHelloFirstAreNotTheProbes) {
  EXPECT_THAT(HelloMismatch(FramesOf({{{"family", "fs.read"}, {"path", "/etc/shadow"}, {"ok", false}}, Hello()}), kNative),
              Optional(HasSubstr("the first fact is \"fs.read\"")));
}

}  // namespace
}  // namespace sandprobe
