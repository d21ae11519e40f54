#include "load/policy.h"

#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

const std::string kDir = SANDPROBE_SOURCE_DIR "/load/testdata/load/";

std::vector<std::string> Paths(const std::vector<PolicyPath>& paths) {
  std::vector<std::string> out;
  for (const PolicyPath& p : paths) out.push_back(p.path);
  return out;
}

TEST(PolicyTest, LoadsEveryField) {
  StatusOr<Policy> p = LoadPolicy(kDir + "policy_full.json");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->name, "tier-test");
  EXPECT_EQ(p->description, "Exercises every policy field.");
  EXPECT_EQ(p->source_path, kDir + "policy_full.json");
  using V = std::vector<std::string>;
  EXPECT_EQ(Paths(p->filesystem.readable), (V{"/workspace", "/tmp", "/usr/bin"}));
  EXPECT_EQ(Paths(p->filesystem.unreadable), (V{"/etc/shadow", "/root", "{host_canary}"}));
  EXPECT_EQ(Paths(p->filesystem.writable), (V{"{workspace}/out", "/tmp"}));
  EXPECT_EQ(Paths(p->filesystem.unwritable), (V{"/", "/etc", "/usr"}));
  EXPECT_EQ(p->filesystem.unreadable[2].ref.pointer, "/filesystem/unreadable/2");
  EXPECT_EQ(p->filesystem.unreadable[2].ref.Where(), kDir + "policy_full.json:7:44");
  // A promise made by any value of the file carries its line:col (SARIF needs no re-read).
  EXPECT_EQ(p->Ref("/filesystem/unreadable/2"), p->filesystem.unreadable[2].ref);
  EXPECT_EQ(p->Ref("/filesystem/unreadable/2").Text(),
            kDir + "policy_full.json:7:44 /filesystem/unreadable/2");
  EXPECT_EQ(NameOf(p->network.egress), "allow");
  ASSERT_EQ(p->network.allow.size(), 1u);
  EXPECT_EQ(p->network.allow[0].text, "127.0.0.1:8080");
  EXPECT_EQ(p->network.allow[0].kind, AllowKind::kAddress);
  EXPECT_EQ(p->network.allow[0].port, 8080);
  EXPECT_EQ(p->network.allow[0].ref.pointer, "/network/allow/0");
  EXPECT_EQ(NameOf(p->network.dns), "allow");
  EXPECT_EQ(NameOf(p->network.unix_sockets), "deny");
  EXPECT_EQ(p->limits.pids, 50);
  EXPECT_EQ(p->limits.memory_mib, 512);
  EXPECT_EQ(p->limits.cpus, 1.5);
  EXPECT_EQ(p->limits.wall_seconds, 60);
  EXPECT_EQ(p->limits.tmp_mib, 100);
  EXPECT_EQ(p->limits.open_files, 1024);
  EXPECT_EQ(Paths(p->persistence.survives), (V{"/workspace"}));
  EXPECT_EQ(Paths(p->persistence.ephemeral), (V{"/tmp", "/root"}));
  EXPECT_EQ(NameOf(p->persistence.background_processes), "survive");
  EXPECT_TRUE(p->privileges.root);
  EXPECT_EQ(p->privileges.capabilities, (V{"CAP_NET_BIND_SERVICE"}));
  EXPECT_FALSE(p->privileges.no_new_privs);
  EXPECT_EQ(NameOf(p->privileges.seccomp), "optional");
  EXPECT_EQ(NameOf(p->privileges.user_namespaces), "allow");
  EXPECT_EQ(NameOf(p->host.pid_namespace), "shared");
  EXPECT_EQ(NameOf(p->host.network_namespace), "shared");
  EXPECT_EQ(NameOf(p->host.env_secrets), "visible");
  EXPECT_EQ(NameOf(p->host.runtime_sockets), "visible");
  EXPECT_EQ(p->raw["limits"]["pids"], 50);
}

TEST(PolicyTest, AbsentSectionsKeepStrictDefaults) {
  StatusOr<JsonDocument> doc = JsonDocument::Parse(R"({"name": "n", "description": "d"})", "x");
  ASSERT_TRUE(doc.ok());
  StatusOr<Policy> p = ParsePolicy(*doc);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_TRUE(p->filesystem.readable.empty());
  EXPECT_EQ(NameOf(p->network.egress), "deny");
  EXPECT_EQ(NameOf(p->network.dns), "deny");
  EXPECT_FALSE(p->limits.pids.has_value());
  EXPECT_FALSE(p->limits.cpus.has_value());
  EXPECT_EQ(NameOf(p->persistence.background_processes), "die");
  EXPECT_FALSE(p->privileges.root);
  EXPECT_TRUE(p->privileges.no_new_privs);
  EXPECT_EQ(NameOf(p->privileges.seccomp), "required");
  EXPECT_EQ(NameOf(p->privileges.user_namespaces), "deny");
  EXPECT_EQ(NameOf(p->host.pid_namespace), "isolated");
  EXPECT_EQ(NameOf(p->host.runtime_sockets), "hidden");
}

