#include "load/profile.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sandprobe {
namespace {

const std::string kDir = SANDPROBE_SOURCE_DIR "/load/testdata/load/";

using Argvs = std::vector<std::vector<std::string>>;
using Strings = std::vector<std::string>;

TEST(ProfileTest, LoadsOneShotProfileWithAllFields) {
  StatusOr<Profile> p = LoadProfile(kDir + "profile_oneshot.json");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->name, "docker-hardened");
  EXPECT_EQ(p->description, "One-shot docker run: no network, 512 MiB, read-only root.");
  EXPECT_EQ(p->backend, Backend::kDocker);
  EXPECT_EQ(p->source_path, kDir + "profile_oneshot.json");
  EXPECT_EQ(p->policy_path, kDir + "policy_full.json");
  EXPECT_EQ(p->requirements, (Argvs{{"docker", "info"}}));
  EXPECT_EQ(p->requires_hint, "apt-get install docker.io");
  EXPECT_EQ(p->preflight, PreflightWhen::kOnFailure);
  EXPECT_EQ(p->lifecycle, Lifecycle::kOneShot);
  EXPECT_EQ(p->probe_path, "/opt/sandprobe/sandprobe-probe");
  EXPECT_EQ(p->workspace_path, "/workspace");
  EXPECT_EQ(p->injection, "ro-bind");
  ASSERT_EQ(p->run.size(), 15u);
  EXPECT_EQ(p->run[5], "{instance}");
  EXPECT_EQ(p->run.back(), "{probe_args...}");
  EXPECT_TRUE(p->start.empty() && p->exec.empty() && p->stop.empty());
  EXPECT_EQ(p->cleanup, (Argvs{{"docker", "rm", "-f", "{instance}"}}));
  ASSERT_EQ(p->sweeps.size(), 1u);
  EXPECT_EQ(p->sweeps.at(0).list.back(), "label=sandprobe.run={run_id}");
  EXPECT_EQ(p->sweeps.at(0).remove, (Strings{"docker", "rm", "-f", "{id}"}));
  EXPECT_EQ(p->vars, (std::map<std::string, std::string>{{"image", "sandprobe/agent:latest"}}));
  EXPECT_EQ(p->timeout_seconds, 120);
  EXPECT_EQ(p->raw["name"], "docker-hardened");
}

TEST(ProfileTest, LoadsSessionProfileWithDefaults) {
  StatusOr<Profile> p = LoadProfile(kDir + "profile_session.json");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->lifecycle, Lifecycle::kSession);
  EXPECT_EQ(LifecycleName(p->lifecycle), "session");
  EXPECT_EQ(p->workspace_path, "/home/agent/work");
  EXPECT_EQ(p->injection, "image");
  EXPECT_EQ(p->start.front(), "docker");
  EXPECT_EQ(p->exec, (Strings{"docker", "exec", "-i", "{instance}", "{probe}", "{probe_args...}"}));
  EXPECT_EQ(p->stop, (Strings{"docker", "rm", "-f", "{instance}"}));
  EXPECT_TRUE(p->run.empty());
  EXPECT_TRUE(p->policy_path.empty());
  EXPECT_TRUE(p->requirements.empty());
  EXPECT_EQ(p->preflight, PreflightWhen::kBefore);
  EXPECT_TRUE(p->sweeps.empty());
  EXPECT_TRUE(p->teardown.empty());
  EXPECT_EQ(p->timeout_seconds, 60);
}

// A valid one-shot profile with `extra` spliced in as its last members (on line 3).
std::string ProfileError(const std::string& extra, const std::string& run =
                                                       R"(["{probe}", "{probe_args...}"])") {
  std::string text = R"({"name": "p", "description": "d", "backend": "host", "injection": "image",
"lifecycle": "oneshot", "probe_path": "{probe_dir}/probe", "run": )" + run + "\n" + extra + "}";
  StatusOr<JsonDocument> doc = JsonDocument::Parse(text, "p.json");
  if (!doc.ok()) return "parse: " + doc.status().message();
  StatusOr<Profile> p = ParseProfile(*doc);
  return p.ok() ? "ok" : p.status().message();
}

