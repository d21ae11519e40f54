#include "run/recorded_sweep.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "load/json_document.h"

namespace sandprobe {
namespace {

using ::testing::HasSubstr;

Profile WithSweeps(const std::string& sweeps, const std::string& vars = "{}") {
  StatusOr<JsonDocument> doc = JsonDocument::Parse(
      R"({"name": "p", "description": "d", "backend": "docker", "injection": "ro-bind", "lifecycle": "oneshot",
          "probe_path": "{probe_dir}/probe", "run": ["rt", "-v", "{probe_dir}:/p", "{probe}", "{probe_args...}"], "vars": )" + vars +
          R"(, "sweep": )" + sweeps + "}",
      "p.json");
  EXPECT_TRUE(doc.ok()) << doc.status().message();
  StatusOr<Profile> profile = ParseProfile(*doc);
  EXPECT_TRUE(profile.ok()) << profile.status().message();
  return *profile;
}

TEST(RecordedSweep, EverythingButTheIdIsExpandedAsTheRunWouldHave) {
  Profile profile = WithSweeps(
      R"([{"list": ["rt", "ps", "--filter", "label=sandprobe.run={run_id}", "{probe}", "{ws}"], "remove": ["rt", "rm", "{id}"]},
          {"list": ["rt", "volume", "ls"], "remove": ["rt", "volume", "rm", "ws-{id}-{run_id}", "{id}{id}"]}])",
      R"({"ws": "{not a placeholder} {id}"})");
  StatusOr<std::vector<RecordedSweep>> recorded =
      ExpandSweepsForRecord(profile, SweepScalars(profile, "3f2a1b2c4d5e", "/var/tmp/sandprobe-3f2a1b2c4d5e/workspace", "/pd"));
  ASSERT_TRUE(recorded.ok()) << recorded.status().message();
  ASSERT_EQ(recorded->size(), 2u);
  // A var's value is taken literally, braces and all: never split at an "{id}" inside it.
  EXPECT_EQ((*recorded)[0].list, (std::vector<std::string>{"rt", "ps", "--filter", "label=sandprobe.run=3f2a1b2c4d5e",
                                                            "/pd/probe", "{not a placeholder} {id}"}));
  EXPECT_EQ((*recorded)[0].RemoveArgv("c1"), (std::vector<std::string>{"rt", "rm", "c1"}));
  EXPECT_EQ((*recorded)[1].remove[3], (std::vector<std::string>{"ws-", "-3f2a1b2c4d5e"}));
  EXPECT_EQ((*recorded)[1].RemoveArgv("v9"),
            (std::vector<std::string>{"rt", "volume", "rm", "ws-v9-3f2a1b2c4d5e", "v9v9"}));
}

TEST(RecordedSweep, AProfileWithoutSweepRecordsNone) {
  Profile profile = WithSweeps(R"({"list": ["ls"], "remove": ["rm", "{id}"]})");
  profile.sweeps.clear();
  StatusOr<std::vector<RecordedSweep>> recorded = ExpandSweepsForRecord(profile, SweepScalars(profile, "r", "/w", "/p"));
  ASSERT_TRUE(recorded.ok());
  EXPECT_TRUE(recorded->empty());
}

TEST(RecordedSweep, AnUnknownPlaceholderIsAnErrorNamingTheProfile) {
  Profile profile = WithSweeps(R"({"list": ["ls"], "remove": ["rm", "{id}"]})");
  profile.sweeps[0].remove = {"rm", "{nope}-{id}"};
  StatusOr<std::vector<RecordedSweep>> recorded = ExpandSweepsForRecord(profile, SweepScalars(profile, "r", "/w", "/p"));
  ASSERT_FALSE(recorded.ok());
  EXPECT_THAT(recorded.status().message(), HasSubstr("p.json: sweep 0 remove"));
  EXPECT_THAT(recorded.status().message(), HasSubstr("{nope}"));
}

}  // namespace
}  // namespace sandprobe