TEST(PolicyTest, WrongTypeInAFileOnALaterLine) {
  EXPECT_EQ(LoadPolicy(kDir + "policy_bad_pids.json").status().message(),
            kDir + "policy_bad_pids.json:6:13: /limits/pids: expected integer, got string");
}

// {"name": "n", "description": "d", <extra>} where `extra` starts on line 2, column 1.
std::string PolicyError(const std::string& extra) {
  StatusOr<JsonDocument> doc =
      JsonDocument::Parse("{\"name\": \"n\", \"description\": \"d\",\n" + extra + "}", "p.json");
  if (!doc.ok()) return "parse: " + doc.status().message();
  StatusOr<Policy> p = ParsePolicy(*doc);
  return p.ok() ? "ok" : p.status().message();
}

TEST(PolicyTest, UnknownKeys) {
  EXPECT_EQ(PolicyError(R"("filesystem": {"readabel": []})"),
            "p.json:2:16: /filesystem/readabel: unknown key (known: readable, unreadable, "
            "writable, unwritable)");
  EXPECT_EQ(PolicyError(R"("network": {}, "limit": {})"),
            "p.json:2:16: /limit: unknown key (known: name, description, filesystem, network, "
            "limits, persistence, privileges, host)");
}

TEST(PolicyTest, MissingRequiredField) {
  StatusOr<JsonDocument> doc = JsonDocument::Parse("{\n  \"description\": \"d\"}", "p.json");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(ParsePolicy(*doc).status().message(), "p.json:1:1: /name: missing required field");
}

TEST(PolicyTest, EnumValuesAreChecked) {
  EXPECT_EQ(PolicyError(R"("network": {"egress": "block"})"),
            "p.json:2:23: /network/egress: expected one of \"deny\", \"allow\", got \"block\"");
  EXPECT_EQ(PolicyError(R"("host": {"pid_namespace": "private"})"),
            "p.json:2:27: /host/pid_namespace: expected one of \"isolated\", \"shared\", got "
            "\"private\"");
  EXPECT_EQ(PolicyError(R"("privileges": {"seccomp": "yes"})"),
            "p.json:2:27: /privileges/seccomp: expected one of \"required\", \"optional\", got "
            "\"yes\"");
}