// inspect.settle: names of this inspect's readings with scalar values, bounded waiting.
TEST(ProfileTest, InspectSettleNamesReadingsAndIsBounded) {
  const std::string inspect = R"(, "inspect": {"argv": ["i"], "readings": {"oom_killed": "/0/O", "exit_code": "/0/E"},
"settle": )";
  EXPECT_EQ(ProfileError(inspect + R"({"while": {"exit_code": 137, "oom_killed": false}, "tries": 20, "every_ms": 100}})"),
            "ok");
  EXPECT_EQ(ProfileError(inspect + R"({"while": {"exit": 137}, "tries": 20, "every_ms": 100}})"),
            "p.json:4:22: /inspect/settle/while/exit: is not one of this inspect's readings");
  EXPECT_EQ(ProfileError(inspect + R"({"while": {"exit_code": [137]}, "tries": 20, "every_ms": 100}})"),
            "p.json:4:22: /inspect/settle/while/exit_code: must be a string, number or boolean");
  EXPECT_EQ(ProfileError(inspect + R"({"while": {}, "tries": 20, "every_ms": 100}})"),
            "p.json:4:21: /inspect/settle/while: must be a non-empty object: reading name -> the value that "
            "means \"not settled yet\"");
  EXPECT_EQ(ProfileError(inspect + R"({"while": {"exit_code": 137}, "tries": 50, "every_ms": 1000}})"),
            "p.json:4:41: /inspect/settle/tries: tries × every_ms must be at most 5000 (ms of waiting)");
  EXPECT_NE(ProfileError(inspect + R"({"while": {"exit_code": 137}, "tries": 20}})"), "ok");
  StatusOr<JsonDocument> doc = JsonDocument::Parse(
      R"({"name": "p", "description": "d", "backend": "host", "injection": "image", "lifecycle": "oneshot",
"probe_path": "{probe_dir}/probe", "run": ["{probe}", "{probe_args...}"],
"inspect": {"argv": ["i"], "readings": {"oom_killed": "/0/O", "exit_code": "/0/E"},
"settle": {"while": {"exit_code": 137, "oom_killed": false}, "tries": 20, "every_ms": 100}}})",
      "p.json");
  ASSERT_TRUE(doc.ok());
  StatusOr<Profile> p = ParseProfile(*doc);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_TRUE(p->inspect && p->inspect->settle);
  EXPECT_EQ(p->inspect->settle->while_readings,
            (std::map<std::string, nlohmann::json>{{"exit_code", 137}, {"oom_killed", false}}));
  EXPECT_EQ(p->inspect->settle->tries, 20);
  EXPECT_EQ(p->inspect->settle->every_ms, 100);
}

TEST(ProfileTest, SweepMayBeAListAndTeardownIsChecked) {
  EXPECT_EQ(ProfileError(R"(, "sweep": [{"list": ["ls"], "remove": ["rm", "{id}"]},
                         {"list": ["vls"], "remove": ["vrm", "{id}"]}],
"teardown": [["vrm", "vol-{run_id}"]])"),
            "ok");
  EXPECT_EQ(ProfileError(R"(, "sweep": [{"list": ["ls"], "remove": ["rm", "{id}"]}, {"list": ["ls"], "remove": ["rm"]}])"),
            "p.json:3:84: /sweep/1/remove: must contain {id}");
  EXPECT_EQ(ProfileError(R"(, "sweep": [])"), "p.json:3:12: /sweep: must not be empty");
  EXPECT_EQ(ProfileError(R"(, "teardown": [["rm", "{id}"]])"),
            "p.json:3:23: /teardown/0/1: {id} is only allowed in sweep.remove");
}

TEST(ProfileTest, MinimalProfileIsValid) { EXPECT_EQ(ProfileError(""), "ok"); }

TEST(ProfileTest, WorkspaceOwnerIsAUidAndAGid) {
  EXPECT_EQ(ProfileError(R"(, "workspace_owner": {"uid": 1000, "gid": 1000})"), "ok");
  EXPECT_EQ(ProfileError(R"(, "workspace_owner": {"uid": 1000})"), "p.json:3:22: /workspace_owner/gid: missing required field");
  EXPECT_EQ(ProfileError(R"(, "workspace_owner": {"uid": -1, "gid": 0})"),
            "p.json:3:30: /workspace_owner/uid: must be between 0 and 4294967294, got -1");
  EXPECT_EQ(ProfileError(R"(, "workspace_owner": {"uid": 1, "gid": 1, "user": "x"})"),
            "p.json:3:43: /workspace_owner/user: unknown key (known: uid, gid)");
}

TEST(ProfileTest, EnvironmentIsInheritOrEmpty) {
  EXPECT_EQ(ProfileError(R"(, "environment": "empty")"), "ok");
  EXPECT_EQ(ProfileError(R"(, "environment": "inherit")"), "ok");
  EXPECT_EQ(ProfileError(R"(, "environment": "clear")"),
            R"(p.json:3:18: /environment: expected one of "inherit", "empty", got "clear")");
  StatusOr<JsonDocument> doc = JsonDocument::Parse(
      R"({"name": "p", "description": "d", "backend": "bwrap", "injection": "image", "lifecycle": "oneshot",
"probe_path": "/p", "run": ["{probe}", "{probe_args...}"], "environment": "empty"})", "p.json");
  ASSERT_TRUE(doc.ok());
  StatusOr<Profile> empty = ParseProfile(*doc);
  ASSERT_TRUE(empty.ok()) << empty.status().message();
  EXPECT_EQ(empty->environment, ProbeEnvironment::kEmpty);
  doc = JsonDocument::Parse(R"({"name": "p", "description": "d", "backend": "bwrap", "injection": "image",
"lifecycle": "oneshot", "probe_path": "/p", "run": ["{probe}", "{probe_args...}"]})", "p.json");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(ParseProfile(*doc)->environment, ProbeEnvironment::kInherit);
}

