// The CLI's conventions (issue 29): `help [COMMAND]`, `report --help` naming only its own
// options, `validate` of a report, colour by NO_COLOR/FORCE_COLOR, bash completion from the
// command table, and a program found on PATH outside the system directories (a warning, not an
// error). Each against the built binary.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// The subcommands as the binary lists them (`help --commands`: NAME, a tab, what it does).
std::vector<std::string> Commands() {
  CliRun run = RunCli({"help", "--commands"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  std::vector<std::string> names;
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) names.push_back(line.substr(0, line.find('\t')));
  return names;
}

TEST(CliConventionsTest, HelpCommandPrintsWhatHelpOptionPrints) {
  const std::vector<std::string> commands = Commands();
  ASSERT_GE(commands.size(), 10u);
  for (const std::string& command : commands) {
    CliRun help = RunCli({"help", command});
    CliRun option = RunCli({command, "--help"});
    EXPECT_EQ(help.exit_code, 0) << command << ": " << help.err;
    EXPECT_EQ(help.out, option.out) << command;
  }
  CliRun top = RunCli({"help"});
  EXPECT_EQ(top.exit_code, 0) << top.err;
  EXPECT_EQ(top.out, RunCli({"--help"}).out);
}

TEST(CliConventionsTest, HelpOfAnUnknownCommandNamesItAndTheCommands) {
  CliRun run = RunCli({"help", "rnu"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("help rnu: no such command (the commands: run, validate, list,"));
  EXPECT_EQ(run.out, "");
}

TEST(CliConventionsTest, ReportHelpNamesNoOptionReportLacks) {
  CliRun help = RunCli({"report", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, Not(HasSubstr("--sandbox")));
  EXPECT_THAT(help.out, HasSubstr("--matrix"));
}

class ValidateReportTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir("validate-report"); }
  std::string Golden() { return SourcePath("reports/testdata/report.golden.json"); }
  std::string dir_;
};

TEST_F(ValidateReportTest, AReportIsSaidToBeOneAndReadAsOne) {
  CliRun run = RunCli({"validate", Golden()});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr(Golden() + " is a sandprobe report (sandprobe-report/1), not a policy or "
                                 "profile: it reads as one"));
  EXPECT_EQ(run.err, "");
}

TEST_F(ValidateReportTest, AMalformedReportIsAnErrorAsAReport) {
  std::ifstream in(Golden());
  nlohmann::json report = nlohmann::json::parse(in);
  report.erase("launches");
  const std::string broken = WriteFile(dir_, "broken.json", report.dump(2));
  CliRun run = RunCli({"validate", broken});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr(broken + " is a sandprobe report (sandprobe-report/1), not a policy or "
                                 "profile, and it does not read as one: "));
  EXPECT_THAT(run.err, HasSubstr("launches"));
  EXPECT_THAT(run.err, Not(HasSubstr("unknown key")));  // not read as a policy
  report = nlohmann::json::parse(std::ifstream(Golden()));
  report["schema"] = "sandprobe-report/0";
  const std::string old = WriteFile(dir_, "old.json", report.dump(2));
  run = RunCli({"validate", old});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("(sandprobe-report/0), not a policy or profile, and it does not read as one: "));
}

// FORCE_COLOR colours a pipe; NO_COLOR (non-empty) wins over it; an empty NO_COLOR is unset.
TEST(CliConventionsTest, ColourFollowsNoColorAndForceColor) {
  // A report `report` can re-judge: one check of a real run on the host profile.
  const std::string dir = MakeTempDir("colour");
  const std::string golden = dir + "/host.json";
  CliRun made = RunCli({"run", "--sandbox", "host", "--check", "env.secret.hidden", "--fail-on", "none", "--json", golden});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  auto report = [&](std::vector<std::string> env) {
    env.insert(env.begin(), "/usr/bin/env");
    env.insert(env.begin() + 1, "-u");
    env.insert(env.begin() + 2, "NO_COLOR");
    for (const char* arg : {SANDPROBE_CLI, "report", "--fail-on", "none"}) env.emplace_back(arg);
    env.push_back(golden);
    CliRun run = RunCommand(env);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return run.out.find("\x1b[") != std::string::npos;
  };
  EXPECT_FALSE(report({}));                                     // a pipe: no colour
  EXPECT_TRUE(report({"FORCE_COLOR=1"}));
  EXPECT_FALSE(report({"FORCE_COLOR=0"}));
  EXPECT_FALSE(report({"FORCE_COLOR=1", "NO_COLOR=1"}));
  EXPECT_TRUE(report({"FORCE_COLOR=1", "NO_COLOR="}));
}