TEST(PolicyTest, NetworkAllowEntriesAreTypedAndCheckedWhereWritten) {
  EXPECT_EQ(PolicyError(R"("network": {"allow": ["pkg.lab.test", "127.1"]})"),
            "p.json:2:39: /network/allow/1: \"127.1\" is not a host name: its last label is a number, which "
            "inet_aton reads as an IPv4 address (write the address as 127.0.0.1)");
  EXPECT_EQ(PolicyError(R"("network": {"allow": ["pkg.lab.test", "PKG.lab.test"]})"),
            "p.json:2:39: /network/allow/1: \"PKG.lab.test\" is the destination of /network/allow/0 "
            "(\"pkg.lab.test\")");
  EXPECT_EQ(PolicyError(R"("network": {"allow": ["192.0.2.0/24", "192.0.2.0/24:443"]})"), "ok");
  EXPECT_EQ(PolicyError(R"("network": {"dns": "filtered", "proxy": "env", "allow": ["*.lab.test"]})"), "ok");
  EXPECT_EQ(PolicyError(R"("network": {"proxy": "socks5://127.0.0.1:1080"})"),
            "p.json:2:22: /network/proxy: \"socks5://127.0.0.1:1080\" is not \"env\" or a proxy URL "
            "http://HOST:PORT: only http:// proxies are understood");
  EXPECT_EQ(PolicyError(R"("network": {"dns": "some"})"),
            "p.json:2:20: /network/dns: expected one of \"deny\", \"allow\", \"filtered\", got \"some\"");
  StatusOr<JsonDocument> doc = JsonDocument::Parse(
      R"({"name": "n", "description": "d", "network": {"proxy": "http://127.0.0.1:3128", "dns": "filtered"}})", "x");
  ASSERT_TRUE(doc.ok());
  StatusOr<Policy> p = ParsePolicy(*doc);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->network.proxy.source, ProxySource::kUrl);
  EXPECT_EQ(p->network.proxy.url, "http://127.0.0.1:3128");
  EXPECT_EQ(p->network.dns, DnsPermission::kFiltered);
}

TEST(PolicyTest, LimitsMustBePositive) {
  EXPECT_EQ(PolicyError(R"("limits": {"pids": 0})"),
            "p.json:2:20: /limits/pids: must be between 1 and 4194304, got 0");
  EXPECT_EQ(PolicyError(R"("limits": {"cpus": 0})"),
            "p.json:2:20: /limits/cpus: must be greater than 0 and at most 4096, got 0");
}

// "/etc/sha\u200bdow" prints as /etc/shadow and names an absent file: its check would pass on
// ENOENT while checking nothing.
TEST(PolicyTest, APathWithAnInvisibleCharacterIsRefused) {
  EXPECT_EQ(PolicyError(R"("filesystem": {"unreadable": ["/etc/sha\u200bdow"]})"),
            "p.json:2:31: /filesystem/unreadable/0: contains U+200B (an invisible format character) at character "
            "9: it looks like another path");
}

TEST(PolicyTest, PathsMustBeAbsoluteOrStartWithAPlaceholder) {
  EXPECT_EQ(PolicyError(R"("filesystem": {"readable": ["/ok", "tmp"]})"),
            "p.json:2:36: /filesystem/readable/1: must be absolute or start with {host_canary} "
            "or {workspace}");
  EXPECT_EQ(PolicyError(R"("persistence": {"survives": ["{workspace}x"]})"),
            "p.json:2:30: /persistence/survives/0: {workspace} must be followed by nothing or "
            "\"/\"");
  EXPECT_EQ(PolicyError(R"("filesystem": {"readable": ["/home/{user}"]})"),
            "p.json:2:29: /filesystem/readable/0: only {host_canary} and {workspace} are "
            "allowed, at the start");
  EXPECT_EQ(PolicyError(R"("filesystem": {"readable": ["{workspace}/a", "{host_canary}"]})"), "ok");
}

TEST(PolicyTest, OverlappingPathsAreAnErrorAtTheSecondOccurrence) {
  // unreadable comes first in the file, so the readable entry is the second occurrence.
  EXPECT_EQ(PolicyError("\"filesystem\": {\"unreadable\": [\"/etc/\"],\n"
                        "  \"readable\": [\"/tmp\", \"/etc\"]}"),
            "p.json:3:24: /filesystem/readable/1: \"/etc\" is also listed at "
            "/filesystem/unreadable/0");
  EXPECT_EQ(PolicyError(R"("filesystem": {"writable": ["/a"], "unwritable": ["/b", "/a/."]})"),
            "p.json:2:57: /filesystem/unwritable/1: \"/a/.\" is also listed at "
            "/filesystem/writable/0");
  EXPECT_EQ(PolicyError(R"("persistence": {"survives": ["/w", "/w"]})"),
            "p.json:2:36: /persistence/survives/1: \"/w\" is also listed at "
            "/persistence/survives/0");
  // Reading and writing are separate questions: readable + unwritable is fine.
  EXPECT_EQ(PolicyError(R"("filesystem": {"readable": ["/etc"], "unwritable": ["/etc"]})"), "ok");
}

TEST(PolicyTest, Capabilities) {
  EXPECT_EQ(PolicyError(R"("privileges": {"capabilities": ["CAP_CHOWN", "net_admin"]})"),
            "p.json:2:46: /privileges/capabilities/1: \"net_admin\" is not a capability name "
            "(CAP_[A-Z_]+)");
  EXPECT_EQ(PolicyError(R"("privileges": {"capabilities": ["CAP_CHOWN", "CAP_CHOWN"]})"),
            "p.json:2:46: /privileges/capabilities/1: duplicate of /privileges/capabilities/0");
}

}  // namespace
}  // namespace sandprobe

namespace sandprobe {
namespace {

TEST(PolicyToleranceTest, DefaultsAndOverridesAndErrors) {
  StatusOr<JsonDocument> plain = JsonDocument::Parse(R"({"name": "n", "description": "d", "limits": {"pids": 5}})", "x");
  ASSERT_TRUE(plain.ok());
  StatusOr<Policy> p = ParsePolicy(*plain);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->limits.tolerance.pids, 1);
  EXPECT_EQ(p->limits.tolerance.memory_percent, 5);
  EXPECT_EQ(p->limits.tolerance.cpus_percent, 15);
  EXPECT_EQ(p->limits.tolerance.wall_seconds, 1);