TEST(ProfileTest, LabJoinIsForProcessSandboxesOnly) {
  auto parse = [](const std::string& backend, const std::string& lab) {
    return JsonDocument::Parse(R"({"name": "p", "description": "d", "backend": ")" + backend +
                                   R"(", "injection": "image", "lifecycle": "oneshot",
"probe_path": "/p", "run": ["{probe}", "{probe_args...}"])" + lab + "}",
                               "p.json");
  };
  StatusOr<JsonDocument> doc = parse("bwrap", R"(, "lab": "join")");
  ASSERT_TRUE(doc.ok());
  StatusOr<Profile> joined = ParseProfile(*doc);
  ASSERT_TRUE(joined.ok()) << joined.status().message();
  EXPECT_EQ(joined->lab, LabMode::kJoin);
  doc = parse("bwrap", "");
  EXPECT_EQ(ParseProfile(*doc)->lab, LabMode::kNone);
  doc = parse("docker", R"(, "lab": "join")");
  StatusOr<Profile> docker = ParseProfile(*doc);
  ASSERT_FALSE(docker.ok());
  EXPECT_THAT(docker.status().message(), ::testing::HasSubstr("p.json:2:67: /lab: \"join\" is for process sandboxes"));
  EXPECT_THAT(docker.status().message(), ::testing::HasSubstr("says \"docker-gateway\""));
  doc = parse("bwrap", R"(, "lab": "share")");
  EXPECT_THAT(ParseProfile(*doc).status().message(),
              ::testing::HasSubstr(R"(/lab: expected one of "join", "docker-gateway", got "share")"));
}

TEST(ProfileTest, LabDockerGatewayIsForDockerAndGvisorAndOwnsTheLabPlaceholders) {
  auto parse = [](const std::string& backend, const std::string& lab) {
    return JsonDocument::Parse(R"({"name": "p", "description": "d", "backend": ")" + backend +
                                   R"(", "injection": "image", "lifecycle": "oneshot",
"probe_path": "/p", "run": ["docker", "run", "--network", "{lab_network}", "--dns", "{lab_dns}", "i", "{probe}", "{probe_args...}"])" +
                                   lab + "}",
                               "p.json");
  };
  for (const char* backend : {"docker", "gvisor", "podman"}) {
    StatusOr<JsonDocument> doc = parse(backend, R"(, "lab": "docker-gateway")");
    ASSERT_TRUE(doc.ok());
    StatusOr<Profile> profile = ParseProfile(*doc);
    ASSERT_TRUE(profile.ok()) << backend << ": " << profile.status().message();
    EXPECT_EQ(profile->lab, LabMode::kDockerGateway);
  }
  for (const char* backend : {"bwrap", "host"}) {
    StatusOr<JsonDocument> doc = parse(backend, R"(, "lab": "docker-gateway")");
    EXPECT_THAT(ParseProfile(*doc).status().message(),
                ::testing::HasSubstr("/lab: \"docker-gateway\" is for docker, podman and gvisor (through docker) profiles"))
        << backend;
  }
  {  // podman's gateway makes no internal network: refused where the profile asks for one
    StatusOr<JsonDocument> doc =
        parse("podman", R"(, "lab": "docker-gateway", "lab_gateway": {"internal_network": true})");
    EXPECT_THAT(ParseProfile(*doc).status().message(),
                ::testing::HasSubstr("/lab_gateway/internal_network: is for docker and gvisor profiles"));
  }
  // Without the gateway the placeholders have no value: refused where they are used.
  StatusOr<JsonDocument> doc = parse("docker", "");
  EXPECT_THAT(ParseProfile(*doc).status().message(),
              ::testing::HasSubstr("/run: {lab_network} has a value only with \"lab\": \"docker-gateway\""));
  // lab_gateway: an internal network and services, only with the gateway; the internal
  // network's placeholders only with it.
  doc = parse("docker", R"(, "lab": "docker-gateway", "lab_gateway": {"internal_network": true,
"services": [["docker", "run", "-d", "--network", "{lab_network}", "--label", "sandprobe.run={run_id}", "proxy"]]})");
  StatusOr<Profile> proxied = ParseProfile(*doc);
  ASSERT_TRUE(proxied.ok()) << proxied.status().message();
  EXPECT_TRUE(proxied->lab_gateway.internal_network);
  ASSERT_EQ(proxied->lab_gateway.services.size(), 1u);
  EXPECT_EQ(proxied->lab_gateway.services[0].back(), "proxy");
  doc = parse("docker", R"(, "lab_gateway": {"internal_network": true})");
  EXPECT_THAT(ParseProfile(*doc).status().message(), ::testing::HasSubstr("/lab_gateway: needs \"lab\": \"docker-gateway\""));
  doc = parse("docker", R"(, "lab": "docker-gateway", "lab_gateway": {"services": [["x", "{lab_gateway_ip}"]]})");
  EXPECT_THAT(ParseProfile(*doc).status().message(),
              ::testing::HasSubstr("/lab_gateway: {lab_gateway_ip} has a value only with \"lab_gateway\": {\"internal_network\": true}"));
  doc = parse("docker", R"(, "lab": "docker-gateway", "lab_gateway": {"internal": true})");
  EXPECT_FALSE(ParseProfile(*doc).ok());
}

