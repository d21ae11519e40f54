// Green means checked (issue 25): a run exits 0 only when checks were judged. A backend that is
// missing, that this user may not use, or whose daemon is down is exit 3 with the cause and the
// fix told apart by mechanism; a non-root user gets a bubblewrap profile that works for it
// (bwrap-user); `report` of a run whose plan has no launch is exit 3; every bad input is exit 2
// naming the argument or file:line:col. Non-root runs use uid 65534 (nobody) on a copy of the
// build it can read, laid out as an install.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "contract/frame_reader.h"
#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kNobody = 65534;

json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return in ? json::parse(in, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true) : json();
}

// Every check of `report` has `verdict`.
void ExpectEvery(const json& report, const std::string& verdict) {
  ASSERT_TRUE(report.contains("checks")) << report.dump().substr(0, 500);
  ASSERT_FALSE(report["checks"].empty());
  for (const json& check : report["checks"]) EXPECT_EQ(check["verdict"], verdict) << check["id"] << ": " << check["observed"];
}

// A copy of the built CLI, its probe and the data, laid out as an install (bin/, lib/sandprobe,
// share/sandprobe) in a directory uid 65534 can read: the build tree may sit under a home
// directory nobody may enter. Made once per test binary.
const std::string& InstallForNobody() {
  static const std::string root = [] {
    const std::string dir = MakeTempDir("nobody-install");
    const fs::path cli(SANDPROBE_CLI);
    fs::create_directories(dir + "/bin");
    fs::create_directories(dir + "/lib/sandprobe");
    fs::create_directories(dir + "/share/sandprobe");
    fs::copy_file(cli, dir + "/bin/sandprobe");
    fs::copy_file(cli.parent_path() / "probe/sandprobe-probe", dir + "/lib/sandprobe/sandprobe-probe");
    for (const char* data : {"sandboxes", "policies", "suites"}) {
      fs::copy(SourcePath(data), dir + "/share/sandprobe/" + data, fs::copy_options::recursive);
    }
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      fs::permissions(entry.path(), entry.is_directory() ? fs::perms(0755) : fs::perms(0644));
    }
    for (const std::string& program : {dir + "/bin/sandprobe", dir + "/lib/sandprobe/sandprobe-probe"}) {
      fs::permissions(program, fs::perms(0755));
    }
    fs::permissions(dir, fs::perms(0755));
    return dir;
  }();
  return root;
}

// A directory that belongs to uid 65534 (its run root, home and reports).
std::string NobodysDir(const std::string& name) {
  const std::string dir = MakeTempDir(name);
  EXPECT_EQ(::chown(dir.c_str(), kNobody, kNobody), 0) << dir;
  return dir;
}

