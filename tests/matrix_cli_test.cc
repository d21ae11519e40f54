// `sandprobe matrix`: saved reports of real runs (bwrap-strict here and on a second "node", a
// UTS namespace with its own hostname, and bwrap-leaky) merged into one matrix through the
// built CLI; `--html` on `report`.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

namespace fs = std::filesystem;

// id -> "verdict (direction)", as the matrix shows a cell.
std::map<std::string, std::string> Cells(const nlohmann::json& report) {
  std::map<std::string, std::string> out;
  for (const auto& check : report["checks"]) {
    std::string direction = check["direction"].is_string() ? check["direction"].get<std::string>() : "";
    out[check["id"].get<std::string>()] =
        check["verdict"].get<std::string>() + (direction.empty() ? "" : " (" + direction + ")");
  }
  return out;
}

std::string ThisHost() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

TEST(MatrixCliTest, SavedReportsOfOneSandboxOnTwoHostsAreTwoColumnsAndDisagreementsComeFirst) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  if (!BackendAvailable("unshare --uts", {"unshare", "--uts", "true"})) return;
  const std::string dir = MakeTempDir("matrix");
  const std::string here = dir + "/strict-here.json", node2 = dir + "/strict-node2.json", leaky = dir + "/leaky.json";
  CliRun a = RunCli({"run", "--sandbox", "bwrap-strict", "--no-color", "--json", here});
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  // The second node: the same sandbox in a UTS namespace whose hostname is another's.
  CliRun b = RunCommand({"unshare", "--uts", "sh", "-c", "hostname sp-node-2 && exec \"$@\"", "sh", SANDPROBE_CLI, "run",
                         "--sandbox", "bwrap-strict", "--no-color", "--json", node2});
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  CliRun c = RunCli({"run", "--sandbox", "bwrap-leaky", "--no-color", "--json", leaky});
  ASSERT_EQ(c.exit_code, 1) << "bwrap-leaky fails its policy: " << c.out << c.err;

  CliRun merged = RunCli({"matrix", here, leaky, node2, "--json", dir + "/m.json", "--markdown", dir + "/m.md",
                          "--html", dir + "/m.html"});
  ASSERT_EQ(merged.exit_code, 0) << merged.out << merged.err;
  EXPECT_NE(merged.out.find("matrix: 3 sandboxes"), std::string::npos) << merged.out;
  const nlohmann::json matrix = ReadJson(dir + "/m.json");
  ASSERT_TRUE(matrix.is_object());
  ASSERT_EQ(matrix["sandboxes"].size(), 3u);
  const std::vector<std::string> names = {"bwrap-strict@" + ThisHost(), "bwrap-leaky", "bwrap-strict@sp-node-2"};
  const std::vector<std::string> files = {here, leaky, node2};
  std::set<std::string> every_id;
  for (std::size_t col = 0; col < names.size(); ++col) {
    EXPECT_EQ(matrix["sandboxes"][col]["name"], names[col]);
    const nlohmann::json report = ReadJson(files[col]);
    EXPECT_EQ(matrix["sandboxes"][col]["run_id"], report["run_id"]);
    const std::map<std::string, std::string> cells = Cells(report);
    std::size_t seen = 0;
    for (const auto& row : matrix["checks"]) {
      auto it = cells.find(row["id"].get<std::string>());
      if (it == cells.end()) continue;
      ++seen;
      EXPECT_EQ(row["verdicts"][col], it->second) << names[col] << " " << row["id"];
      every_id.insert(it->first);
    }
    EXPECT_EQ(seen, cells.size()) << names[col] << ": every check of its report is a cell";
  }
  // Disagreements first: no disagreeing row after an agreeing one, and there are both.
  bool agreed = false, any_differ = false;
  for (const auto& row : matrix["checks"]) {
    if (row["agree"].get<bool>()) agreed = true;
    else {
      any_differ = true;
      EXPECT_FALSE(agreed) << row["id"] << " disagrees but comes after an agreeing row";
    }
  }
  EXPECT_TRUE(any_differ && agreed) << "bwrap-leaky leaks what bwrap-strict denies";
  const std::string md = ReadText(dir + "/m.md");
  EXPECT_NE(md.find("| **bwrap-strict@sp-node-2** |"), std::string::npos) << md;
  const std::string html = ReadText(dir + "/m.html");
  for (const std::string& id : every_id) EXPECT_NE(html.find(">" + id + "</code>"), std::string::npos) << id;

  // `report --html`: the recorded run re-judged, as a page.
  CliRun page = RunCli({"report", leaky, "--no-color", "--html", dir + "/leaky.html"});
  EXPECT_EQ(page.exit_code, 1) << page.err;
  EXPECT_NE(ReadText(dir + "/leaky.html").find("FAIL: "), std::string::npos);
}

TEST(MatrixCliTest, AReportThatDoesNotReadIsAnErrorNamingItsFile) {
  const std::string dir = MakeTempDir("matrix");
  const std::string garbage = WriteFile(dir, "garbage.json", "{\"schema\": \"sandprobe-report/1\",\n  oops}");
  const std::string policy = WriteFile(dir, "policy.json", "{\"name\": \"not a report\"}");
  CliRun bad = RunCli({"matrix", garbage, "--html", dir + "/m.html"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("sandprobe matrix: " + garbage + ":2:3: not JSON"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir + "/m.html")) << "nothing is written from a bad input";
  CliRun not_report = RunCli({"matrix", policy});
  EXPECT_EQ(not_report.exit_code, 2);
  EXPECT_NE(not_report.err.find(policy + ": not a sandprobe JSON report"), std::string::npos) << not_report.err;
  CliRun missing = RunCli({"matrix", dir + "/missing.json"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("open(" + dir + "/missing.json)"), std::string::npos) << missing.err;
  CliRun into_dir = RunCli({"matrix", garbage, "--html", dir});
  EXPECT_EQ(into_dir.exit_code, 2);
  EXPECT_NE(into_dir.err.find("--html " + dir), std::string::npos) << into_dir.err;
}

}  // namespace
}  // namespace sandprobe::testing
