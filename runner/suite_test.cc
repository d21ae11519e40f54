#include "runner/suite.h"

#include <string>

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

const std::string kDir = SANDPROBE_SOURCE_DIR "/runner/testdata/load/";
const std::set<std::string> kFamilies = {"fs.alias", "fs.read", "fs.write"};

TEST(SuiteTest, LoadsEntries) {
  StatusOr<Suite> s = LoadSuite(kDir + "suite_default.json", kFamilies);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->name, "default");
  EXPECT_EQ(s->description, "File system reads and aliases.");
  EXPECT_EQ(s->source_path, kDir + "suite_default.json");
  ASSERT_EQ(s->entries.size(), 2u);
  EXPECT_EQ(s->entries[0].family, "fs.read");
  EXPECT_TRUE(s->entries[0].variants.empty());
  EXPECT_EQ(s->entries[0].pointer, "/families/0");
  EXPECT_EQ(s->entries[1].family, "fs.alias");
  EXPECT_EQ(s->entries[1].variants, (std::vector<std::string>{"symlink", "dotdot", "proc_root"}));
  EXPECT_EQ(s->entries[1].pointer, "/families/1");
  EXPECT_EQ(s->raw["name"], "default");
}

std::string SuiteError(const std::string& families) {
  StatusOr<JsonDocument> doc = JsonDocument::Parse(
      "{\"name\": \"s\", \"description\": \"d\",\n\"families\": " + families + "}", "s.json");
  if (!doc.ok()) return "parse: " + doc.status().message();
  StatusOr<Suite> s = ParseSuite(*doc, kFamilies);
  return s.ok() ? "ok" : s.status().message();
}

TEST(SuiteTest, UnknownFamilyListsKnownOnes) {
  EXPECT_EQ(SuiteError(R"([{"family": "fs.read"}, {"family": "fs.raed"}])"),
            "s.json:2:48: /families/1/family: unknown family \"fs.raed\" (known: fs.alias, "
            "fs.read, fs.write)");
}

TEST(SuiteTest, DuplicatesAreErrors) {
  EXPECT_EQ(SuiteError(R"([{"family": "fs.read"}, {"family": "fs.read"}])"),
            "s.json:2:48: /families/1/family: duplicate family \"fs.read\" (first at /families/0)");
  EXPECT_EQ(SuiteError(R"([{"family": "fs.alias", "variants": ["a", "a"]}])"),
            "s.json:2:55: /families/0/variants/1: duplicate of /families/0/variants/0");
}

TEST(SuiteTest, ShapeErrors) {
  EXPECT_EQ(SuiteError("[]"), "s.json:2:13: /families: must list at least one family");
  EXPECT_EQ(SuiteError("{}"), "s.json:2:13: /families: expected array of objects, got object");
  EXPECT_EQ(SuiteError(R"(["fs.read"])"), "s.json:2:14: /families/0: expected object, got string");
  EXPECT_EQ(SuiteError(R"([{"family": "fs.read", "params": {}}])"),
            "s.json:2:36: /families/0/params: unknown key (known: family, variants)");
  EXPECT_EQ(SuiteError(R"([{"variants": []}])"),
            "s.json:2:14: /families/0/family: missing required field");
}

TEST(ValidateFileTest, TellsKindsApart) {
  EXPECT_EQ(ValidateFile(kDir + "suite_default.json", kFamilies).value(), "suite default");
  EXPECT_EQ(ValidateFile(kDir + "policy_full.json", kFamilies).value(), "policy tier-test");
  EXPECT_EQ(ValidateFile(kDir + "profile_session.json", kFamilies).value(),
            "profile docker-session");
  EXPECT_EQ(ValidateFile(kDir + "profile_oneshot.json", kFamilies).value(),
            "profile docker-hardened (policy tier-test)");
}

TEST(ValidateFileTest, ReportsErrorsOfTheFileAndOfTheProfilesPolicy) {
  EXPECT_EQ(ValidateFile(kDir + "policy_bad_pids.json", kFamilies).status().message(),
            kDir + "policy_bad_pids.json:6:13: /limits/pids: expected integer, got string");
  EXPECT_EQ(ValidateFile(kDir + "profile_bad_policy.json", kFamilies).status().message(),
            kDir + "profile_bad_policy.json:5:13: /policy: " + kDir +
                "policy_bad_pids.json:6:13: /limits/pids: expected integer, got string");
  EXPECT_EQ(ValidateFile(kDir + "missing.json", kFamilies).status().message(),
            "open(" + kDir + "missing.json): No such file or directory");
}

}  // namespace
}  // namespace sandprobe
