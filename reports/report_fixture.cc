#include "reports/report_fixture.h"

#include <dirent.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sandprobe::report_fixture {
namespace {

Verdict MakeVerdict(std::string id, std::string family, Severity severity, Outcome outcome,
                    Direction direction, std::string expected, std::string observed) {
  Verdict v;
  v.check.id = std::move(id);
  v.check.family = std::move(family);
  v.check.severity = severity;
  v.outcome = outcome;
  v.direction = direction;
  v.expected = std::move(expected);
  v.observed = std::move(observed);
  v.duration_seconds = 0.25;
  return v;
}

}  // namespace

std::string HostileBytes() {
  std::string s = "\x1b[1;31mred\x1b[0m plain \x1b]0;window title\x07 after-osc ";
  s += std::string("NUL:\0:", 6);
  s += " lone-esc:\x1b: bell:\x07 bs:\x08 ";
  s += "bad-lead:\xff\xfe truncated:\xc3 surrogate:\xed\xa0\x80 overlong:\xc0\xaf ";
  s += "cdata-end:]]> amp:& lt:< quote:\" ";
  s += "u+fffe:\xef\xbf\xbe u+ffff:\xef\xbf\xbf valid: caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80\n";
  s += "second line\twith tab\r\n";
  return s;
}

std::string Big200K() {
  std::string s;
  s.reserve(200 * 1024);
  for (int i = 0; s.size() < 200 * 1024 - 14; ++i) s += "line " + std::to_string(i) + " x\n";
  s.resize(200 * 1024 - 14, '.');
  return s + "END-OF-200K\n\n\n";
}