TEST(ProfileTest, ProbeExitIsProcessOrExitLine) {
  EXPECT_EQ(ProfileError(R"(, "probe_exit": "exit_line")"), "ok");
  EXPECT_EQ(ProfileError(R"(, "probe_exit": "process")"), "ok");
  EXPECT_EQ(ProfileError(R"(, "probe_exit": "line")"),
            R"(p.json:3:17: /probe_exit: expected one of "process", "exit_line", got "line")");
  const char* kBase = R"({"name": "p", "description": "d", "backend": "other", "injection": "image",
"lifecycle": "oneshot", "probe_path": "/p", "run": ["{probe}", "{probe_args...}"])";
  StatusOr<JsonDocument> doc = JsonDocument::Parse(std::string(kBase) + R"(, "probe_exit": "exit_line"})", "p.json");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(ParseProfile(*doc)->probe_exit, ProbeExit::kExitLine);
  doc = JsonDocument::Parse(std::string(kBase) + "}", "p.json");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(ParseProfile(*doc)->probe_exit, ProbeExit::kProcess);
}

TEST(ProfileTest, UnknownPlaceholderIsReportedAtTheElement) {
  EXPECT_EQ(ProfileError("", R"(["x", "--name={instanse}", "{probe}", "{probe_args...}"])"),
            "p.json:2:73: /run/1: unknown placeholder {instanse}");
  EXPECT_EQ(ProfileError(R"(, "cleanup": [["rm", "{nope}"]])"),
            "p.json:3:22: /cleanup/0/1: unknown placeholder {nope}");
}

TEST(ProfileTest, VarsBecomePlaceholdersAndUnclosedBracesAreLiteral) {
  EXPECT_EQ(ProfileError(R"(, "vars": {"image": "busybox"}, "cleanup": [["x", "{image}", "a{b"]])"),
            "ok");
  // Read as ExpandString will: `{}` is an (unknown) placeholder, not literal text.
  EXPECT_EQ(ProfileError(R"(, "cleanup": [["find", "-exec", "{}"]])"),
            "p.json:3:33: /cleanup/0/2: unknown placeholder {}");
}

TEST(ProfileTest, RestrictedPlaceholders) {
  EXPECT_EQ(ProfileError(R"(, "cleanup": [["rm", "{id}"]])"),
            "p.json:3:22: /cleanup/0/1: {id} is only allowed in sweep.remove");
  EXPECT_EQ(ProfileError(R"(, "cleanup": [["rm", "{probe_args...}"]])"),
            "p.json:3:22: /cleanup/0/1: {probe_args...} is only allowed in run and exec");
  EXPECT_EQ(ProfileError("", R"(["{probe}", "--x={probe_args...}", "{probe_args...}"])"),
            "p.json:2:79: /run/1: {probe_args...} must be a whole argv element");
  EXPECT_EQ(ProfileError(R"(, "sweep": {"list": ["ls"], "remove": ["rm", "x"]})"),
            "p.json:3:39: /sweep/remove: must contain {id}");
}

TEST(ProfileTest, RunMustStartTheProbe) {
  EXPECT_EQ(ProfileError("", R"(["sh", "{probe_args...}"])"),
            "p.json:2:67: /run: must contain {probe} (the probe's path inside)");
  EXPECT_EQ(ProfileError("", R"(["{probe}", "x"])"),
            "p.json:2:67: /run: must contain the element {probe_args...} exactly once");
}

TEST(ProfileTest, ProbePathMayNotUseProbe) {
  StatusOr<JsonDocument> doc = JsonDocument::Parse(
      R"({"name": "p", "description": "d", "backend": "host", "injection": "image",
"lifecycle": "oneshot", "probe_path": "{probe}", "run": ["{probe}", "{probe_args...}"]})",
      "p.json");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(ParseProfile(*doc).status().message(),
            "p.json:2:39: /probe_path: {probe} is not allowed here");
}

TEST(ProfileTest, LifecycleShape) {
  EXPECT_EQ(ProfileError(R"(, "stop": ["x"])"),
            "p.json:3:3: /stop: not allowed with lifecycle \"oneshot\" (use run)");
  StatusOr<JsonDocument> doc = JsonDocument::Parse(
      R"({"name": "p", "description": "d", "backend": "host", "injection": "image",
"lifecycle": "session", "probe_path": "/p", "start": ["s"], "stop": ["t"]})",
      "s.json");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(ParseProfile(*doc).status().message(), "s.json:1:1: /exec: missing required field");
}

