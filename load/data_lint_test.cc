#include "load/data_lint.h"

#include <fstream>

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

const std::string kDataDir = SANDPROBE_SOURCE_DIR;

nlohmann::json Schema(const std::string& kind) {
  std::ifstream in(kDataDir + "/docs/" + kind + ".schema.json");
  return nlohmann::json::parse(in);
}

std::vector<std::string> Lint(const std::string& kind, const std::string& text) {
  StatusOr<JsonDocument> doc = JsonDocument::Parse(text, "p.json");
  EXPECT_TRUE(doc.ok()) << doc.status().message();
  return LintDocument(*doc, Schema(kind));
}

TEST(DataLintTest, ReportsEveryErrorInDocumentOrderWithDidYouMean) {
  std::vector<std::string> errors = Lint("policy", R"({
  "name": "p",
  "descripton": "typo",
  "filesystem": {"readabel": ["/tmp"], "unreadable": ["etc/shadow"]},
  "network": {"egress": "alow"},
  "limits": {"pids": "fifty", "memory_mib": 0}
})");
  EXPECT_EQ(errors, (std::vector<std::string>{
      "p.json:1:1: missing required key \"description\"",
      "p.json:3:3: /descripton: unknown key (did you mean \"description\"?)",
      "p.json:4:18: /filesystem/readabel: unknown key (did you mean \"readable\"?)",
      "p.json:4:55: /filesystem/unreadable/0: \"etc/shadow\" does not match ^(/|\\{host_canary\\}(/|$)|\\{workspace\\}(/|$))",
      "p.json:5:25: /network/egress: \"alow\" is not one of deny, allow (did you mean \"allow\"?)",
      "p.json:6:22: /limits/pids: expected integer, got string",
      "p.json:6:45: /limits/memory_mib: must be at least 1",
  }));
}

TEST(DataLintTest, AValidDocumentHasNoErrorAndAFarKeyListsTheKnownOnes) {
  EXPECT_TRUE(Lint("suite", R"({"name": "s", "description": "d", "families": [{"family": "fs.read"}]})").empty());
  std::vector<std::string> errors = Lint("suite", R"({"name": "s", "description": "d", "families": [{"family": "fs.read", "zzzzzz": 1}]})");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("/families/0/zzzzzz: unknown key (known: family, variants)"), std::string::npos) << errors[0];
}

TEST(DataLintTest, OneOfPicksTheAlternativeOfTheValuesType) {
  std::vector<std::string> errors = Lint("profile", R"({"name": "x", "description": "d", "backend": "host",
    "lifecycle": "oneshot", "injection": "host-path", "probe_path": "/p", "run": ["x"],
    "sweep": [{"list": ["a"], "remov": ["b", "{id}"]}], "canaries_in": [5]})");
  ASSERT_EQ(errors.size(), 3u) << errors[0];
  EXPECT_NE(errors[0].find("/sweep/0: missing required key \"remove\""), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("/sweep/0/remov: unknown key (did you mean \"remove\"?)"), std::string::npos) << errors[1];
  EXPECT_NE(errors[2].find("/canaries_in/0: expected string or object, got integer"), std::string::npos) << errors[2];
}

TEST(DataLintTest, MoreErrorsLeavesOutTheLoadersOwnLocationUnlessItAddsADidYouMean) {
  std::string path = ::testing::TempDir() + "/lint-policy.json";
  std::ofstream(path) << "{\"name\": \"p\", \"description\": \"d\",\n \"network\": {\"egress\": 5},\n \"limits\": {\"pid\": 1}}\n";
  std::vector<std::string> more = MoreErrors(path + ":2:24: /network/egress: expected string, got integer", path, kDataDir);
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(more[0], path + ":3:13: /limits/pid: unknown key (did you mean \"pids\"?)");
  more = MoreErrors(path + ":3:13: /limits/pid: unknown key (known: pids, ...)", path, kDataDir);
  ASSERT_EQ(more.size(), 2u);
  EXPECT_EQ(more[1], path + ":3:13: /limits/pid: unknown key (did you mean \"pids\"?)");
}

}  // namespace
}  // namespace sandprobe