RunReport HardenedReport() {
  RunReport r;
  r.tool_version = "0.1.0";
  r.run_id = "r-20261120-0001";
  r.started_at = ParseRfc3339("2026-11-20T10:00:00Z");
  r.finished_at = ParseRfc3339("2026-11-20T10:00:42Z");
  r.duration_seconds = 42.5;
  r.host = {{"hostname", "ci-runner-7"}, {"kernel", "6.1.0-18-amd64"},
            {"backends", {{"docker", "24.0.7"}}}};
  r.profile_name = "docker-hardened";
  r.profile_path = "sandboxes/docker-hardened.json";
  r.profile = {{"name", "docker-hardened"}, {"lifecycle", "oneshot"},
               {"run", {"docker", "run", "--rm", "{probe}", "{probe_args...}"}}};
  r.policy_name = "tier-low";
  r.policy_path = "policies/tier-low.json";
  r.policy = {{"name", "tier-low"}, {"limits", {{"pids", 50}}}};
  r.suite_name = "default";

  Verdict pass = MakeVerdict("fs.read.allowed:/workspace/a", "fs.read", Severity::kLow,
                             Outcome::kPass, Direction::kNone, "read ok", "read ok: 12 bytes");
  pass.check.expect = Expectation::kAllowed;
  pass.check.target = "{workspace}/a";
  pass.check.resolved_target = "/workspace/a";
  pass.evidence = {"L1", {0}, {}};
  pass.evidence.tier = EvidenceTier::kReported;

  Verdict leak = MakeVerdict("fs.read.denied:host-canary", "fs.read", Severity::kCritical,
                             Outcome::kFail, Direction::kTooPermissive, "read denied",
                             "read ok: 33 bytes, sha256 = canary token; stdout: " + HostileBytes());
  leak.check.target = "{host_canary}";
  leak.check.resolved_target = "/host/sp-canary-1f2e";
  leak.check.reference = {.file = "tier-low.json", .pointer = "/filesystem/unreadable/2"};
  leak.remediation = "mount the host canary directory out of the sandbox";
  leak.evidence = {"L1", {1, 2}, {"canary sha256 matched"}};
  leak.evidence.tier = EvidenceTier::kWitnessed;

  Verdict blocked = MakeVerdict("fs.write.allowed:/tmp", "fs.write", Severity::kMedium,
                                Outcome::kFail, Direction::kTooRestrictive, "write ok",
                                "write denied: EROFS");
  blocked.check.expect = Expectation::kAllowed;
  blocked.check.target = "/tmp";
  blocked.check.resolved_target = "/tmp";
  blocked.check.variant = "create";
  blocked.remediation = "add --tmpfs /tmp to the profile";
  blocked.evidence = {"L1", {3}, {}};
  blocked.evidence.tier = EvidenceTier::kReported;

  Verdict error = MakeVerdict("env.secret.hidden", "env.secret", Severity::kHigh, Outcome::kError,
                              Direction::kNone, "secret hidden", "launch failed: exit 125");
  error.remediation = "check that the image exists: docker image ls";
  error.evidence = {"L2", {}, {}};
  error.evidence.tier = EvidenceTier::kNone;

  Verdict unsure = MakeVerdict("net.egress.denied:tcp", "net.egress", Severity::kHigh,
                               Outcome::kInconclusive, Direction::kNone, "connect denied",
                               "no frame for the connect attempt");
  unsure.remediation = "rerun with --verbose; the probe died before reporting";
  unsure.evidence = {"L1", {}, {"listener saw no nonce"}};
  unsure.evidence.tier = EvidenceTier::kWitnessed;

  Verdict unsure_dns = MakeVerdict("net.egress.denied:dns", "net.egress", Severity::kHigh,
                                   Outcome::kInconclusive, Direction::kNone, "lookup denied",
                                   "no frame for the lookup");
  unsure_dns.evidence = {"L1", {}, {}};
  unsure_dns.evidence.tier = EvidenceTier::kReported;

  Verdict skip = MakeVerdict("net.egress.denied:udp", "net.egress", Severity::kMedium,
                             Outcome::kSkip, Direction::kNone, "send denied",
                             "not applicable: udp listener disabled");
  skip.duration_seconds = 0;

  r.verdicts = {pass, leak, blocked, error, unsure, unsure_dns, skip};

  LaunchRecord l1;
  l1.id = "L1";
  l1.instance = "sp-r-20261120-0001-1";
  l1.purpose = "probe";
  l1.argv = {"docker", "run", "--rm", "sandprobe/agent:latest", "/opt/sandprobe/sandprobe-probe",
             "fs", "--nonce", "n-1"};
  l1.exit_code = 0;
  l1.wall_ms = 812;
  l1.stdout_tail = "@@sandprobe n-1 {...}\n" + HostileBytes();
  l1.stderr_tail = "warning: " + HostileBytes();
  l1.frames.facts = {
      {{"op", "read"}, {"path", "/workspace/a"}, {"ok", true}, {"bytes", 12}},
      {{"op", "read"}, {"path", "/host/sp-canary-1f2e"}, {"ok", true}, {"bytes", 33}},
      {{"op", "sha256"}, {"path", "/host/sp-canary-1f2e"}, {"value", "9f86d081"}},
      {{"op", "write"}, {"path", "/tmp"}, {"ok", false}, {"errno", "EROFS"}},
      {{"op", "readdir"}, {"path", "/bad\xff\xfe-name"}, {"ok", true}},
  };
  l1.frames.done = false;
  l1.frames.protocol_errors = {"line 9: frame JSON: unexpected end of input"};
  l1.frames.noise_lines = 2;

  LaunchRecord l2;
  l2.id = "L2";
  l2.instance = "sp-r-20261120-0001-2";
  l2.purpose = "probe";
  l2.argv = {"docker", "run", "--rm", "sandprobe/agent:latest", "env"};
  l2.exit_code = 125;
  l2.wall_ms = 95;
  l2.stderr_tail = "Unable to find image 'sandprobe/agent:latest' locally\n";
  l2.error = "docker run (instance sp-r-20261120-0001-2): exit 125";

  LaunchRecord cleanup;
  cleanup.id = "L3";
  cleanup.instance = "sp-r-20261120-0001-1";
  cleanup.purpose = "cleanup";
  cleanup.argv = {"docker", "rm", "-f", "sp-r-20261120-0001-1"};
  cleanup.signal = 9;
  cleanup.timed_out = true;
  cleanup.wall_ms = 10000;

  r.launches = {l1, l2, cleanup};
  r.witnesses = {{"canary_file", {{"path", "/host/sp-canary-1f2e"}, {"read_back", true}}},
                 {"listener", {{"connections", nlohmann::json::array()}}}};
  return r;
}

