#include "model/check_catalogue.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "families/family.h"
#include "families/plan.h"
#include "load/policy.h"
#include "load/suite.h"

namespace sandprobe {
namespace {

const std::filesystem::path kSource = SANDPROBE_SOURCE_DIR;

std::vector<std::filesystem::path> JsonFiles(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(kSource / dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  return files;
}

// Every check template any shipped suite makes from any shipped policy, in a one-shot and a
// session sandbox.
std::set<std::string> ShippedTemplates() {
  std::set<std::string> templates;
  for (const auto& suite_path : JsonFiles("suites")) {
    StatusOr<Suite> suite = LoadSuite(suite_path.string(), KnownFamilies());
    EXPECT_TRUE(suite.ok()) << suite.status().message();
    if (!suite.ok()) continue;
    for (const auto& policy_path : JsonFiles("policies")) {
      StatusOr<Policy> policy = LoadPolicy(policy_path.string());
      EXPECT_TRUE(policy.ok()) << policy.status().message();
      if (!policy.ok()) continue;
      for (bool session : {false, true}) {
        // What the run's witnesses offer the planner (run/sandbox.cc), so every family plans.
        PlanContext context{"/c", "/w", {}};
        context.session = session;
        context.values = {{"persist.token", "t"},
                          {"priv.canary_pid", "42"},
                          {"priv.canary_sha256", std::string(64, 'a')},
                          {"mounted_canaries.count", "1"},
                          {"mounted_canaries.0.label", "/root"},
                          {"mounted_canaries.0.inside", "/root/.sp-canary"},
                          {"net.loopback-tcp", "127.0.0.1:1"},
                          {"net.loopback-udp", "127.0.0.1:2"},
                          {"net.loopback-dns", "127.0.0.1:3"},
                          {"net.bridge-tcp", "172.17.0.1:4"},
                          {"net.bridge-udp", "172.17.0.1:5"},
                          {"net.bridge-dns", "172.17.0.1:6"},
                          // ... and what the egress lab offers a run that joins it (run/run_lab.cc).
                          {"lab.allowed", "pkg.lab.test"},
                          {"lab.controls", "unrelated.evil.test"},
                          {"lab.denied_name", "unrelated.evil.test"},
                          {"lab.denied_v4", "198.51.100.10"},
                          {"lab.denied_v6", "2001:db8:c::a"}};
        StatusOr<Plan> plan = ExpandChecks(*policy, *suite, context);
        if (!plan.ok()) continue;  // a suite the policy declares nothing for
        for (const Check& check : plan->checks) templates.insert(check.id.substr(0, check.id.find(':')));
      }
    }
  }
  return templates;
}

TEST(CheckCatalogue, EveryCheckAShippedSuiteMakesHasARow) {
  const std::set<std::string> templates = ShippedTemplates();
  EXPECT_GT(templates.size(), 40u);  // the planning above really ran
  for (const std::string& t : templates) EXPECT_NE(FindCatalogueRow(t), nullptr) << t << " has no catalogue row";
}

TEST(CheckCatalogue, RowsAreUniqueSortedAndNameKnownFamilies) {
  std::string previous;
  for (const CatalogueRow& row : CheckCatalogue()) {
    EXPECT_LT(previous, row.check) << "rows sorted and unique";
    previous = row.check;
    EXPECT_NE(FindFamily(std::string(row.family)), nullptr) << row.check << ": family " << row.family;
    EXPECT_FALSE(row.proves.empty()) << row.check;
    EXPECT_FALSE(row.help.empty()) << row.check;
  }
  EXPECT_EQ(FindCatalogueRow("priv.syscall:socket(AF_VSOCK)")->check, "priv.syscall");
  EXPECT_EQ(FindCatalogueRow("no.such.check"), nullptr);
  EXPECT_EQ(CatalogueAnchor("priv.host_pid.door"), "priv-host-pid-door");
}

// docs/checks.md is the catalogue as generated; regenerate with
// `build/families/sandprobe-checks-doc > docs/checks.md`.
TEST(CheckCatalogue, DocsChecksMdIsCurrent) {
  std::ifstream in(kSource / "docs/checks.md");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), CatalogueMarkdown())
      << "docs/checks.md is out of date: build/families/sandprobe-checks-doc > docs/checks.md";
}

}  // namespace
}  // namespace sandprobe