TEST(ProfileTest, FieldErrors) {
  EXPECT_EQ(ProfileError(R"(, "timeout_seconds": 0)"),
            "p.json:3:22: /timeout_seconds: must be between 1 and 3600, got 0");
  EXPECT_EQ(ProfileError(R"(, "timeout_seconds": "60")"),
            "p.json:3:22: /timeout_seconds: expected integer, got string");
  EXPECT_EQ(ProfileError(R"(, "lifecyle": "oneshot")"),
            "p.json:3:3: /lifecyle: unknown key (known: name, description, backend, policy, "
            "requires, preflight, install_hint, lifecycle, probe_path, workspace_path, workspace_owner, injection, "
            "run, start, "
            "exec, stop, cleanup, teardown, sweep, vars, timeout_seconds, inspect, envelope, version, "
            "canaries_in, environment, probe_exit, probe, lab, lab_gateway)");
  EXPECT_EQ(ProfileError(R"(, "vars": {"9lives": "/x"})"),
            "p.json:3:12: /vars/9lives: variable name must match [A-Za-z_][A-Za-z0-9_]*");
  EXPECT_EQ(ProfileError(R"(, "vars": {"_Image2": "x"})"), "ok");
  EXPECT_EQ(ProfileError(R"(, "vars": {"probe_dir": "/x"})"),
            "p.json:3:12: /vars/probe_dir: variable shadows a built-in placeholder");
  EXPECT_EQ(ProfileError(R"(, "requires": [[]])"), "p.json:3:16: /requires/0: argv must not be empty");
  EXPECT_EQ(ProfileError(R"(, "preflight": "lazy")"),
            "p.json:3:16: /preflight: expected one of \"before\", \"on_failure\", got \"lazy\"");
}

// `version`: an argv run as it is (docker's own "{{...}}" template is no placeholder).
TEST(ProfileTest, VersionIsALiteralOptionalArgv) {
  const std::string text = R"({"name": "p", "description": "d", "backend": "docker", "injection": "image",
"lifecycle": "oneshot", "probe_path": "/probe", "run": ["{probe}", "{probe_args...}"],
"version": ["docker", "version", "--format", "{{.Server.Version}}"]})";
  StatusOr<JsonDocument> doc = JsonDocument::Parse(text, "p.json");
  ASSERT_TRUE(doc.ok());
  StatusOr<Profile> p = ParseProfile(*doc);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->version, (Strings{"docker", "version", "--format", "{{.Server.Version}}"}));
  EXPECT_EQ(ProfileError(R"(, "version": [])"), "p.json:3:14: /version: argv must not be empty");
  EXPECT_EQ(ProfileError(R"(, "version": "docker version")"),
            "p.json:3:14: /version: expected argv (array of strings), got string");
}

TEST(ProfileTest, CanariesInTakesDirsOrHostInsidePairsWithProfileVarsOnly) {
  StatusOr<JsonDocument> doc = JsonDocument::Parse(
      R"({"name": "p", "description": "d", "backend": "host", "injection": "image",
"lifecycle": "oneshot", "probe_path": "/p", "run": ["{probe}", "{probe_args...}"],
"vars": {"home": "/root"},
"canaries_in": ["/srv/data", {"host": "{home}", "inside": "/host-root"}, {"host": "/opt"}]})",
      "c.json");
  ASSERT_TRUE(doc.ok());
  StatusOr<Profile> p = ParseProfile(*doc);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->canaries_in.size(), 3u);
  EXPECT_EQ(p->canaries_in[0].host, "/srv/data");
  EXPECT_EQ(p->canaries_in[0].inside, "/srv/data");
  EXPECT_EQ(p->canaries_in[1].host, "{home}");
  EXPECT_EQ(p->canaries_in[1].inside, "/host-root");
  EXPECT_EQ(p->canaries_in[1].where, "c.json:4:30 /canaries_in/1");
  EXPECT_EQ(p->canaries_in[2].inside, "/opt");

  EXPECT_EQ(ProfileError(R"(, "canaries_in": "/srv")"), "p.json:3:18: /canaries_in: expected array");
  EXPECT_EQ(ProfileError(R"(, "canaries_in": ["srv"])"),
            "p.json:3:19: /canaries_in/0: must be an absolute path");
  EXPECT_EQ(ProfileError(R"(, "canaries_in": [{"host": "/a", "inside": "b"}])"),
            "p.json:3:44: /canaries_in/0/inside: must be an absolute path");
  EXPECT_EQ(ProfileError(R"(, "canaries_in": [{"inside": "/b"}])"),
            "p.json:3:19: /canaries_in/0/host: missing required field");
  EXPECT_EQ(ProfileError(R"(, "canaries_in": [{"host": "/a", "mode": "x"}])"),
            "p.json:3:34: /canaries_in/0/mode: unknown key (known: host, inside)");
  EXPECT_EQ(ProfileError(R"(, "canaries_in": ["{workspace}/x"])"),
            "p.json:3:19: /canaries_in/0: unknown placeholder {workspace} (only profile vars may be used here)");
  EXPECT_EQ(ProfileError(R"(, "canaries_in": [3])"),
            "p.json:3:19: /canaries_in/0: expected a directory (string) or {\"host\", \"inside\"}");
}