// `sandprobe ARGS` as uid 65534 in no group, without capabilities, from InstallForNobody().
CliRun RunAsNobody(const std::vector<std::string>& args, const std::string& home) {
  std::vector<std::string> argv = {"setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
                                   "--inh-caps", "-all", "env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                                   "HOME=" + home, "CI=1", "SANDPROBE_RUN_ROOT=" + home,
                                   InstallForNobody() + "/bin/sandprobe"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

bool RootOrSkip() {
  if (::geteuid() == 0) return true;
  ADD_FAILURE_AT(__FILE__, __LINE__) << "runs sandprobe as uid 65534: the test must run as root";
  return false;
}

// A non-root user without access to dockerd's socket: exit 3, the cause is the socket's
// permission and the fix is the docker group, not an install (issue 25: 25 SKIP, exit 0).
TEST(GreenMeansCheckedTest, ANonRootUserWithoutDockerAccessIsExit3WithTheGroupHint) {
  if (!RootOrSkip() || !BackendAvailable("docker", kDockerUp)) return;
  struct stat st {};
  if (::stat("/var/run/docker.sock", &st) == 0 && (st.st_mode & S_IWOTH)) {
    GTEST_SKIP() << "/var/run/docker.sock is writable by everyone here: uid 65534 may use docker";
  }
  const std::string home = NobodysDir("nobody-docker");
  CliRun run = RunAsNobody({"run", "--sandbox", "docker-hardened", "--no-color", "--json", home + "/r.json"}, home);
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  json report = ReadJson(home + "/r.json");
  ExpectEvery(report, "error");
  const std::string observed = CheckField(report, "fs.read.denied:/etc/shadow", "observed");
  EXPECT_THAT(observed, HasSubstr("cause: permission: dockerd's socket /var/run/docker.sock is there, but this user "
                                  "(uid 65534) may not open it"));
  EXPECT_THAT(observed, HasSubstr("usermod -aG docker"));
  EXPECT_THAT(observed, Not(HasSubstr("install")));
  const std::string n = std::to_string(report["checks"].size());
  EXPECT_THAT(run.out, HasSubstr("exit 3: " + n + " check(s) error or inconclusive; " + n +
                                 " of them: backend docker unavailable"));
}

// bwrap-strict drops to nobody with setpriv, which needs root: for another user the cause is that
// permission, and the fix names bwrap-user, never "install bubblewrap" (issue 25).
TEST(GreenMeansCheckedTest, BwrapStrictAsNonRootNamesSetprivsPermissionNotAnInstall) {
  if (!RootOrSkip() || !BackendAvailable("bwrap", kBwrapUp)) return;
  const std::string home = NobodysDir("nobody-bwrap");
  CliRun run = RunAsNobody({"run", "--sandbox", "bwrap-strict", "--no-color", "--json", home + "/r.json"}, home);
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  json report = ReadJson(home + "/r.json");
  ExpectEvery(report, "error");
  const std::string observed = CheckField(report, "env.secret.hidden", "observed");
  EXPECT_THAT(observed, HasSubstr("exit 127: setpriv: setgroups failed"));
  EXPECT_THAT(observed, HasSubstr("cause: permission: setpriv switches to another user, which needs CAP_SETUID and "
                                  "CAP_SETGID, and this process (uid 65534) has neither"));
  EXPECT_THAT(observed, HasSubstr("bwrap-user"));
  EXPECT_THAT(observed, Not(HasSubstr("apt-get install bubblewrap")));
}

// The profile for that user: bubblewrap makes the user namespace itself. The default suite is
// judged and passes as uid 65534.
TEST(GreenMeansCheckedTest, BwrapUserWorksForANonRootUser) {
  if (!RootOrSkip() || !BackendAvailable("bwrap", kBwrapUp)) return;
  const std::string home = NobodysDir("nobody-bwrap-user");
  CliRun run = RunAsNobody({"run", "--sandbox", "bwrap-user", "--no-color", "--json", home + "/r.json"}, home);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  json report = ReadJson(home + "/r.json");
  ASSERT_TRUE(report.is_object()) << run.err;
  EXPECT_EQ(report["profile"]["name"], "bwrap-user");
  EXPECT_EQ(report["summary"]["pass"], report["summary"]["total"]) << report["summary"];
  EXPECT_GE(report["summary"]["pass"].get<int>(), 20);
  // The canary and /etc/shadow were denied by the sandbox, with the host's own data behind them.
  ExpectVerdict(report, "fs.read.denied:host-canary", "pass");
  ExpectVerdict(report, "fs.read.denied:/etc/shadow", "pass");
}

// bwrap-strict where bwrap is not installed (a PATH with setpriv only): setpriv exits 127 as root
// too, but root may switch users, so the cause is the program setpriv could not run.
TEST(GreenMeansCheckedTest, AMissingProgramIsNamedWithTheInstallHint) {
  if (!RootOrSkip() || !BackendAvailable("bwrap", kBwrapUp)) return;
  const std::string bin = MakeTempDir("only-setpriv");
  fs::create_symlink("/usr/bin/setpriv", bin + "/setpriv");
  const std::string out = MakeTempDir("missing-bwrap");
  CliRun run = RunCommand({"env", "PATH=" + bin, "SANDPROBE_RUN_ROOT=" + out, SANDPROBE_CLI, "run", "--sandbox",
                           "bwrap-strict", "--no-color", "--json", out + "/r.json"});
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  json report = ReadJson(out + "/r.json");
  ExpectEvery(report, "error");
  const std::string observed = CheckField(report, "fs.read.denied:/etc/shadow", "observed");
  EXPECT_THAT(observed, HasSubstr("cause: missing program: bwrap is not installed (not found in PATH); fix: install: "
                                  "apt-get install bubblewrap util-linux"));
}

// The docker CLI pointed at a socket nobody listens on (a dockerd killed with SIGKILL leaves its
// socket), or at no socket at all: the daemon is down, whatever the CLI's words.
TEST(GreenMeansCheckedTest, ADockerdThatIsNotRunningIsDaemonDown) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  const std::string dir = MakeTempDir("dead-dockerd");
  const std::string socket_path = dir + "/docker.sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);  // bound, never listening
  for (const auto& [host, why] : {std::pair{socket_path, "nothing listens on " + socket_path},
                                  std::pair{dir + "/none.sock", "there is no socket at " + dir + "/none.sock"}}) {
    CliRun run = RunCommand({"env", "DOCKER_HOST=unix://" + host, "SANDPROBE_RUN_ROOT=" + dir, SANDPROBE_CLI, "run",
                             "--sandbox", "docker-hardened", "--no-color", "--json", dir + "/r.json"});
    EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
    json report = ReadJson(dir + "/r.json");
    ExpectEvery(report, "error");
    EXPECT_THAT(CheckField(report, "fs.read.denied:/etc/shadow", "observed"), HasSubstr("cause: daemon down: " + why));
  }
  ::close(fd);
}

// `report` on a recorded run whose plan has no launch: every check is "not probed", nothing is
// judged, exit 3 (issue 25: 95 SKIP, exit 0).
TEST(GreenMeansCheckedTest, AReportWhosePlanHasNoLaunchIsExit3) {
  const std::string dir = MakeTempDir("no-batches");
  CliRun run = RunCli({"run", "--sandbox", "host", "--no-color", "--json", dir + "/r.json"});
  ASSERT_EQ(run.exit_code, 1) << run.err;  // the host fails tier-low
  json report = ReadJson(dir + "/r.json");
  report["plan"]["batches"] = json::array();
  std::ofstream(dir + "/no-batches.json") << report.dump();
  CliRun rejudged = RunCli({"report", dir + "/no-batches.json", "--no-color"});
  EXPECT_EQ(rejudged.exit_code, 3) << rejudged.out << rejudged.err;
  const std::string n = std::to_string(report["checks"].size());
  EXPECT_THAT(rejudged.out,
              HasSubstr("exit 3: nothing was judged: " + n + " of " + n + " check(s) skipped: not probed in run"));
}

// Each input that was accepted without a word: exit 2, naming the argument or file:line:col.
TEST(GreenMeansCheckedTest, EveryBadInputIsExit2NamingIt) {
  const std::string dir = MakeTempDir("bad-input");
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::string waivers = WriteFile(dir, "w.json", R"({"waivers": [{"check": "[", "reason": "r", "expires": "2099-01-01"}]})");
  json zero_width = ReadJson(SourcePath("sandboxes/bwrap-strict.json"));
  zero_width["policy"] = SourcePath("policies/tier-low.json");
  zero_width["probe_path"] = "/opt/sandprobe/sandprobe\u200b-probe";
  const std::string zw = WriteFile(dir, "zw.json", zero_width.dump(2));
  json relative = zero_width;
  relative["probe_path"] = "opt/sandprobe/sandprobe-probe";
  const std::string rel = WriteFile(dir, "rel.json", relative.dump(2));
  json policy = ReadJson(SourcePath("policies/tier-low.json"));
  policy["filesystem"]["unreadable"][0] = "/etc/sha\u200bdow";
  const std::string pzw = WriteFile(dir, "pzw.json", policy.dump(2));
  const Case cases[] = {
      {{"run", "--sandbox", "host", "--json", ""}, "--json: an empty value"},
      {{"run", "--sandbox", "host", "--policy", ""}, "--policy: an empty value"},
      {{"report", dir + "/r.json", "--waivers", ""}, "--waivers: an empty value"},
      {{"run", "--sandbox", "host,"}, "--sandbox \"host,\": item 2 is empty"},
      {{"run", "--sandbox", "host", "--suite", "default,,network"}, "--suite \"default,,network\": item 2 is empty"},
      {{"run", "--sandbox", "host", "--waivers", waivers}, waivers + ":1:24: /waivers/0/check: not a valid glob"},
      {{"run", "--sandbox", "host", "--skip", "fs.read.*["}, "--skip \"fs.read.*[\": not a valid glob"},
      {{"validate", zw}, zw + ":"},
      {{"validate", rel}, "/probe_path: must be absolute or start with {probe_dir}/, got \"opt/sandprobe/sandprobe-probe\""},
      {{"run", "--sandbox", zw}, "/probe_path: contains U+200B"},
      {{"validate", pzw}, "/filesystem/unreadable/0: contains U+200B (an invisible format character) at character 9"},
  };
  for (const Case& c : cases) {
    CliRun run = RunCli(c.args);
    EXPECT_EQ(run.exit_code, 2) << ::testing::PrintToString(c.args) << "\n" << run.out << run.err;
    EXPECT_THAT(run.err, HasSubstr(c.says)) << ::testing::PrintToString(c.args);
  }
  // A relative run root was replaced by /var/tmp without a word; a data dir that is not there
  // listed nothing.
  CliRun relative_root = RunCommand({"env", "SANDPROBE_RUN_ROOT=var/tmp", SANDPROBE_CLI, "sweep", "--dry-run"});
  EXPECT_EQ(relative_root.exit_code, 2) << relative_root.out;
  EXPECT_THAT(relative_root.err, HasSubstr("SANDPROBE_RUN_ROOT=\"var/tmp\": must be an absolute path"));
  CliRun no_data = RunCli({"--data-dir", dir + "/none", "list"});
  EXPECT_EQ(no_data.exit_code, 2) << no_data.out;
  EXPECT_THAT(no_data.err, HasSubstr("--data-dir"));
}

// `diff` reads what `report` reads: the same size limit (a real 10 MB report is read by both)
// and the same schema check (a sandprobe-report/2 file is refused by both).
TEST(GreenMeansCheckedTest, DiffReadsWhatReportReads) {
  const std::string dir = MakeTempDir("diff-reader");
  CliRun run = RunCli({"run", "--sandbox", "host", "--no-color", "--json", dir + "/r.json"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  json report = ReadJson(dir + "/r.json");
  json big = report;
  big["witnesses"]["padding"] = std::string(10 << 20, 'x');
  std::ofstream(dir + "/big.json") << big.dump();
  ASSERT_GT(fs::file_size(dir + "/big.json"), 10u << 20);
  CliRun diff = RunCli({"diff", dir + "/r.json", dir + "/big.json"});
  EXPECT_EQ(diff.exit_code, 0) << diff.out << diff.err;
  EXPECT_THAT(diff.out, HasSubstr("0 changed"));
  CliRun rejudged = RunCli({"report", dir + "/big.json", "--no-color"});
  EXPECT_EQ(rejudged.exit_code, 1) << rejudged.err;

  json v2 = report;
  v2["schema"] = "sandprobe-report/2";
  std::ofstream(dir + "/v2.json") << v2.dump();
  const std::string refused = dir + "/v2.json: report schema sandprobe-report/2 is not sandprobe-report/1";
  CliRun diff_v2 = RunCli({"diff", dir + "/r.json", dir + "/v2.json"});
  EXPECT_EQ(diff_v2.exit_code, 2) << diff_v2.out;
  EXPECT_THAT(diff_v2.err, HasSubstr(refused));
  CliRun report_v2 = RunCli({"report", dir + "/v2.json"});
  EXPECT_EQ(report_v2.exit_code, 2);
  EXPECT_THAT(report_v2.err, HasSubstr(refused));
}

// A frame whose family is a number is a protocol error naming its line: never a fact, never a
// complete launch (the reader every launch goes through).
TEST(GreenMeansCheckedTest, AFrameWhoseFamilyIsANumberIsAProtocolError) {
  const std::string stream = "@@sandprobe n0 {\"family\": 7, \"path\": \"/etc/shadow\", \"ok\": false}\n"
                             "@@sandprobe n0 {\"done\": true}\n";
  ProbeFrames frames = ParseFrames(stream, "n0", false);
  EXPECT_TRUE(frames.facts.empty());
  EXPECT_FALSE(FramesComplete(frames));
  ASSERT_EQ(frames.protocol_errors.size(), 1u);
  EXPECT_THAT(frames.protocol_errors[0], HasSubstr("line 1"));
  EXPECT_THAT(frames.protocol_errors[0], HasSubstr("family"));
}

}  // namespace
}  // namespace sandprobe::testing
