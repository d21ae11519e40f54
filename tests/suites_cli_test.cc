// Several suites in one run (`--suite all`), the matrix over sandboxes (`--sandbox a,b`), and
// the selection a report records for `sandprobe diff`, through the built CLI on real backends.
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

namespace fs = std::filesystem;

// Reports, and the repository's data files (JSON with comments).
// The repository's suites, by name (what `--suite all` means with the default data dir).
std::vector<std::string> ShippedSuites() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(SourcePath("suites"))) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// id -> "verdict (direction)" of every check of a report.
std::map<std::string, std::string> Verdicts(const nlohmann::json& report) {
  std::map<std::string, std::string> out;
  for (const auto& check : report["checks"]) {
    std::string direction = check["direction"].is_string() ? check["direction"].get<std::string>() : "";
    out[check["id"].get<std::string>()] = check["verdict"].get<std::string>() + (direction.empty() ? "" : " (" + direction + ")");
  }
  return out;
}

int ProbeLaunches(const nlohmann::json& report) {
  int n = 0;
  for (const auto& launch : report["launches"]) n += launch.value("purpose", "") == "probe" ? 1 : 0;
  return n;
}

void ExpectValidJunit(const std::string& path) {
  CliRun lint = RunCommand({"xmllint", "--noout", "--schema", SANDPROBE_JUNIT_XSD, path});
  EXPECT_EQ(lint.exit_code, 0) << path << ": " << lint.err;
}

// Acceptance: `--suite all` is one run and one report whose verdicts are those of the five
// suites run one by one, with fewer launches (the suites share the shared launch).
TEST(SuitesCliTest, AllSuitesInOneRunJudgeAsTheSuitesRunSeparately) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  const std::vector<std::string> suites = ShippedSuites();
  ASSERT_GE(suites.size(), 5u);
  CliRun all = RunProfile("sandboxes/bwrap-strict.json", {"--suite", "all"});
  ASSERT_TRUE(all.report.is_object()) << all.err;
  ASSERT_TRUE(all.exit_code == 0 || all.exit_code == 1) << all.out << all.err;
  EXPECT_EQ(all.report["suites"], nlohmann::json(suites));
  std::string joined;
  for (const std::string& s : suites) joined += (joined.empty() ? "" : "+") + s;
  EXPECT_EQ(all.report["suite"], joined);
  EXPECT_EQ(SchemaProblem(all.report), "");
  ExpectValidJunit(all.junit_path);

  std::map<std::string, std::string> separate;
  int separate_launches = 0;
  for (const std::string& suite : suites) {
    CliRun one = RunProfile("sandboxes/bwrap-strict.json", {"--suite", suite});
    ASSERT_TRUE(one.report.is_object()) << suite << ": " << one.err;
    EXPECT_EQ(one.report["suites"], nlohmann::json::array({suite}));
    for (const auto& [id, verdict] : Verdicts(one.report)) {
      EXPECT_TRUE(separate.emplace(id, verdict).second) << id << " planned by two suites";
    }
    separate_launches += ProbeLaunches(one.report);
  }
  std::map<std::string, std::string> together = Verdicts(all.report);
  EXPECT_EQ(together.size(), separate.size()) << "the same checks, each once";
  for (const auto& [id, verdict] : separate) {
    auto it = together.find(id);
    if (it == together.end()) {
      ADD_FAILURE() << id << " is missing from the --suite all run";
      continue;
    }
    EXPECT_EQ(it->second, verdict) << id << ": together vs alone; now: " << CheckField(all.report, id, "observed");
  }
  EXPECT_LT(ProbeLaunches(all.report), separate_launches)
      << "the shared launch serves default, network and privileges at once";

  // The recorded run of several suites re-judges like a run of one: against its own policy,
  // every verdict comes back unchanged.
  const std::string recorded = fs::path(all.junit_path).parent_path() / "report.json";
  const std::string rejudged = fs::path(all.junit_path).parent_path() / "rejudged.json";
  CliRun again = RunCli({"report", recorded, "--json", rejudged});
  EXPECT_EQ(again.exit_code, all.exit_code) << again.err;
  EXPECT_EQ(Verdicts(ReadJson(rejudged)), together);
}

