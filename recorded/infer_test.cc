// Inferring the enforced policy from a recorded run's verdicts: passes stay promises; a path
// on the other side moves to the opposite list; a failed switch flips; an undecided path or a
// broken limit is dropped; a fail no policy field can express is only noted; the result loads
// as a policy; reports of another schema are invalid input.
#include "recorded/infer.h"

#include <gtest/gtest.h>

#include "reports/json_report.h"
#include "load/json_document.h"
#include "load/policy.h"

namespace sandprobe {
namespace {

using nlohmann::json;

Verdict VerdictOf(const std::string& id, Outcome outcome, const std::string& reference,
                  const std::string& observed = "observed") {
  Verdict v;
  v.check.id = id;
  v.check.family = id.substr(0, id.find(':'));
  v.check.reference = ParsePolicyRef(reference).value_or(PolicyRef::InWords(reference));
  v.outcome = outcome;
  v.observed = observed;
  return v;
}

// A limit's fail as its judge records it: the value the sandbox enforced instead, as a number.
Verdict EnforcedAt(Verdict v, double value) {
  v.evidence.enforced_instead = value;
  return v;
}

json Report(std::vector<Verdict> verdicts) {
  RunReport report;
  report.run_id = "r1";
  report.profile_name = "bwrap-x";
  report.policy_name = "strict";
  report.policy = json::parse(R"({"name": "strict", "description": "d",
    "filesystem": {"readable": ["/tmp", "/etc", "/opt"], "unreadable": ["/etc/shadow", "/root"],
                   "writable": ["/tmp"], "unwritable": ["/usr"]},
    "network": {"egress": "deny"},
    "limits": {"pids": 50, "memory_mib": 512},
    "privileges": {"root": false}, "host": {"pid_namespace": "isolated"}})");
  report.verdicts = std::move(verdicts);
  return ReportToJson(report);
}

InferredPolicy InferOrDie(const json& report) {
  StatusOr<InferredPolicy> out = InferPolicy(report, "run.json", "");
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? *out : InferredPolicy{};
}

TEST(Infer, PathsOnTheOtherSideMoveAndPassesStay) {
  InferredPolicy p = InferOrDie(Report({
      VerdictOf("fs.read.allowed:/tmp", Outcome::kPass, "p.json:1:1 /filesystem/readable/0"),
      VerdictOf("fs.read.allowed:/etc", Outcome::kFail, "p.json:1:1 /filesystem/readable/1"),
      VerdictOf("fs.read.denied:/etc/shadow", Outcome::kPass, "p.json:1:1 /filesystem/unreadable/0"),
      VerdictOf("fs.read.denied:/root", Outcome::kFail, "p.json:1:1 /filesystem/unreadable/1"),
      VerdictOf("fs.alias.denied:/root[symlink]", Outcome::kFail, "p.json:1:1 /filesystem/unreadable/1"),
      VerdictOf("fs.write.denied:/usr", Outcome::kFail, "p.json:1:1 /filesystem/unwritable/0"),
  }));
  const json& fs = p.policy["filesystem"];
  EXPECT_EQ(fs["readable"], json::parse(R"(["/tmp", "/root"])"));  // /opt: no check looked
  EXPECT_EQ(fs["unreadable"], json::parse(R"(["/etc/shadow", "/etc"])"));
  EXPECT_EQ(fs["writable"], json::parse(R"(["/usr"])"));  // /tmp: no check looked
  EXPECT_EQ(fs["unwritable"], json::array());
  EXPECT_EQ(p.policy["name"], "bwrap-x-inferred");
  EXPECT_FALSE(p.policy.contains("limits") && p.policy["limits"].contains("pids"));  // never measured
  int root_notes = 0;
  for (const std::string& note : p.notes) root_notes += note.find("/filesystem/unreadable/1") != std::string::npos;
  EXPECT_EQ(root_notes, 1);  // /root once, though two checks failed on it
}

TEST(Infer, UndecidedPathsAreDroppedNeverMoved) {
  InferredPolicy p = InferOrDie(Report({
      VerdictOf("fs.read.allowed:/tmp", Outcome::kPass, "p.json:1:1 /filesystem/readable/0"),
      VerdictOf("fs.read.allowed:/etc", Outcome::kInconclusive, "p.json:1:1 /filesystem/readable/1"),
      VerdictOf("fs.read.allowed:/opt", Outcome::kPass, "p.json:1:1 /filesystem/readable/2"),
      VerdictOf("fs.read.denied:/etc/shadow", Outcome::kPass, "p.json:1:1 /filesystem/unreadable/0"),
      VerdictOf("fs.read.denied:/root", Outcome::kFail, "p.json:1:1 /filesystem/unreadable/1"),
      VerdictOf("fs.alias.denied:/root[symlink]", Outcome::kError, "p.json:1:1 /filesystem/unreadable/1"),
  }));
  EXPECT_EQ(p.policy["filesystem"]["readable"], json::parse(R"(["/tmp", "/opt"])"));
  EXPECT_EQ(p.policy["filesystem"]["unreadable"], json::parse(R"(["/etc/shadow"])"));
}

// A report of a sandprobe from before evidence.enforced_instead says the value only in words:
// the limit is dropped (not promised), never set from the text.
TEST(Infer, ALimitIsNeverReadOutOfTheObservedWords) {
  InferredPolicy p = InferOrDie(Report({
      VerdictOf("limits.pids.max:50", Outcome::kFail, "p.json /limits/pids",
                "measured 100 tasks vs declared 50: enforced above the declared value; stopped by the pids cgroup"),
  }));
  EXPECT_FALSE(p.policy["limits"].contains("pids")) << p.policy.dump();
}

TEST(Infer, SwitchesFlipLimitsTakeTheEnforcedValueAndTheRestIsNoted) {
  InferredPolicy p = InferOrDie(Report({
      VerdictOf("net.egress.denied:tcp", Outcome::kFail, "p.json /network/egress"),
      VerdictOf("priv.root", Outcome::kFail, "p.json /privileges/root"),
      VerdictOf("priv.seccomp", Outcome::kFail, "p.json /privileges/seccomp"),
      VerdictOf("net.dns", Outcome::kError, "p.json /network/dns"),
      EnforcedAt(VerdictOf("limits.pids.max:50", Outcome::kFail, "p.json /limits/pids",
                           "measured 100 tasks vs declared 50: enforced above the declared value; stopped by the pids cgroup"),
                 100),
      VerdictOf("limits.memory_mib:512", Outcome::kFail, "p.json /limits/memory_mib",
                "measured 1024 MiB: not enforced up to 1024 MiB"),
      VerdictOf("priv.cwd", Outcome::kFail, "p.json /host"),
  }));
  EXPECT_EQ(p.policy["network"]["egress"], "allow");
  EXPECT_EQ(p.policy["privileges"]["root"], true);
  EXPECT_EQ(p.policy["privileges"]["seccomp"], "optional");  // absent meant required
  EXPECT_FALSE(p.policy["network"].contains("dns"));          // undecided switch: as declared
  EXPECT_EQ(p.policy["limits"]["pids"], 100);                // enforced, at another value
  EXPECT_FALSE(p.policy["limits"].contains("memory_mib"));  // not enforced: not promised
  bool noted_cwd = false, noted_unchecked = false;
  for (const std::string& note : p.notes) {
    noted_cwd = noted_cwd || note.find("priv.cwd") != std::string::npos;
    noted_unchecked = noted_unchecked || (note.find("kept as declared, not checked") != std::string::npos &&
                                          note.find("/host/pid_namespace") != std::string::npos);
  }
  EXPECT_TRUE(noted_cwd);
  EXPECT_TRUE(noted_unchecked);
  StatusOr<JsonDocument> doc = JsonDocument::Parse(p.policy.dump(), "inferred");
  ASSERT_TRUE(doc.ok());
  EXPECT_TRUE(ParsePolicy(*doc).ok());
}

// network.allow entries the harness cannot reach yet are skips (net.allow.untested:), so infer
// drops them and the proxy (claims nothing it did not observe); network.dns "filtered" that let
// a name through becomes "allow", one that refused an allowed name "deny".
TEST(Infer, UntestedDestinationsAreDroppedAndFilteredDnsGoesTheVerdictsWay) {
  const auto infer = [](Direction direction, const std::vector<Verdict>& more) {
    std::vector<Verdict> verdicts = more;
    Verdict dns = VerdictOf("net.dns.denied", Outcome::kFail, "p.json:1:1 /network/dns");
    dns.direction = direction;
    verdicts.push_back(dns);
    json report = Report(verdicts);
    report["policy"]["config"]["network"] = json::parse(R"({"egress": "deny", "dns": "filtered",
        "allow": ["loopback-tcp", "pypi.org:443", "*.lab.test"], "proxy": "env"})");
    return InferOrDie(report);
  };
  InferredPolicy p = infer(Direction::kTooPermissive, {
      VerdictOf("net.tcp.allowed:loopback", Outcome::kPass, "p.json:1:1 /network/allow/0"),
      VerdictOf("net.allow.untested:pypi.org:443", Outcome::kSkip, "p.json:1:1 /network/allow/1"),
      VerdictOf("net.allow.untested:*.lab.test", Outcome::kSkip, "p.json:1:1 /network/allow/2"),
      VerdictOf("net.proxy.untested", Outcome::kSkip, "p.json:1:1 /network/proxy")});
  EXPECT_EQ(p.policy["network"]["allow"], json::parse(R"(["loopback-tcp"])")) << p.policy.dump();
  EXPECT_FALSE(p.policy["network"].contains("proxy")) << p.policy.dump();
  EXPECT_EQ(p.policy["network"]["dns"], "allow");
  EXPECT_EQ(infer(Direction::kTooRestrictive, {}).policy["network"]["dns"], "deny");
  // A proxy no check of the run looked at is kept and named.
  InferredPolicy kept = infer(Direction::kTooRestrictive, {});
  EXPECT_EQ(kept.policy["network"]["proxy"], "env");
  bool named = false;
  for (const std::string& note : kept.notes) named = named || note.find("/network/proxy") != std::string::npos;
  EXPECT_TRUE(named);
}