TEST(ProfileTest, EnumsAndNames) {
  StatusOr<JsonDocument> doc = JsonDocument::Parse(
      R"({"name": "Bad Name", "description": "d"})", "n.json");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(ParseProfile(*doc).status().message(),
            "n.json:1:10: /name: must match [a-z0-9][a-z0-9._-]*");
  doc = JsonDocument::Parse(R"({"name": "n", "description": "d", "backend": "lxc"})", "n.json");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(ParseProfile(*doc).status().message(),
            "n.json:1:46: /backend: expected one of \"host\", \"bwrap\", \"docker\", \"podman\", "
            "\"firejail\", \"gvisor\", \"other\", got \"lxc\"");
}

TEST(ProfileTest, MissingFileNamesTheOpen) {
  EXPECT_EQ(LoadProfile(kDir + "nope.json").status().message(),
            "open(" + kDir + "nope.json): No such file or directory");
}

}  // namespace
}  // namespace sandprobe

namespace sandprobe {
namespace {

const std::string kNul =
    "contains a NUL character (\\u0000): it would cut the string short at run time";

// A NUL in an argv element, a var (a placeholder value), a path or a name validated and was
// then cut short by execve()/open(): refused at load, at the string.
TEST(ProfileInputsTest, NulIsRefusedInArgvsVarsPathsAndNames) {
  EXPECT_EQ(ProfileError("", R"(["{probe}", "{probe_args...}", "--x\u0000y"])"),
            "p.json:2:98: /run/2: " + kNul);
  EXPECT_EQ(ProfileError(R"(, "vars": {"image": "alpine\u0000:latest"})"),
            "p.json:3:21: /vars/image: " + kNul);
  EXPECT_EQ(ProfileError(R"(, "vars": {"im\u0000age": "alpine"})"),
            "p.json:3:12: /vars/im\\u0000age: key " + kNul);
  EXPECT_EQ(ProfileError(R"(, "workspace_path": "/work\u0000space")"),
            "p.json:3:21: /workspace_path: " + kNul);
  EXPECT_EQ(ProfileError(R"(, "cleanup": [["rm", "-rf", "/tmp/x\u0000"]])"),
            "p.json:3:29: /cleanup/0/2: " + kNul);
  EXPECT_EQ(ProfileError(R"(, "requires": [["docker\u0000", "info"]])"),
            "p.json:3:17: /requires/0/0: " + kNul);
  EXPECT_EQ(ProfileError(R"(, "policy": "p\u0000.json")"), "p.json:3:13: /policy: " + kNul);
  EXPECT_EQ(ProfileError(R"(, "canaries_in": ["/srv\u0000/data"])"),
            "p.json:3:19: /canaries_in/0: " + kNul);
  EXPECT_EQ(ProfileError(R"(, "canaries_in": [{"host": "/a", "inside": "/b\u0000"}])"),
            "p.json:3:44: /canaries_in/0/inside: " + kNul);
  EXPECT_EQ(ProfileError(R"(, "inspect": {"argv": ["i"], "readings": {"o\u0000": "/0"}})"),
            "p.json:3:43: /inspect/readings/o\\u0000: key " + kNul);
}

// Policy {workspace} paths resolve under workspace_path: a relative one pointed checks at
// paths relative to the probe's working directory.
TEST(ProfileInputsTest, WorkspacePathMustBeAbsolute) {
  EXPECT_EQ(ProfileError(R"(, "workspace_path": "workspace")"),
            "p.json:3:21: /workspace_path: must be absolute or start with {workspace}, got "
            "\"workspace\"");
  EXPECT_EQ(ProfileError(R"(, "workspace_path": "./ws")"),
            "p.json:3:21: /workspace_path: must be absolute or start with {workspace}, got "
            "\"./ws\"");
  EXPECT_EQ(ProfileError(R"(, "workspace_path": "{workspace}x")"),
            "p.json:3:21: /workspace_path: {workspace} must be followed by nothing or \"/\"");
  // The run expands only {workspace} in workspace_path: another placeholder would fail the run.
  EXPECT_EQ(ProfileError(R"(, "workspace_path": "{probe_dir}/ws")"),
            "p.json:3:21: /workspace_path: must be absolute or start with {workspace}, got "
            "\"{probe_dir}/ws\"");
  EXPECT_EQ(ProfileError(R"(, "workspace_path": "/w/{run_id}")"),
            "p.json:3:21: /workspace_path: only {workspace} is allowed, at the start");
  EXPECT_EQ(ProfileError(R"(, "workspace_path": "/workspace")"), "ok");
  EXPECT_EQ(ProfileError(R"(, "workspace_path": "{workspace}")"), "ok");
  EXPECT_EQ(ProfileError(R"(, "workspace_path": "{workspace}/sub")"), "ok");
}

// A relative probe path resolves against whatever directory the sandbox starts in, and one
// with an invisible character names another file that looks the same: both are refused.
TEST(ProfileInputsTest, ProbePathIsAbsoluteAndVisible) {
  auto with_probe_path = [](const std::string& probe_path) {
    std::string text = R"({"name": "p", "description": "d", "backend": "host", "injection": "copy",
"lifecycle": "oneshot", "run": ["env", "P={probe_dir}", "{probe}", "{probe_args...}"], "probe_path": )" + probe_path + "}";
    StatusOr<JsonDocument> doc = JsonDocument::Parse(text, "p.json");
    if (!doc.ok()) return "parse: " + doc.status().message();
    StatusOr<Profile> p = ParseProfile(*doc);
    return p.ok() ? std::string("ok") : p.status().message();
  };
  EXPECT_EQ(with_probe_path(R"("opt/sandprobe/sandprobe-probe")"),
            "p.json:2:102: /probe_path: must be absolute or start with {probe_dir}/, got \"opt/sandprobe/sandprobe-probe\"");
  EXPECT_EQ(with_probe_path(R"("/opt/sandprobe/sandprobe\u200b-probe")"),
            "p.json:2:102: /probe_path: contains U+200B (an invisible format character) at character 25: it looks "
            "like another path");
  EXPECT_EQ(with_probe_path(R"("/opt/sandprobe/sandprobe-probe")"), "ok");
  EXPECT_EQ(with_probe_path(R"("{probe_dir}/sandprobe-probe")"), "ok");
  EXPECT_EQ(ProfileError(R"(, "workspace_path": "/work\u2060space")"),
            "p.json:3:21: /workspace_path: contains U+2060 (an invisible format character) at character 6: it looks "
            "like another path");
}