// Acceptance: the matrix over bwrap-strict and docker-hardened: one report per sandbox (named
// after it), each valid, and one table whose cells are those reports' verdicts.
TEST(SuitesCliTest, MatrixRunsEachSandboxAndLinesTheirVerdictsUp) {
  if (!BackendAvailable("bwrap", kBwrapUp) || !BackendAvailable("docker", kDockerUp)) return;
  std::string dir = MakeTempDir("suites");
  CliRun run = RunCli({"run", "--sandbox", "bwrap-strict,docker-hardened", "--suite", "default,network",
                       "--no-color", "--json", dir + "/r.json", "--junit", dir + "/j.xml", "--matrix",
                       dir + "/m.json"});
  EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.out << run.err;
  EXPECT_NE(run.out.find("matrix: 2 sandboxes"), std::string::npos) << run.out;
  EXPECT_FALSE(fs::exists(dir + "/r.json")) << "no unmarked report: each sandbox writes its own";
  nlohmann::json matrix = ReadJson(dir + "/m.json");
  ASSERT_TRUE(matrix.is_object()) << run.err;
  ASSERT_EQ(matrix["sandboxes"].size(), 2u);
  bool any_fail = false;
  const std::vector<std::string> names = {"bwrap-strict", "docker-hardened"};
  for (std::size_t c = 0; c < names.size(); ++c) {
    nlohmann::json report = ReadJson(dir + "/r." + names[c] + ".json");
    ASSERT_TRUE(report.is_object()) << names[c] << ": " << run.err;
    EXPECT_EQ(report["profile"]["name"], names[c]);
    EXPECT_EQ(report["suite"], "default+network");
    EXPECT_EQ(SchemaProblem(report), "") << names[c];
    ExpectValidJunit(dir + "/j." + names[c] + ".xml");
    EXPECT_EQ(matrix["sandboxes"][c]["name"], names[c]);
    EXPECT_EQ(matrix["sandboxes"][c]["run_id"], report["run_id"]);
    EXPECT_TRUE(matrix["sandboxes"][c]["note"].is_null()) << matrix["sandboxes"][c]["note"];
    if (names[c] == "docker-hardened") ExpectNoContainerLeft(report);
    std::map<std::string, std::string> verdicts = Verdicts(report);
    std::size_t cells = 0;
    for (const auto& row : matrix["checks"]) {
      const auto& cell = row["verdicts"][c];
      auto it = verdicts.find(row["id"].get<std::string>());
      if (it == verdicts.end()) {
        EXPECT_TRUE(cell.is_null()) << row["id"];
        continue;
      }
      ++cells;
      EXPECT_EQ(cell, it->second) << names[c] << " " << row["id"];
      any_fail = any_fail || it->second.rfind("fail", 0) == 0;
    }
    EXPECT_EQ(cells, verdicts.size()) << names[c] << ": every check of its report is a cell";
  }
  if (any_fail) {
    EXPECT_EQ(run.exit_code, 1) << "the worst of the runs";
  }
  fs::remove_all(dir);
}

