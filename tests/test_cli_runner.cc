#include "tests/test_cli_runner.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "launch/launcher.h"
#include "launch/proc_info.h"

namespace sandprobe::testing {

namespace fs = std::filesystem;

std::vector<int> Carriers(const std::string& needle) {
  std::vector<int> pids;
  for (int pid : ListPids()) {
    std::optional<ProcStat> stat = ReadProcStat(pid);
    if (stat && !stat->dead() && ReadProcFile(pid, "cmdline").find(needle) != std::string::npos) {
      pids.push_back(pid);
    }
  }
  return pids;
}

bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

std::string SourcePath(const std::string& relative) {
  if (!relative.empty() && relative.front() == '/') return relative;  // a file the test wrote
  return std::string(SANDPROBE_SOURCE_DIR) + "/" + relative;
}

CliRun RunCommand(const std::vector<std::string>& argv, const std::string& working_dir) {
  ProcessLauncher launcher;
  LaunchSpec spec;
  spec.argv = argv;
  spec.working_dir = working_dir;
  spec.timeout = std::chrono::seconds(300);
  CliRun run;
  StatusOr<LaunchResult> result = launcher.Launch(spec);
  if (!result.ok()) {
    ADD_FAILURE() << result.status().message();
    return run;
  }
  run.exit_code = result->exit_code.value_or(-1);
  run.out = result->out;
  run.err = result->err;
  return run;
}

namespace {

// The directories MakeTempDir made, removed when the test binary exits: every run of the
// integration tests made ~100 of them, and $TMPDIR filled with thousands. Kept when a test of
// this binary failed (their reports are the evidence) or SANDPROBE_KEEP_TEST_DIRS is set.
class MadeTempDirs {
 public:
  // Destroyed before GoogleTest's UnitTest (a function-local static made before the first
  // test, so before this one): Passed() is still there to ask.
  ~MadeTempDirs() {
    if (std::getenv("SANDPROBE_KEEP_TEST_DIRS") != nullptr || !::testing::UnitTest::GetInstance()->Passed()) return;
    for (const std::string& dir : dirs_) {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  }
  void Add(std::string dir) {
    std::lock_guard lock(mu_);
    dirs_.push_back(std::move(dir));
  }

 private:
  std::mutex mu_;
  std::vector<std::string> dirs_;
};

MadeTempDirs& Made() {
  static MadeTempDirs dirs;
  return dirs;
}

}  // namespace

std::string MakeTempDir(const std::string& name, const std::string& parent) {
  const fs::path under = parent.empty() ? fs::temp_directory_path() : fs::path(parent);
  std::string tmpl = (under / ("sp-" + name + "-XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp(" << tmpl << "): " << std::strerror(errno);
    return tmpl;
  }
  Made().Add(tmpl);
  return tmpl;
}

std::string WriteFile(const std::string& dir, const std::string& name, const std::string& content) {
  std::string path = dir + "/" + name;
  std::ofstream(path) << content;
  return path;
}

CliRun RunCli(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {SANDPROBE_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

CliRun RunProfile(const std::string& profile, const std::vector<std::string>& extra) {
  std::string dir = MakeTempDir("it");
  std::string json_path = dir + "/report.json";
  std::string junit_path = dir + "/junit.xml";
  std::vector<std::string> args = {"run", "--sandbox", SourcePath(profile), "--no-color",
                                   "--json", json_path, "--junit", junit_path};
  args.insert(args.end(), extra.begin(), extra.end());
  CliRun run = RunCli(args);
  std::ifstream in(json_path);
  if (in) run.report = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  run.junit_path = junit_path;
  return run;
}

bool BackendAvailable(const std::string& name, const std::vector<std::string>& probe) {
  CliRun run = RunCommand(probe);
  if (run.exit_code == 0) return true;
  std::string why = name + " unavailable (" + probe.front() + " exit " +
                    std::to_string(run.exit_code) + "): " + run.err.substr(0, 300);
  if (const char* required = std::getenv("SANDPROBE_REQUIRE_BACKENDS"); required && *required == '1') {
    ADD_FAILURE() << "required backend " << why;
  } else {
    GTEST_MESSAGE_(why.c_str(), ::testing::TestPartResult::kSkip);
  }
  return false;
}

const nlohmann::json* FindCheck(const nlohmann::json& report, const std::string& id) {
  if (report.contains("checks")) {
    for (const auto& check : report["checks"]) {
      if (check.value("id", "") == id) return &check;
    }
  }
  ADD_FAILURE() << "no check " << id << " in the report";
  return nullptr;
}

std::string CheckField(const nlohmann::json& report, const std::string& id, const char* key) {
  const nlohmann::json* check = FindCheck(report, id);
  return check && check->contains(key) && (*check)[key].is_string() ? (*check)[key].get<std::string>() : "";
}

void ExpectVerdict(const nlohmann::json& report, const std::string& id, const std::string& verdict,
                   const std::string& direction) {
  EXPECT_EQ(CheckField(report, id, "verdict"), verdict) << id << ": " << CheckField(report, id, "observed");
  if (!direction.empty()) {
    EXPECT_EQ(CheckField(report, id, "direction"), direction) << id;
  }
}

void ExpectNoContainerLeft(const nlohmann::json& report) {
  std::string run_id = report.value("run_id", "");
  ASSERT_FALSE(run_id.empty());
  CliRun ps = RunCommand({"docker", "ps", "-aq", "--filter", "label=sandprobe.run=" + run_id});
  EXPECT_EQ(ps.exit_code, 0);
  EXPECT_EQ(ps.out, "") << "containers of run " << run_id << " left behind";
}

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string SchemaProblem(const nlohmann::json& report) {
  char path[] = "/tmp/sandprobe-report-XXXXXX";
  int fd = ::mkstemp(path);
  if (fd < 0) return "mkstemp failed";
  std::string text = report.dump();
  bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written) return "write failed";
  CliRun check = RunCommand(
      {"python3", "-c",
       "import json, sys, jsonschema\n"
       "schema = json.load(open(sys.argv[1]))\n"
       "error = jsonschema.exceptions.best_match("
       "jsonschema.Draft202012Validator(schema).iter_errors(json.load(open(sys.argv[2]))))\n"
       "print('' if error is None else f'{list(error.absolute_path)}: {error.message}')\n",
       SourcePath("docs/report.schema.json"), path});
  ::unlink(path);
  if (check.exit_code != 0) return "python3 jsonschema failed: " + check.err;
  while (!check.out.empty() && check.out.back() == '\n') check.out.pop_back();
  return check.out;
}

}  // namespace sandprobe::testing