TEST(ProfileInputsTest, EnvelopeNumbersAreBounded) {
  EXPECT_EQ(ProfileError(R"(, "envelope": {"pids": 4194305})"),
            "p.json:3:24: /envelope/pids: must be between 1 and 4194304, got 4194305");
  EXPECT_EQ(ProfileError(R"(, "envelope": {"open_files": 2147483585})"),
            "p.json:3:30: /envelope/open_files: must be between 16 and 2147483584, got "
            "2147483585");
  EXPECT_EQ(ProfileError(R"(, "envelope": {"cpu_seconds": 31536001})"),
            "p.json:3:31: /envelope/cpu_seconds: must be between 1 and 31536000, got 31536001");
  EXPECT_EQ(ProfileError(R"(, "envelope": {"address_space_mib": 1099511627777})"),
            "p.json:3:37: /envelope/address_space_mib: must be between 1 and 1099511627776, got "
            "1099511627777");
  EXPECT_EQ(ProfileError(R"(, "envelope": {"file_size_mib": 1e3})"),
            "p.json:3:33: /envelope/file_size_mib: expected integer, got number");
  EXPECT_EQ(ProfileError(R"(, "envelope": {"pids": 4194304, "open_files": 2147483584,
"cpu_seconds": 31536000, "address_space_mib": 1099511627776, "file_size_mib": 1099511627776})"),
            "ok");
  EXPECT_EQ(ProfileError(R"(, "timeout_seconds": 3601)"),
            "p.json:3:22: /timeout_seconds: must be between 1 and 3600, got 3601");
  EXPECT_EQ(ProfileError(R"(, "timeout_seconds": 1e400)"),
            "parse: p.json:3:22: invalid JSON: [json.exception.out_of_range.406] number "
            "overflow parsing '1e400'");
}

TEST(ProfileInputsTest, FifoProfileIsRefused) {
  std::string path = testing::TempDir() + "/sandprobe_profile_fifo_" + std::to_string(::getpid());
  ::unlink(path.c_str());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  StatusOr<Profile> p = LoadProfile(path);
  ::unlink(path.c_str());
  EXPECT_EQ(p.status().message(), path + ": is a FIFO, not a regular file");
}

}  // namespace
}  // namespace sandprobe

namespace sandprobe {
namespace {

// A profile of one injection kind, probe_path and run as given.
std::string InjectionError(const std::string& injection, const std::string& probe_path,
                           const std::string& run, const std::string& extra = "") {
  std::string text = R"({"name": "p", "description": "d", "backend": "other", "injection": ")" + injection +
                     R"(",
"lifecycle": "oneshot", "probe_path": ")" + probe_path + R"(", "run": )" + run + extra + "}";
  StatusOr<JsonDocument> doc = JsonDocument::Parse(text, "p.json");
  if (!doc.ok()) return "parse: " + doc.status().message();
  StatusOr<Profile> p = ParseProfile(*doc);
  return p.ok() ? "ok" : p.status().message();
}