// Issue 26, 14: docker without userns-remap shares the host's user namespace, and on cgroup v1
// its cgroup namespace: each has its field now, so `infer` flips it and the inferred policy's
// run passes those checks instead of failing them again.
TEST(Infer, ASharedHostNamespaceFlipsItsField) {
  InferredPolicy p = InferOrDie(Report({
      VerdictOf("priv.namespace:user", Outcome::kFail, "p.json /host/user_namespace"),
      VerdictOf("priv.namespace:cgroup", Outcome::kFail, "p.json /host/cgroup_namespace"),
      VerdictOf("priv.namespace:ipc", Outcome::kPass, "p.json /host/ipc_namespace"),
  }));
  EXPECT_EQ(p.policy["host"]["user_namespace"], "shared");
  EXPECT_EQ(p.policy["host"]["cgroup_namespace"], "shared");
  EXPECT_FALSE(p.policy["host"].contains("ipc_namespace"));
  StatusOr<JsonDocument> doc = JsonDocument::Parse(p.policy.dump(), "inferred");
  ASSERT_TRUE(doc.ok());
  StatusOr<Policy> loaded = ParsePolicy(*doc);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->host.user_namespace, NamespaceSharing::kShared);
}

TEST(Infer, AReportOfAnotherSchemaIsInvalidInput) {
  json report = Report({});
  report["schema"] = "sandprobe-report/0";
  StatusOr<InferredPolicy> out = InferPolicy(report, "run.json", "");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidInput);
  EXPECT_FALSE(InferPolicy(json("garbage"), "run.json", "").ok());
}

}  // namespace
}  // namespace sandprobe