// The script from `completion bash`, sourced in bash, completing `sandprobe WORDS... CUR`.
std::vector<std::string> Complete(const std::string& script, const std::string& line) {
  const std::string driver =
      "source \"$1\"; COMP_LINE=\"$2\"; read -ra COMP_WORDS <<< \"$2\"; "
      "[[ $2 == *' ' ]] && COMP_WORDS+=(''); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); "
      "_sandprobe_complete; printf '%s\\n' \"${COMPREPLY[@]}\"";
  CliRun run = RunCommand({"bash", "--norc", "-c", driver, "bash", script, line});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  std::vector<std::string> words;
  std::istringstream lines(run.out);
  for (std::string word; std::getline(lines, word);) if (!word.empty()) words.push_back(word);
  return words;
}

TEST(CliConventionsTest, BashCompletionOffersEveryCommandAndTheOptionsOfRun) {
  CliRun script = RunCli({"completion", "bash"});
  ASSERT_EQ(script.exit_code, 0) << script.err;
  const std::string dir = MakeTempDir("completion");
  const std::string path = WriteFile(dir, "sandprobe", script.out);
  const std::vector<std::string> commands = Commands();
  EXPECT_THAT(Complete(path, "sandprobe "), ::testing::UnorderedElementsAreArray(commands));
  EXPECT_THAT(Complete(path, "sandprobe help "), ::testing::UnorderedElementsAreArray(commands));
  EXPECT_THAT(Complete(path, "sandprobe --data-dir /tmp "), ::testing::UnorderedElementsAreArray(commands));
  const std::vector<std::string> run_options = Complete(path, "sandprobe run --");
  for (const char* option : {"--sandbox", "--suite", "--json", "--junit", "--fail-on", "--no-color", "--help"}) {
    EXPECT_THAT(run_options, ::testing::Contains(std::string(option)));
  }
  EXPECT_THAT(run_options, Not(::testing::Contains(std::string("--format"))));  // report's, not run's
  EXPECT_THAT(Complete(path, "sandprobe report --for"), ::testing::ElementsAre("--format"));
  // The value of --json is a file name, not an option or a command.
  const std::vector<std::string> files = Complete(path, "sandprobe run --json " + dir + "/sand");
  EXPECT_THAT(files, ::testing::ElementsAre(dir + "/sandprobe"));
}

// A backend program found on PATH outside the system directories (as ~/.local/bin or /snap/bin
// would be): the run works, and a warning says where the program was found, in the console and
// in the JSON report.
TEST(CliConventionsTest, AProgramOnPathOutsideTheSystemDirectoriesWorksWithAWarning) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  const std::string dir = MakeTempDir("localbin");
  fs::create_directory(dir + "/bin");
  fs::create_symlink("/usr/bin/setpriv", dir + "/bin/setpriv");  // bwrap-strict starts with setpriv
  CliRun run = RunCommand({"/usr/bin/env", "PATH=" + dir + "/bin:" + std::getenv("PATH"), SANDPROBE_CLI, "run",
                           "--sandbox", "bwrap-strict", "--no-color", "--no-progress", "--json", dir + "/r.json"});
  std::ifstream in(dir + "/r.json");
  const nlohmann::json report = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(report.is_object()) << run.err;
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;  // bwrap-strict passes its own policy
  std::map<std::string, int> verdicts;
  for (const auto& check : report["checks"]) ++verdicts[check.value("verdict", "")];
  EXPECT_EQ(verdicts["error"], 0) << run.out;
  EXPECT_GT(verdicts["pass"], 10) << run.out;
  const std::string where = "found on PATH in " + dir + "/bin, outside the system paths";
  EXPECT_THAT(run.out, HasSubstr("warning: launches ran " + dir + "/bin/setpriv"));
  EXPECT_THAT(run.out, HasSubstr(where));
  int warned = 0;
  for (const auto& launch : report["launches"]) {
    if (launch.value("executable", "") != dir + "/bin/setpriv") continue;
    EXPECT_THAT(launch.value("executable_warning", ""), HasSubstr(where));
    ++warned;
  }
  EXPECT_GT(warned, 0);
}

}  // namespace
}  // namespace sandprobe::testing