// issue 25: an ro-bind profile that never mounts {probe_dir} runs the image's own file at the
// probe path, and that file's passes would be a sandbox's word, not the probe's.
TEST(ProfileInjection, EveryKindButImageMustTakeTheProbeFromProbeDir) {
  EXPECT_EQ(InjectionError("ro-bind", "/opt/sandprobe/sandprobe-probe",
                           R"(["docker", "run", "img", "{probe}", "{probe_args...}"])"),
            "p.json:1:68: /injection: \"ro-bind\", but run never uses {probe_dir}: the sandbox would run "
            "whatever file is at probe_path instead of the probe this run injects; bind or copy {probe_dir} "
            "there, or say \"image\" if the image carries the probe");
  EXPECT_EQ(InjectionError("ro-bind", "/opt/sandprobe/sandprobe-probe",
                           R"(["docker", "run", "-v", "{probe_dir}:/opt/sandprobe:ro", "img", "{probe}", "{probe_args...}"])"),
            "ok");
  EXPECT_EQ(InjectionError("copy", "/tmp/p", R"(["sh", "-c", "x", "{probe}", "{probe_args...}"])"),
            "p.json:1:68: /injection: \"copy\", but run never uses {probe_dir}: the sandbox would run "
            "whatever file is at probe_path instead of the probe this run injects; bind or copy {probe_dir} "
            "there, or say \"image\" if the image carries the probe");
  EXPECT_EQ(InjectionError("copy", "/tmp/p", R"(["sh", "-c", "cp $0/sandprobe-probe /tmp/p", "{probe_dir}", "{probe}", "{probe_args...}"])"),
            "ok");
  EXPECT_EQ(InjectionError("host-path", "/usr/local/bin/sandprobe-probe", R"(["{probe}", "{probe_args...}"])"),
            "p.json:1:68: /injection: \"host-path\", but probe_path never uses {probe_dir}: the sandbox would "
            "run whatever file is at probe_path instead of the probe this run injects; start probe_path with "
            "{probe_dir} there, or say \"image\" if the image carries the probe");
  EXPECT_EQ(InjectionError("host-path", "{probe_dir}/sandprobe-probe", R"(["{probe}", "{probe_args...}"])"), "ok");
  EXPECT_EQ(InjectionError("image", "/opt/sandprobe/sandprobe-probe", R"(["img-run", "{probe}", "{probe_args...}"])"),
            "ok");
}

TEST(ProfileInjection, ASessionMayBindInStart) {
  StatusOr<JsonDocument> doc = JsonDocument::Parse(
      R"({"name": "p", "description": "d", "backend": "docker", "injection": "ro-bind", "lifecycle": "session",
"probe_path": "/opt/p", "start": ["docker", "run", "-d", "-v", "{probe_dir}:/opt:ro", "img"],
"exec": ["docker", "exec", "{instance}", "{probe}", "{probe_args...}"], "stop": ["docker", "rm", "-f", "{instance}"]})",
      "p.json");
  ASSERT_TRUE(doc.ok());
  EXPECT_TRUE(ParseProfile(*doc).ok());
}

TEST(ProfileProbe, ARuntimeNameOrAFileRelativeToTheProfile) {
  auto load = [](const std::string& probe, const std::string& file = "dir/p.json") {
    return JsonDocument::Parse(R"({"name": "p", "description": "d", "backend": "other", "injection": "host-path",
"lifecycle": "oneshot", "probe_path": "{probe_dir}/x", "run": ["{probe}", "{probe_args...}"], "probe": )" + probe + "}",
                               file);
  };
  StatusOr<Profile> p = ParseProfile(*load(R"("js")"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->probe.runtime, ProbeRuntime::kJs);
  EXPECT_EQ(p->probe.file, "");
  p = ParseProfile(*load(R"("../probes/my-probe.py")"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->probe.file, "probes/my-probe.py");
  p = ParseProfile(*load(R"("/opt/probe")"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->probe.file, "/opt/probe");
  EXPECT_EQ(ParseProfile(*load(R"("deno")")).status().message(),
            "dir/p.json:2:104: /probe: unknown probe \"deno\": a runtime (native, wasi, js, python) or a probe "
            "file's path (with a '/')");
  StatusOr<JsonDocument> none = JsonDocument::Parse(
      R"({"name": "p", "description": "d", "backend": "other", "injection": "image", "lifecycle": "oneshot",
"probe_path": "/p", "run": ["{probe}", "{probe_args...}"]})", "p.json");
  EXPECT_EQ(ParseProfile(*none)->probe.runtime, ProbeRuntime::kNative) << "native by default";
}

// issue 27: V8 reserves its heap cage at start; an address-space limit aborts Deno and Node.
TEST(ProfileEnvelope, AddressSpaceIsNamedSoAndRefusedForTheJsProbe) {
  const std::string js = R"(, "probe": "js")";
  EXPECT_EQ(InjectionError("image", "/p", R"(["{probe}", "{probe_args...}"])",
                           R"(, "envelope": {"address_space_mib": 2048, "pids": 64})"),
            "ok");
  EXPECT_EQ(InjectionError("image", "/p", R"(["{probe}", "{probe_args...}"])",
                           R"(, "envelope": {"memory_mib": 2048})"),
            "p.json:2:97: /envelope/memory_mib: renamed address_space_mib: it sets RLIMIT_AS, the address "
            "space a process may map, not the memory it uses");
  EXPECT_THAT(InjectionError("image", "/p", R"(["{probe}", "{probe_args...}"])",
                             js + R"(, "envelope": {"address_space_mib": 2048})"),
              ::testing::HasSubstr("/envelope/address_space_mib: the js probe's runtime reserves a large address "
                                   "range at start"));
  EXPECT_EQ(InjectionError("image", "/p", R"(["{probe}", "{probe_args...}"])", js + R"(, "envelope": {"pids": 64})"),
            "ok");
}

}  // namespace
}  // namespace sandprobe
