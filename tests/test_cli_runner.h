// Runs the built sandprobe CLI for integration tests, through the project's own launcher.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sandprobe::testing {

struct CliRun {
  int exit_code = -1;
  std::string out, err;
  nlohmann::json report;   // the --json report, when one was asked for and written
  std::string junit_path;  // the --junit report path
};

// `sandprobe run --sandbox PROFILE [extra...]` with --json/--junit into a fresh temp dir.
CliRun RunProfile(const std::string& profile, const std::vector<std::string>& extra = {});
// `sandprobe ARGS...` as is.
CliRun RunCli(const std::vector<std::string>& args);
// Any command (for docker ps, xmllint); returns exit code and output. `working_dir` "" keeps
// the test's own.
CliRun RunCommand(const std::vector<std::string>& argv, const std::string& working_dir = "");

// Preflights for BackendAvailable: bwrap can make its namespaces; docker has the image the
// docker profiles run.
inline const std::vector<std::string> kBwrapUp = {"bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"};
inline const std::vector<std::string> kDockerUp = {"docker", "image", "inspect", "sandprobe/agent:latest"};

// A fresh directory: PARENT/sp-NAME-XXXXXX (PARENT: $TMPDIR unless given), removed when the
// test binary exits unless a test failed (or SANDPROBE_KEEP_TEST_DIRS is set).
std::string MakeTempDir(const std::string& name, const std::string& parent = "");

// Writes `content` to DIR/NAME; returns that path.
std::string WriteFile(const std::string& dir, const std::string& name, const std::string& content);

// Skips the test (or fails it when SANDPROBE_REQUIRE_BACKENDS=1) unless `probe` exits 0.
// Returns false when the caller must return.
bool BackendAvailable(const std::string& name, const std::vector<std::string>& probe);

// The verdict of check `id` in a report (fails the test and returns null when absent).
const nlohmann::json* FindCheck(const nlohmann::json& report, const std::string& id);

// A path in the checkout; an absolute path (a file the test wrote) as it is.
std::string SourcePath(const std::string& relative);

// A string field of check `id` ("verdict", "observed", "direction", ...); "" when absent.
std::string CheckField(const nlohmann::json& report, const std::string& id, const char* key);
// Expects check `id` to have `verdict` (and `direction` when given); the message shows what it
// observed.
void ExpectVerdict(const nlohmann::json& report, const std::string& id, const std::string& verdict,
                   const std::string& direction = "");
// No container carrying the report's run label is left.
void ExpectNoContainerLeft(const nlohmann::json& report);

// Pids of live processes whose command line contains `needle`.
std::vector<int> Carriers(const std::string& needle);
// Polls `done` every 100 ms for at most `limit`; its last answer.
bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds limit);

// A JSON file the test wrote or read (comments allowed): null when it cannot be opened,
// discarded when it does not parse.
nlohmann::json ReadJson(const std::string& path);
// A file's bytes ("" when it cannot be opened).
std::string ReadText(const std::string& path);

// "" when `report` is valid against docs/report.schema.json (python3 jsonschema), else why.
std::string SchemaProblem(const nlohmann::json& report);

}  // namespace sandprobe::testing