// A sandbox whose backend is missing is a column of errors (exit 3) by default; with
// --allow-missing-backend a column of skips that says why and does not gate the matrix, not an
// abort; bad input anywhere in the list is exit 2 before anything runs.
TEST(SuitesCliTest, AMissingBackendIsASkippedColumnWhenAllowedAndBadInputStopsBeforeAnyRun) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  std::string dir = MakeTempDir("suites");
  nlohmann::json profile = ReadJson(SourcePath("sandboxes/bwrap-strict.json"));
  ASSERT_TRUE(profile.is_object());
  profile["name"] = "bwrap-absent";
  profile["policy"] = SourcePath("policies/tier-low.json");
  // As an uninstalled backend looks: its requires fails (checked before any launch).
  profile["requires"] = nlohmann::json::array({nlohmann::json::array({"sh", "-c", "echo no such backend >&2; exit 1"})});
  profile["preflight"] = "before";
  std::ofstream(dir + "/absent.json") << profile.dump(2);
  CliRun required = RunCli({"run", "--sandbox", "bwrap-strict," + dir + "/absent.json", "--no-color", "--json",
                            dir + "/required.json"});
  EXPECT_EQ(required.exit_code, 3) << "a missing backend checked nothing: " << required.out << required.err;
  CliRun run = RunCli({"run", "--sandbox", "bwrap-strict," + dir + "/absent.json", "--no-color", "--json",
                       dir + "/r.json", "--matrix", dir + "/m.md", "--allow-missing-backend"});
  EXPECT_EQ(run.exit_code, 0) << "an allowed missing column does not gate the others: " << run.out << run.err;
  EXPECT_NE(run.out.find("1 whose backend was unavailable not counted (--allow-missing-backend)"), std::string::npos)
      << run.out;
  nlohmann::json absent = ReadJson(dir + "/r.bwrap-absent.json");
  ASSERT_TRUE(absent.is_object()) << run.err;
  EXPECT_EQ(absent["summary"]["skip"], absent["summary"]["total"]);
  std::ifstream md(dir + "/m.md");
  std::string table((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_NE(table.find("| **bwrap-absent** |"), std::string::npos) << table;
  EXPECT_NE(table.find("skipped: "), std::string::npos) << table;
  EXPECT_NE(table.find("no such backend"), std::string::npos) << table;

  std::string bad_dir = MakeTempDir("suites");
  CliRun bad = RunCli({"run", "--sandbox", "bwrap-strict," + dir + "/missing.json", "--json", bad_dir + "/r.json"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("missing.json"), std::string::npos) << bad.err;
  EXPECT_TRUE(fs::is_empty(bad_dir)) << "nothing ran, nothing was written";
  CliRun to_stdout = RunCli({"run", "--sandbox", "bwrap-strict,bwrap-share-net", "--json", "-"});
  EXPECT_EQ(to_stdout.exit_code, 2) << "two reports cannot share stdout: " << to_stdout.err;
  fs::remove_all(dir);
  fs::remove_all(bad_dir);
}

// A run narrowed by --check and --suite records it, and `sandprobe diff` against the full run
// calls nothing it left out a regression; a check it selected but lacks still is one.
TEST(SuitesCliTest, DiffAgainstASelectedRunCallsTheLeftOutChecksNotSelected) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  CliRun full = RunProfile("sandboxes/bwrap-strict.json", {"--suite", "default,network"});
  ASSERT_TRUE(full.report.is_object()) << full.err;
  CliRun narrow = RunProfile("sandboxes/bwrap-strict.json", {"--suite", "default", "--check", "fs.read.*"});
  ASSERT_TRUE(narrow.report.is_object()) << narrow.err;
  EXPECT_EQ(narrow.report["selection"]["check"], nlohmann::json::array({"fs.read.*"}));
  EXPECT_EQ(narrow.report["suites"], nlohmann::json::array({"default"}));
  EXPECT_EQ(SchemaProblem(narrow.report), "");
  std::string dir = MakeTempDir("suites");
  std::ofstream(dir + "/full.json") << full.report.dump();
  std::ofstream(dir + "/narrow.json") << narrow.report.dump();
  CliRun diff = RunCli({"diff", dir + "/full.json", dir + "/narrow.json", "--format", "json"});
  nlohmann::json d = nlohmann::json::parse(diff.out, nullptr, false);
  ASSERT_TRUE(d.is_object()) << diff.out << diff.err;
  EXPECT_EQ(d["regressions"], 0) << diff.out;
  std::size_t left_out = full.report["checks"].size() - narrow.report["checks"].size();
  EXPECT_GT(left_out, 0u);
  EXPECT_EQ(d["not_selected"].size(), left_out) << diff.out;
  // The other way round the narrow run recorded nothing that excuses a missing check... but
  // every check it has is in the full run: no regression, only additions.
  CliRun back = RunCli({"diff", dir + "/narrow.json", dir + "/full.json", "--format", "json"});
  nlohmann::json b = nlohmann::json::parse(back.out, nullptr, false);
  ASSERT_TRUE(b.is_object()) << back.out << back.err;
  EXPECT_EQ(b["not_selected"].size(), 0u);
  // A selected check that vanished is still a regression: drop one from the narrow report.
  nlohmann::json lacking = narrow.report;
  lacking["checks"].erase(lacking["checks"].begin());
  std::ofstream(dir + "/lacking.json") << lacking.dump();
  CliRun gone = RunCli({"diff", dir + "/narrow.json", dir + "/lacking.json"});
  EXPECT_EQ(gone.exit_code, 1) << gone.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sandprobe::testing
