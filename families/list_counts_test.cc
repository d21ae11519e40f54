// A list whose items disagree with the probe's own summary count is an error, never a pass;
// a leak the remaining items prove still fails.
#include "families/list_counts.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

using nlohmann::json;

ProbeFrames Frames(std::vector<json> facts) {
  ProbeFrames frames;
  frames.facts = std::move(facts);
  return frames;
}

json Device(const char* path) {
  return {{"family", "priv.devices"}, {"kind", "char"}, {"major", 1}, {"minor", 3}, {"path", path}};
}
json DeviceSummary(int nodes) {
  return {{"family", "priv.devices"}, {"summary", true}, {"ok", true}, {"nodes", nodes}, {"truncated", false}};
}

TEST(ListCounts, AgreeingCountsSayNothing) {
  const ProbeFrames frames = Frames({Device("/dev/null"), Device("/dev/zero"), DeviceSummary(2)});
  EXPECT_EQ(ListCountMismatch("priv.devices", FactIndex(frames)), std::nullopt);
  EXPECT_EQ(ListCountMismatch("fs.read", FactIndex(frames)), std::nullopt);  // keeps no count
}

TEST(ListCounts, ADroppedItemIsNamed) {
  const ProbeFrames frames = Frames({Device("/dev/null"), DeviceSummary(2)});
  EXPECT_EQ(ListCountMismatch("priv.devices", FactIndex(frames)),
            "the probe's summary counts 2 device nodes (nodes), but it listed 1: the list is not believed");
}

TEST(ListCounts, EachCountOfAFamilyIsChecked) {
  // Two fds, one a directory; the summary admits one directory but counts both fds.
  const ProbeFrames frames = Frames({{{"family", "priv.fds"}, {"fd", 3}, {"kind", "file"}},
                                     {{"family", "priv.fds"}, {"fd", 4}, {"kind", "file"}},
                                     {{"family", "priv.fds"}, {"summary", true}, {"ok", true},
                                      {"inherited", 2}, {"directories", 1}}});
  EXPECT_NE(ListCountMismatch("priv.fds", FactIndex(frames)).value_or("").find("1 inherited directory descriptors"),
            std::string::npos);
  // The cgroup release_agent facts are not mounts; net.unix counts only what it found.
  const ProbeFrames cgroups = Frames({{{"family", "priv.cgroups"}, {"fstype", "cgroup"}, {"path", "/sys/fs/cgroup/pids"}},
                                      {{"family", "priv.cgroups"}, {"variant", "release_agent"}, {"path", "/x"}},
                                      {{"family", "priv.cgroups"}, {"summary", true}, {"cgroup_mounts", 1}}});
  EXPECT_EQ(ListCountMismatch("priv.cgroups", FactIndex(cgroups)), std::nullopt);
  const ProbeFrames sockets = Frames({{{"family", "net.unix"}, {"path", "/run/docker.sock"}},
                                      {{"family", "net.unix"}, {"variant", "summary"}, {"path", ""}, {"found", 1}}});
  EXPECT_NE(ListCountMismatch("net.unix", FactIndex(sockets)), std::nullopt);
}

TEST(ListCounts, ANonNumericCountIsAMismatch) {
  const ProbeFrames frames = Frames({Device("/dev/null"), {{"family", "priv.devices"}, {"summary", true}, {"nodes", "1"}}});
  EXPECT_NE(ListCountMismatch("priv.devices", FactIndex(frames)), std::nullopt);
}

TEST(ListCounts, AMiscountedPassIsAnErrorButAProvenLeakStands) {
  const ProbeFrames frames = Frames({Device("/dev/null"), DeviceSummary(3)});
  const FactIndex facts(frames);
  Verdict pass;
  pass.check.family = "priv.devices";
  pass.outcome = Outcome::kPass;
  pass.observed = "no host device";
  DistrustMiscountedList(facts, pass);
  EXPECT_EQ(pass.outcome, Outcome::kError);
  EXPECT_NE(pass.observed.find("; the judge saw: no host device"), std::string::npos);
  Verdict leak = pass;
  leak.outcome = Outcome::kFail;
  leak.direction = Direction::kTooPermissive;
  DistrustMiscountedList(facts, leak);
  EXPECT_EQ(leak.outcome, Outcome::kFail);
}

}  // namespace
}  // namespace sandprobe