  StatusOr<JsonDocument> set = JsonDocument::Parse(
      R"({"name": "n", "description": "d", "limits": {"tolerance": {"pids": 3, "memory_percent": 10}}})", "x");
  ASSERT_TRUE(set.ok());
  StatusOr<Policy> q = ParsePolicy(*set);
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->limits.tolerance.pids, 3);
  EXPECT_EQ(q->limits.tolerance.memory_percent, 10);

  StatusOr<JsonDocument> bad = JsonDocument::Parse(
      R"({"name": "n", "description": "d", "limits": {"tolerance": {"memroy_percent": 10}}})", "x");
  ASSERT_TRUE(bad.ok());
  StatusOr<Policy> r = ParsePolicy(*bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/limits/tolerance/memroy_percent"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace sandprobe

namespace sandprobe {
namespace {

// Every number is bounded to what the machine can mean: cpus 1e308 once made a report that
// failed its own schema (its tolerance band became infinity, written as null).
TEST(PolicyNumbersTest, LimitsAreBoundedAtLoad) {
  struct Case {
    const char* json;
    const char* error;  // "ok" when accepted
  };
  const Case cases[] = {
      {R"("limits": {"cpus": 1e308})",
       "p.json:2:20: /limits/cpus: must be greater than 0 and at most 4096, got 1e+308"},
      {R"("limits": {"cpus": 4096.5})",
       "p.json:2:20: /limits/cpus: must be greater than 0 and at most 4096, got 4096.5"},
      {R"("limits": {"cpus": 4096})", "ok"},
      {R"("limits": {"cpus": 0.25})", "ok"},
      {R"("limits": {"pids": 4194305})",
       "p.json:2:20: /limits/pids: must be between 1 and 4194304, got 4194305"},
      {R"("limits": {"pids": 4194304})", "ok"},
      {R"("limits": {"memory_mib": 1073741825})",
       "p.json:2:26: /limits/memory_mib: must be between 1 and 1073741824, got 1073741825"},
      {R"("limits": {"memory_mib": 1073741824})", "ok"},
      {R"("limits": {"tmp_mib": 9223372036854775807})",
       "p.json:2:23: /limits/tmp_mib: must be between 1 and 1073741824, got 9223372036854775807"},
      {R"("limits": {"open_files": 2147483585})",
       "p.json:2:26: /limits/open_files: must be between 1 and 2147483584, got 2147483585"},
      {R"("limits": {"wall_seconds": 31536001})",
       "p.json:2:28: /limits/wall_seconds: must be between 1 and 31536000, got 31536001"},
      {R"("limits": {"wall_seconds": 31536000})", "ok"},
      {R"("limits": {"tolerance": {"pids": 4194305}})",
       "p.json:2:34: /limits/tolerance/pids: must be between 0 and 4194304, got 4194305"},
      {R"("limits": {"tolerance": {"pids": -1}})",
       "p.json:2:34: /limits/tolerance/pids: must be between 0 and 4194304, got -1"},
      {R"("limits": {"tolerance": {"wall_seconds": 18446744073709551615}})",
       "p.json:2:42: /limits/tolerance/wall_seconds: must be between 0 and 31536000, got "
       "18446744073709551615"},
      {R"("limits": {"tolerance": {"open_files": 2147483585}})",
       "p.json:2:40: /limits/tolerance/open_files: must be between 0 and 2147483584, got "
       "2147483585"},
      {R"("limits": {"tolerance": {"cpus_percent": 101}})",
       "p.json:2:42: /limits/tolerance/cpus_percent: must be between 0 and 100, got 101"},
      {R"("limits": {"tolerance": {"memory_percent": 0, "tmp_percent": 100}})", "ok"},
  };
  for (const Case& c : cases) EXPECT_EQ(PolicyError(c.json), c.error) << c.json;
}

// A number a double cannot hold (JSON has no NaN or infinity literal; 1e400 would be infinity)
// is refused while parsing, at its own position.
TEST(PolicyNumbersTest, InfiniteNumberIsAnErrorWithItsPosition) {
  EXPECT_EQ(PolicyError(R"("limits": {"cpus": 1e400})"),
            "parse: p.json:2:20: invalid JSON: [json.exception.out_of_range.406] number overflow "
            "parsing '1e400'");
}

// A path with "\u0000" validated, then the run used the part before the NUL (open() stops
// there): refused at load, at the string, in every list of paths.
TEST(PolicyNulTest, NulInAPathOrStringIsRefusedAtItsPosition) {
  const std::string nul =
      "contains a NUL character (\\u0000): it would cut the string short at run time";
  EXPECT_EQ(PolicyError(R"("filesystem": {"unreadable": ["/etc/shadow\u0000.bak"]})"),
            "p.json:2:31: /filesystem/unreadable/0: " + nul);
  EXPECT_EQ(PolicyError(R"("persistence": {"ephemeral": ["/tmp", "{workspace}/x\u0000"]})"),
            "p.json:2:39: /persistence/ephemeral/1: " + nul);
  EXPECT_EQ(PolicyError(R"("network": {"allow": ["127.0.0.1\u0000:80"]})"),
            "p.json:2:23: /network/allow/0: " + nul);
  EXPECT_EQ(PolicyError(R"("privileges": {"capabilities": ["CAP_CHOWN\u0000"]})"),
            "p.json:2:33: /privileges/capabilities/0: " + nul);
  StatusOr<JsonDocument> doc =
      JsonDocument::Parse(R"({"name": "n\u0000", "description": "d"})", "p.json");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ(ParsePolicy(*doc).status().message(), "p.json:1:10: /name: " + nul);
}

}  // namespace
}  // namespace sandprobe

namespace sandprobe {
namespace {

StatusOr<Policy> PolicyFromText(const std::string& text) {
  StatusOr<JsonDocument> doc = JsonDocument::Parse(text, "p.json");
  if (!doc.ok()) return doc.status();
  return ParsePolicy(*doc);
}

// Issue 26, 11: the host's network namespace shared and egress written "deny" say opposite
// things about the host's loopback. The policy loads; the contradiction names both fields
// where they are written, and which one the run follows.
TEST(PolicyTest, SharedNetworkNamespaceAndDeniedEgressIsAContradiction) {
  StatusOr<Policy> p = PolicyFromText(
      "{\"name\": \"c\", \"description\": \"d\",\n"
      " \"network\": {\"egress\": \"deny\"},\n"
      " \"host\": {\"network_namespace\": \"shared\"}}");
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->contradictions.size(), 1u);
  const std::string text = DescribeContradiction(p->contradictions[0]);
  EXPECT_EQ(text.rfind("p.json:3:32 /host/network_namespace: contradicts p.json:2:24 /network/egress: ", 0), 0u) << text;
  EXPECT_NE(text.find("judged by /network/egress"), std::string::npos) << text;
  EXPECT_TRUE(p->network.egress_written);
  // Egress not written: its default is no statement, and "shared" alone decides.
  StatusOr<Policy> implicit = PolicyFromText(
      "{\"name\": \"c\", \"description\": \"d\", \"host\": {\"network_namespace\": \"shared\"}}");
  ASSERT_TRUE(implicit.ok());
  EXPECT_TRUE(implicit->contradictions.empty());
  EXPECT_FALSE(implicit->network.egress_written);
  // Egress allowed with a shared namespace agrees.
  StatusOr<Policy> agree = PolicyFromText(
      "{\"name\": \"c\", \"description\": \"d\", \"network\": {\"egress\": \"allow\"},"
      " \"host\": {\"network_namespace\": \"shared\"}}");
  ASSERT_TRUE(agree.ok());
  EXPECT_TRUE(agree->contradictions.empty());
}

TEST(PolicyTest, EveryHostNamespaceHasItsField) {
  StatusOr<Policy> p = PolicyFromText(
      "{\"name\": \"n\", \"description\": \"d\", \"host\": {\"user_namespace\": \"shared\","
      " \"cgroup_namespace\": \"shared\"}}");
  ASSERT_TRUE(p.ok()) << p.status().message();
  for (const auto& [ns, pointer, shared] : std::vector<std::tuple<std::string, std::string, bool>>{
           {"pid", "/host/pid_namespace", false}, {"net", "/host/network_namespace", false},
           {"mnt", "/host/mount_namespace", false}, {"ipc", "/host/ipc_namespace", false},
           {"uts", "/host/uts_namespace", false}, {"cgroup", "/host/cgroup_namespace", true},
           {"user", "/host/user_namespace", true}}) {
    std::optional<HostNamespaceField> field = HostNamespace(p->host, ns);
    ASSERT_TRUE(field.has_value()) << ns;
    EXPECT_EQ(field->pointer, pointer);
    EXPECT_EQ(field->sharing == NamespaceSharing::kShared, shared) << ns;
  }
  EXPECT_FALSE(HostNamespace(p->host, "time").has_value());
  StatusOr<Policy> bad = PolicyFromText(
      "{\"name\": \"n\", \"description\": \"d\", \"host\": {\"user_namespace\": \"shard\"}}");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("/host/user_namespace"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace sandprobe