RunReport BwrapReport() {
  RunReport r;
  r.tool_version = "0.1.0";
  r.run_id = "r-20261120-0001";
  r.started_at = ParseRfc3339("2026-11-20T12:00:01.250+02:00");
  r.finished_at = ParseRfc3339("2026-11-20T12:00:09.750+02:00");
  r.duration_seconds = 8.5;
  r.host = {{"kernel", "6.1.0-18-amd64"}};
  r.profile_name = "bwrap-basic";
  r.profile_path = "sandboxes/bwrap-basic.json";
  r.profile = {{"name", "bwrap-basic"}, {"lifecycle", "oneshot"}};
  r.policy_name = "tier-medium";
  r.policy_path = "policies/tier-medium.json";
  r.policy = {{"name", "tier-medium"}};
  r.suite_name = "quick";
  r.interrupted = true;

  Verdict big = MakeVerdict("pids.limit", "pids", Severity::kHigh, Outcome::kFail,
                            Direction::kTooPermissive, "at most 50 processes", Big200K());
  big.remediation = "pass --pids-limit 50 (or a pids cgroup) to the sandbox";
  big.evidence = {"L1", {0, 1, 2}, {}};
  big.evidence.tier = EvidenceTier::kMeasured;
  Verdict dup = MakeVerdict("pids.limit", "pids", Severity::kHigh, Outcome::kPass,
                            Direction::kNone, "at most 50 processes", "stopped at 50");
  dup.evidence.tier = EvidenceTier::kMeasured;
  Verdict interrupted = MakeVerdict("memory.limit", "memory", Severity::kMedium, Outcome::kError,
                                    Direction::kNone, "oom at 512 MiB", "interrupted");
  interrupted.evidence = {"L1", {}, {}};
  Verdict skip = MakeVerdict("userns.denied", "privileges", Severity::kHigh, Outcome::kSkip,
                             Direction::kNone, "unshare(CLONE_NEWUSER) denied",
                             "bwrap --version: not found");
  r.verdicts = {big, dup, interrupted, skip};

  LaunchRecord l1;
  l1.id = "L1";
  l1.instance = "sp-r-20261120-0001-9";
  l1.purpose = "probe";
  l1.argv = {"bwrap", "--ro-bind", "/opt/sandprobe", "/opt/sandprobe", "--", "pids"};
  l1.exit_code = 0;
  l1.wall_ms = 7000;
  l1.stdout_tail = Big200K();
  l1.frames.facts = {{{"op", "fork"}, {"count", 50}, {"ok", true}},
                     {{"op", "fork"}, {"count", 51}, {"ok", true}},
                     {{"op", "fork"}, {"count", 256}, {"ok", true}, {"stopped", "ceiling"}}};
  l1.frames.done = true;
  r.launches = {l1};
  return r;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("open(" + path + ") for reading failed");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string CompareWithGolden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(SANDPROBE_SOURCE_DIR) + "/reports/testdata/" + name;
  const char* update = std::getenv("UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << actual;
    return out ? "" : "write(" + path + ") failed";
  }
  std::ifstream probe(path, std::ios::binary);
  if (!probe) return path + " missing: run the test with UPDATE_GOLDEN=1 to create it";
  const std::string expected = ReadFile(path);
  if (expected == actual) return "";
  const auto diff = std::mismatch(expected.begin(), expected.end(), actual.begin(), actual.end());
  const std::size_t at = static_cast<std::size_t>(diff.first - expected.begin());
  return path + " differs at byte " + std::to_string(at) + " (expected " +
         std::to_string(expected.size()) + " bytes, got " + std::to_string(actual.size()) +
         "): expected \"" + expected.substr(at, 60) + "\" got \"" + actual.substr(at, 60) +
         "\"; if the change is intended, rerun with UPDATE_GOLDEN=1";
}

std::string MakeTempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                      "/sp-reports-test.XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return templ;
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace sandprobe::report_fixture
