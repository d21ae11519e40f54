// The network families' expansion and judgement, with the canary witness's observations made
// up: a leak counts only by receipt of this launch's nonce, both directions, skips with reasons;
// a runtime socket gets one judgement in net.unix and priv.runtime_sockets; the interfaces are
// judged by the namespace's own view, a host sysfs apart.
#include <gtest/gtest.h>

#include "families/evaluate.h"
#include "families/plan.h"
#include "families/runtime_socket_judgement.h"
#include "families/test_policies.h"

namespace sandprobe {
namespace {

using nlohmann::json;
using testing::SuiteOf;
using testing::TierLowPolicy;

const char kNonce[] = "n0nce";

PlanContext Context(bool bridge) {
  PlanContext context{"/c", "/workspace", {}};
  context.values["net.loopback-tcp"] = "127.0.0.1:4000";
  context.values["net.loopback-udp"] = "127.0.0.1:4001";
  context.values["net.loopback-dns"] = "127.0.0.1:4002";
  if (bridge) {
    context.values["net.bridge-tcp"] = "172.17.0.1:5000";
    context.values["net.bridge-udp"] = "172.17.0.1:5001";
  }
  return context;
}

json Witness(std::vector<json> receipts, bool bridge = true) {
  json endpoints = {{"loopback-tcp", "127.0.0.1:4000"}, {"loopback-udp", "127.0.0.1:4001"}};
  if (bridge) endpoints["bridge-tcp"] = "172.17.0.1:5000";
  json net = {{"endpoints", endpoints}, {"receipts", receipts}, {"host_interfaces", json::object()}};
  if (!bridge) net["bridge_unavailable"] = "no bridge canary: docker: not found";
  return net;
}

json TcpFact(const std::string& site, bool ok) {
  json fact = {{"family", "net.tcp"}, {"path", site}, {"nonce", kNonce}, {"ok", ok}};
  if (!ok) fact["step"] = "connect", fact["errno"] = "ECONNREFUSED";
  return fact;
}

std::map<std::string, Verdict> JudgeNet(const Policy& policy, bool bridge, std::vector<json> facts,
                                   const json& net, Plan* plan_out = nullptr,
                                   const Suite& suite = SuiteOf({"net.tcp"})) {
  StatusOr<Plan> plan = ExpandChecks(policy, suite, Context(bridge));
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  BatchResult result{.state = BatchResult::State::kRan, .launch_id = "L1", .nonce = kNonce,
                     .complete = true};
  result.frames.facts = std::move(facts);
  result.frames.done = true;
  WitnessFacts witnesses;
  witnesses.observed["net"] = net;
  std::map<std::string, Verdict> by_id;
  for (Verdict& v : Evaluate(*plan, {result}, witnesses)) by_id[v.check.id] = v;
  if (plan_out) *plan_out = *plan;
  return by_id;
}

TEST(FamilyNetTest, ExpandsEndpointsIntoProbeArguments) {
  Plan plan;
  JudgeNet(TierLowPolicy(), true, {}, Witness({}), &plan);
  ASSERT_EQ(plan.batches.size(), 1u);
  EXPECT_EQ(plan.batches[0].invocations[0].args,
            (std::vector<std::string>{"loopback=127.0.0.1:4000", "bridge=172.17.0.1:5000"}));
}

TEST(FamilyNetTest, OnlyAReceiptOfThisNonceIsALeak) {
  const json ours = {{"endpoint", "bridge-tcp"}, {"peer", "172.17.0.2:3"}, {"nonce", kNonce}};
  const json other = {{"endpoint", "loopback-tcp"}, {"peer", "127.0.0.1:9"}, {"nonce", "older"}};
  auto v = JudgeNet(TierLowPolicy(), true, {TcpFact("loopback", true), TcpFact("bridge", true)},
               Witness({ours, other}));
  EXPECT_EQ(v["net.tcp.denied:bridge"].outcome, Outcome::kFail);
  EXPECT_EQ(v["net.tcp.denied:bridge"].direction, Direction::kTooPermissive);
  EXPECT_EQ(v["net.tcp.denied:bridge"].check.severity, Severity::kHigh);
  // The probe "connected" (a proxy could do that) but the canary never got this nonce: a pass
  // that says so.
  EXPECT_EQ(v["net.tcp.denied:loopback"].outcome, Outcome::kPass);
  EXPECT_NE(v["net.tcp.denied:loopback"].observed.find("connected"), std::string::npos);
  EXPECT_NE(v["net.tcp.denied:loopback"].observed.find("never received"), std::string::npos);
}

TEST(FamilyNetTest, AnAllowedCanaryNotReachedIsTooRestrictive) {
  Policy policy = TierLowPolicy();
  policy.network.allow = {*ParseAllowEntry("loopback-tcp"), *ParseAllowEntry("pypi.org:443")};
  auto v = JudgeNet(policy, true, {TcpFact("loopback", false), TcpFact("bridge", false)}, Witness({}));
  EXPECT_EQ(v["net.tcp.allowed:loopback"].outcome, Outcome::kFail);
  EXPECT_EQ(v["net.tcp.allowed:loopback"].direction, Direction::kTooRestrictive);
  EXPECT_EQ(v["net.tcp.denied:bridge"].outcome, Outcome::kPass);
  // A name is never contacted (the egress lab is not built yet): a skip saying so, never a pass.
  EXPECT_EQ(v["net.allow.untested:pypi.org:443"].outcome, Outcome::kSkip);
  EXPECT_NE(v["net.allow.untested:pypi.org:443"].observed.find("egress lab"), std::string::npos);
  EXPECT_EQ(v["net.allow.untested:pypi.org:443"].check.reference.pointer, "/network/allow/1");
  EXPECT_EQ(v.count("net.allow.untested:loopback-tcp"), 0u);
}

TEST(FamilyNetTest, ADeclaredProxyIsASkipUntilTheLabIsBuilt) {
  Policy policy = TierLowPolicy();
  policy.network.proxy = *ParseNetworkProxy("http://127.0.0.1:3128");
  auto v = JudgeNet(policy, true, {TcpFact("loopback", false), TcpFact("bridge", false)}, Witness({}));
  EXPECT_EQ(v["net.proxy.untested"].outcome, Outcome::kSkip);
  EXPECT_NE(v["net.proxy.untested"].observed.find("the proxy (http://127.0.0.1:3128) was never contacted"),
            std::string::npos) << v["net.proxy.untested"].observed;
  EXPECT_EQ(v["net.proxy.untested"].check.reference.pointer, "/network/proxy");
  EXPECT_EQ(JudgeNet(TierLowPolicy(), true, {}, Witness({})).count("net.proxy.untested"), 0u);
}

// "filtered": the canary zone resolves only when network.allow names it.
TEST(FamilyNetTest, FilteredDnsExpectsTheCanaryZoneOnlyWhenAllowed) {
  const auto dns_check = [](const std::vector<std::string>& allow) {
    Policy policy = TierLowPolicy();
    policy.network.dns = DnsPermission::kFiltered;
    for (const std::string& entry : allow) policy.network.allow.push_back(*ParseAllowEntry(entry));
    StatusOr<Plan> plan = ExpandChecks(policy, SuiteOf({"net.dns"}), Context(true));
    EXPECT_TRUE(plan.ok()) << plan.status().message();
    std::string ids;
    for (const Check& check : plan->checks) ids += check.id + " ";
    return ids;
  };
  EXPECT_EQ(dns_check({}), "net.dns.denied ");
  EXPECT_EQ(dns_check({"pypi.org", "evilsandprobe.test"}), "net.dns.denied ");
  EXPECT_EQ(dns_check({"*.sandprobe.test"}), "net.dns.allowed ");
}

TEST(FamilyNetTest, EgressAllowCoversTheBridgeButNotTheHostLoopback) {
  Policy policy = TierLowPolicy();
  policy.network.egress = Permission::kAllow;
  const json ours = {{"endpoint", "bridge-tcp"}, {"peer", "172.17.0.2:3"}, {"nonce", kNonce}};
  auto v = JudgeNet(policy, true, {TcpFact("loopback", false), TcpFact("bridge", true)}, Witness({ours}));
  EXPECT_EQ(v["net.tcp.allowed:bridge"].outcome, Outcome::kPass);
  EXPECT_EQ(v["net.tcp.denied:loopback"].outcome, Outcome::kPass);
}

// Issue 26, 11: the host's network namespace shared and egress written "deny" contradict each
// other; judging follows the explicit egress field, so the host's loopback is one check, denied
// (a leak fails it too-permissive), never an "allowed" check beside a denied one.
TEST(FamilyNetTest, ASharedNetworkNamespaceWithEgressWrittenDenyIsJudgedByEgress) {
  Policy policy = TierLowPolicy();
  policy.host.network_namespace = NamespaceSharing::kShared;
  const json leak = {{"endpoint", "loopback-tcp"}, {"peer", "127.0.0.1:7"}, {"nonce", kNonce}};
  // Egress left at its default: "shared" alone says the host's loopback is reachable.
  auto implicit = JudgeNet(policy, true, {TcpFact("loopback", true), TcpFact("bridge", false)}, Witness({leak}));
  EXPECT_EQ(implicit.count("net.tcp.denied:loopback"), 0u);
  EXPECT_EQ(implicit["net.tcp.allowed:loopback"].outcome, Outcome::kPass);
  // Egress written "deny": it decides.
  policy.network.egress = Permission::kDeny;
  policy.network.egress_written = true;
  auto v = JudgeNet(policy, true, {TcpFact("loopback", true), TcpFact("bridge", false)}, Witness({leak}));
  EXPECT_EQ(v.count("net.tcp.allowed:loopback"), 0u);
  EXPECT_EQ(v["net.tcp.denied:loopback"].outcome, Outcome::kFail);
  EXPECT_EQ(v["net.tcp.denied:loopback"].direction, Direction::kTooPermissive);
  EXPECT_EQ(v["net.tcp.denied:bridge"].outcome, Outcome::kPass);
}

TEST(FamilyNetTest, NoBridgeIsASkipWithTheReason) {
  auto v = JudgeNet(TierLowPolicy(), false, {TcpFact("loopback", false)}, Witness({}, false));
  EXPECT_EQ(v["net.tcp.denied:bridge"].outcome, Outcome::kSkip);
  EXPECT_NE(v["net.tcp.denied:bridge"].observed.find("docker: not found"), std::string::npos);
  EXPECT_EQ(v["net.tcp.denied:loopback"].outcome, Outcome::kPass);
}

TEST(FamilyNetTest, NoAttemptAndNoReceiptIsInconclusive) {
  auto v = JudgeNet(TierLowPolicy(), true, {}, Witness({}));
  EXPECT_EQ(v["net.tcp.denied:loopback"].outcome, Outcome::kInconclusive);
}

// The nonce that decides is the harness's own. A sandbox that delivers this launch's nonce to
// every canary and reports another one in its facts (or none) still fails every denied check.
TEST(FamilyNetTest, EgressIsJudgedByTheHarnessNonceNotTheOneTheFactsName) {
  std::vector<json> lying;
  for (const char* site : {"loopback", "bridge"}) {
    json fact = TcpFact(site, false);
    fact["nonce"] = "x";
    lying.push_back(fact);
  }
  const json receipts = Witness({{{"endpoint", "loopback-tcp"}, {"peer", "127.0.0.1:7"}, {"nonce", kNonce}},
                                 {{"endpoint", "bridge-tcp"}, {"peer", "172.17.0.2:7"}, {"nonce", kNonce}}});
  auto by_id = JudgeNet(TierLowPolicy(), true, lying, receipts);
  for (const char* id : {"net.tcp.denied:loopback", "net.tcp.denied:bridge"}) {
    EXPECT_EQ(by_id[id].outcome, Outcome::kFail) << id << ": " << by_id[id].observed;
    EXPECT_EQ(by_id[id].direction, Direction::kTooPermissive) << id;
  }
  // A receipt carrying the nonce the facts name, not the harness's, proves nothing.
  const json forged = Witness({{{"endpoint", "loopback-tcp"}, {"peer", "127.0.0.1:7"}, {"nonce", "x"}}});
  by_id = JudgeNet(TierLowPolicy(), true, lying, forged);
  EXPECT_EQ(by_id["net.tcp.denied:loopback"].outcome, Outcome::kPass);
}

// ---- runtime sockets: one fact, one judgement in both families ----

const char kDockerSock[] = "/var/run/docker.sock";
const char kSockCheck[] = "net.unix.hidden:/var/run/docker.sock";

// The same attempt at docker.sock as each probe reports it, with the launch's hello frame.
std::vector<json> SocketFacts(long euid, bool connected, const std::string& err,
                              const std::string& step = "connect") {
  json unix_fact = {{"family", "net.unix"}, {"path", kDockerSock}, {"exists", true},
                    {"is_socket", true}, {"ok", connected}};
  json priv_fact = {{"family", "priv.runtime_sockets"}, {"source", "list"}, {"path", kDockerSock},
                    {"exists", true}, {"kind", "socket"}, {"connect_ok", connected}};
  if (connected) {
    unix_fact["status_line"] = "HTTP/1.0 200 OK";
  } else {
    unix_fact["step"] = step;
    unix_fact["errno"] = err;
    priv_fact["errno"] = err;
  }
  return {{{"family", "hello"}, {"pid", 1}, {"euid", euid}},
          unix_fact,
          priv_fact,
          {{"family", "priv.runtime_sockets"}, {"summary", true}, {"paths", 1}}};
}

std::map<std::string, Verdict> JudgeSockets(std::vector<json> facts) {
  return JudgeNet(TierLowPolicy(), true, std::move(facts), Witness({}), nullptr,
                  SuiteOf({"net.unix", "priv.runtime_sockets"}));
}

TEST(FamilyNetTest, SeccompEpermOnConnectIsADenialInBothFamilies) {
  for (long euid : {0L, 1000L}) {
    auto v = JudgeSockets(SocketFacts(euid, false, "EPERM"));
    for (const char* id : {kSockCheck, "priv.runtime_sockets"}) {
      EXPECT_EQ(v[id].outcome, Outcome::kPass) << id << " euid " << euid << ": " << v[id].observed;
      EXPECT_NE(v[id].observed.find("EPERM"), std::string::npos) << v[id].observed;
      EXPECT_NE(v[id].observed.find("denied"), std::string::npos) << v[id].observed;
    }
  }
  // socket(AF_UNIX) itself refused: the same denial.
  auto v = JudgeSockets(SocketFacts(1000, false, "EPERM", "socket"));
  EXPECT_EQ(v[kSockCheck].outcome, Outcome::kPass) << v[kSockCheck].observed;
}

// The socket file's mode and owner, and the probe's credentials (the families' summaries).
void AddModes(std::vector<json>& facts, const std::string& mode, long gid, json groups) {
  for (json& f : facts) {
    const bool summary = f.value("summary", false) || f.value("variant", "") == "summary";
    if (f["family"] == "hello") continue;
    if (summary) {
      f["euid"] = 1000;
      f["egid"] = 1000;
      f["groups"] = groups;
    } else {
      f["mode"] = mode;
      f["owner_uid"] = 0;
      f["owner_gid"] = gid;
    }
  }
  facts.push_back({{"family", "net.unix"}, {"variant", "summary"}, {"path", ""}, {"euid", 1000}, {"egid", 1000},
                   {"groups", groups}, {"found", 0}, {"walk", json::object()}});
}

TEST(FamilyNetTest, EaccesFromAModeThatRefusesTheProbeIsADenialInBothFamilies) {
  // root:docker 0660, uid 1000 outside group 110: the mode refused it; nothing in the sandbox
  // makes it another uid (the privilege checks judge that): denied, in both families.
  auto facts = SocketFacts(1000, false, "EACCES");
  AddModes(facts, "0660", 110, json::array({1000}));
  auto v = JudgeSockets(facts);
  for (const char* id : {kSockCheck, "priv.runtime_sockets"}) {
    EXPECT_EQ(v[id].outcome, Outcome::kPass) << id << ": " << v[id].observed;
    EXPECT_NE(v[id].observed.find("denied by the file's mode 0660"), std::string::npos) << v[id].observed;
  }
  // In the group, with group write: the mode admits it, so something else refused (an LSM).
  facts = SocketFacts(1000, false, "EACCES");
  AddModes(facts, "0660", 110, json::array({1000, 110}));
  v = JudgeSockets(facts);
  EXPECT_EQ(v[kSockCheck].outcome, Outcome::kPass);
  EXPECT_NE(v[kSockCheck].observed.find("LSM"), std::string::npos) << v[kSockCheck].observed;
}

TEST(FamilyNetTest, EaccesWithoutTheModeInTheRecordStaysAMediumFinding) {
  // An older record (no mode, no credentials): a uid or group the mode admits may use it.
  auto v = JudgeSockets(SocketFacts(1000, false, "EACCES"));
  for (const char* id : {kSockCheck, "priv.runtime_sockets"}) {
    EXPECT_EQ(v[id].outcome, Outcome::kFail) << id;
    EXPECT_EQ(v[id].direction, Direction::kTooPermissive) << id;
    EXPECT_EQ(v[id].check.severity, Severity::kMedium) << id;
    EXPECT_NE(v[id].observed.find("another uid or group"), std::string::npos) << v[id].observed;
  }
  // Root passes the file's mode: its EACCES comes from an LSM (or an owner outside its user
  // namespace), a denial.
  auto root = JudgeSockets(SocketFacts(0, false, "EACCES"));
  for (const char* id : {kSockCheck, "priv.runtime_sockets"}) {
    EXPECT_EQ(root[id].outcome, Outcome::kPass) << id << ": " << root[id].observed;
  }
}

TEST(FamilyNetTest, AConnectableSocketIsACriticalFailInBothFamilies) {
  auto v = JudgeSockets(SocketFacts(0, true, ""));
  for (const char* id : {kSockCheck, "priv.runtime_sockets"}) {
    EXPECT_EQ(v[id].outcome, Outcome::kFail) << id;
    EXPECT_EQ(v[id].check.severity, Severity::kCritical) << id;
  }
  EXPECT_NE(v[kSockCheck].observed.find("GET /_ping -> \"HTTP/1.0 200 OK\""), std::string::npos);
  // A stale socket file (nothing listens) is not reachable; an unknown errno proves nothing.
  auto stale = JudgeSockets(SocketFacts(0, false, "ECONNREFUSED"));
  EXPECT_EQ(stale[kSockCheck].outcome, Outcome::kPass);
  EXPECT_EQ(stale["priv.runtime_sockets"].outcome, Outcome::kPass);
  auto odd = JudgeSockets(SocketFacts(0, false, "EIO"));
  EXPECT_EQ(odd[kSockCheck].outcome, Outcome::kInconclusive);
  EXPECT_EQ(odd["priv.runtime_sockets"].outcome, Outcome::kInconclusive);
}

TEST(FamilyNetTest, WorstSocketDecidesAndNoHelloKeepsTheFinding) {
  EXPECT_EQ(WorstReach({SocketReach::kDenied, SocketReach::kReachable, SocketReach::kOtherUserMay}),
            SocketReach::kReachable);
  EXPECT_EQ(WorstReach({SocketReach::kDenied, SocketReach::kUnclear}), SocketReach::kUnclear);
  EXPECT_EQ(WorstReach({}), SocketReach::kAbsent);
  SocketAttempt a = ReadSocketAttempt({{"path", "/s"}, {"exists", true}, {"kind", "socket"},
                                       {"connect_ok", false}, {"errno", "EACCES"}});
  EXPECT_EQ(ClassifySocket(a, SocketCaller{}), SocketReach::kOtherUserMay);
  EXPECT_EQ(ClassifySocket(a, SocketCaller{.euid = 0L}), SocketReach::kDenied);
  a.error = "EAGAIN";  // a full backlog: the connect was permitted
  EXPECT_EQ(ClassifySocket(a, SocketCaller{.euid = 1000L}), SocketReach::kReachable);
  // The owner's bits decide for the owner, even when the group's would admit it.
  a = ReadSocketAttempt({{"path", "/s"}, {"exists", true}, {"kind", "socket"}, {"connect_ok", false},
                         {"errno", "EACCES"}, {"mode", "0070"}, {"owner_uid", 1000}, {"owner_gid", 5}});
  const SocketCaller member{.euid = 1000L, .egid = 5L, .groups = {5}, .groups_known = true};
  EXPECT_EQ(ClassifySocket(a, member), SocketReach::kDeniedByMode);
  EXPECT_EQ(WorstReach({SocketReach::kDeniedByMode, SocketReach::kAbsent}), SocketReach::kAbsent);
}

// ---- sockets by what they are ----

// A socket the probe found by its walk, in both families' shapes.
std::vector<json> FoundSocket(const std::string& path, json answer) {
  json unix_fact = {{"family", "net.unix"}, {"path", path}, {"variant", "found"}, {"source", "walk"},
                    {"exists", true}, {"is_socket", true}, {"ok", true}, {"mode", "0660"}, {"owner_uid", 0},
                    {"owner_gid", 110}};
  json priv_fact = {{"family", "priv.runtime_sockets"}, {"source", "walk"}, {"path", path}, {"exists", true},
                    {"kind", "socket"}, {"connect_ok", true}, {"mode", "0660"}, {"owner_uid", 0}, {"owner_gid", 110}};
  unix_fact.update(answer);
  priv_fact.update(answer);
  return {unix_fact, priv_fact};
}

std::vector<json> ScanWith(std::vector<json> found) {
  auto facts = SocketFacts(1000, false, "ENOENT", "stat");
  facts[1] = {{"family", "net.unix"}, {"path", kDockerSock}, {"ok", false}, {"step", "stat"}, {"errno", "ENOENT"}};
  facts[2] = {{"family", "priv.runtime_sockets"}, {"source", "list"}, {"path", kDockerSock}, {"exists", false}, {"errno", "ENOENT"}};
  facts.push_back({{"family", "net.unix"}, {"variant", "summary"}, {"path", ""}, {"found", 1}, {"proc_net_unix", 0},
                   {"walk", {{"mounts", 3}, {"dirs", 9}, {"entries", 40}, {"truncated", false}}},
                   {"euid", 1000}, {"egid", 1000}, {"groups", json::array({1000, 110})}});
  facts.insert(facts.end(), found.begin(), found.end());
  // The probe's summary counts every path it reported, the found ones too (list_counts.h).
  for (json& f : facts) {
    if (f.value("family", "") == "priv.runtime_sockets" && f.value("summary", false)) f["paths"] = f.value("paths", 0) + 1;
  }
  return facts;
}

TEST(FamilyNetTest, ASocketAnsweringAsARuntimeFailsWhereverItSits) {
  const json docker = {{"status_line", "HTTP/1.0 200 OK"}, {"api_version", "1.41"}, {"server", "Docker/20.10.24 (linux)"}};
  auto v = JudgeSockets(ScanWith(FoundSocket("/anything/docker.sock", docker)));
  // Not at a listed path: the per-path check passes, the socket's answer fails both others.
  EXPECT_EQ(v[kSockCheck].outcome, Outcome::kPass) << v[kSockCheck].observed;
  for (const char* id : {"net.unix.runtime-api", "priv.runtime_sockets"}) {
    EXPECT_EQ(v[id].outcome, Outcome::kFail) << id << ": " << v[id].observed;
    EXPECT_EQ(v[id].check.severity, Severity::kCritical) << id;
    EXPECT_NE(v[id].observed.find("/anything/docker.sock (found: walk)"), std::string::npos) << v[id].observed;
    EXPECT_NE(v[id].observed.find("Api-Version 1.41"), std::string::npos) << v[id].observed;
  }
  // gRPC's HTTP/2 (containerd, cri-o): a runtime too.
  v = JudgeSockets(ScanWith(FoundSocket("/x/containerd.sock", {{"reply_bytes", 15}, {"h2", true}})));
  EXPECT_EQ(v["net.unix.runtime-api"].outcome, Outcome::kFail) << v["net.unix.runtime-api"].observed;
  EXPECT_EQ(v["priv.runtime_sockets"].outcome, Outcome::kFail);
}

TEST(FamilyNetTest, AFoundSocketThatIsNoRuntimeOrIsDeniedPasses) {
  // Another service's socket: HTTP without Api-Version, or silence.
  for (json answer : {json{{"status_line", "HTTP/1.0 404 Not Found"}}, json{{"reply_bytes", 0}, {"h2", false}}}) {
    auto v = JudgeSockets(ScanWith(FoundSocket("/run/other.sock", answer)));
    for (const char* id : {"net.unix.runtime-api", "priv.runtime_sockets"}) {
      EXPECT_EQ(v[id].outcome, Outcome::kPass) << id << " " << answer.dump() << ": " << v[id].observed;
    }
  }
  // docker.sock under another name, refused by its mode (uid 1000 outside group 110).
  json refused = {{"ok", false}, {"connect_ok", false}, {"step", "connect"}, {"errno", "EACCES"}};
  auto facts = ScanWith(FoundSocket("/anything/docker.sock", refused));
  facts[4]["groups"] = json::array({1000});
  auto v = JudgeSockets(facts);
  EXPECT_EQ(v["net.unix.runtime-api"].outcome, Outcome::kPass) << v["net.unix.runtime-api"].observed;
  EXPECT_NE(v["net.unix.runtime-api"].observed.find("denied by the file's mode"), std::string::npos);
  // No scan summary (an older probe): nothing proven.
  facts.erase(facts.begin() + 4);
  EXPECT_EQ(JudgeSockets(facts)["net.unix.runtime-api"].outcome, Outcome::kInconclusive);
}

// A scan whose reads the runtime refused (the JS probe under Deno or Node's permission model).
std::vector<json> RefusedScan(json listed, std::vector<json> found = {}) {
  auto facts = ScanWith(found);
  listed["family"] = "net.unix";
  listed["path"] = kDockerSock;
  facts[1] = listed;
  facts[4]["found"] = found.size() / 2;
  facts[4]["refused"] = 3;
  facts[4]["refused_path"] = "/proc/self/mountinfo";
  facts[4]["refused_errno"] = "EACCES";
  facts[4]["refused_denied_by"] = "runtime-permission";
  return facts;
}

TEST(FamilyNetTest, AScanTheRuntimeRefusedPassesOnlyBehindAConnectGate) {
  const json gated = {{"ok", false}, {"step", "connect"}, {"errno", "EACCES"}, {"denied_by", "runtime-permission"},
                      {"stat_errno", "EACCES"}, {"stat_denied_by", "runtime-permission"}};
  // Deno: the mount table refused, and every connect refused by the runtime before connect().
  auto v = JudgeSockets(RefusedScan(gated));
  EXPECT_EQ(v["net.unix.runtime-api"].outcome, Outcome::kPass) << v["net.unix.runtime-api"].observed;
  EXPECT_NE(v["net.unix.runtime-api"].observed.find("every unix connect the probe tried (1 of 1)"), std::string::npos)
      << v["net.unix.runtime-api"].observed;
  // The same refused reads, but a connect the runtime let through (Node: connect is not gated):
  // the scan proves no absence.
  const json other = {{"status_line", "HTTP/1.0 404 Not Found"}};
  v = JudgeSockets(RefusedScan(gated, FoundSocket("/run/other.sock", other)));
  EXPECT_EQ(v["net.unix.runtime-api"].outcome, Outcome::kInconclusive) << v["net.unix.runtime-api"].observed;
  EXPECT_NE(v["net.unix.runtime-api"].observed.find("/proc/self/mountinfo: EACCES"), std::string::npos);
  // No connect tried at all (every path absent): nothing shows a gate either.
  v = JudgeSockets(RefusedScan({{"ok", false}, {"step", "stat"}, {"errno", "ENOENT"}}));
  EXPECT_EQ(v["net.unix.runtime-api"].outcome, Outcome::kInconclusive) << v["net.unix.runtime-api"].observed;
  // A runtime that answered fails, whatever the scan could not read.
  const json docker = {{"status_line", "HTTP/1.0 200 OK"}, {"api_version", "1.41"}};
  v = JudgeSockets(RefusedScan({{"ok", true}, {"exists", true}, {"is_socket", true}, {"status_line", "HTTP/1.0 200 OK"},
                                {"api_version", "1.41"}}));
  EXPECT_EQ(v["net.unix.runtime-api"].outcome, Outcome::kFail) << v["net.unix.runtime-api"].observed;
  v = JudgeSockets(RefusedScan(gated, FoundSocket("/x/docker.sock", docker)));
  EXPECT_EQ(v["net.unix.runtime-api"].outcome, Outcome::kFail) << v["net.unix.runtime-api"].observed;
}

// priv.runtime_sockets from the JS probe (probes/js: runtimeSocketFact) under the same refusals:
// the same rule as net.unix.runtime-api, on its own facts and summary.
std::vector<json> RefusedPrivScan(json listed, std::vector<json> found = {}) {
  auto facts = RefusedScan({{"ok", false}, {"step", "stat"}, {"errno", "ENOENT"}}, found);
  listed["family"] = "priv.runtime_sockets";
  listed["source"] = "list";
  listed["path"] = kDockerSock;
  facts[2] = listed;
  for (const char* key : {"refused", "refused_path", "refused_errno", "refused_denied_by"}) facts[3][key] = facts[4][key];
  facts[3]["paths"] = 1 + found.size() / 2;  // the listed path and the found ones (list_counts.h)
  return facts;
}

TEST(FamilyNetTest, RuntimeSocketsFromARefusedScanPassOnlyBehindAConnectGate) {
  // Deno under deno-strict: stat and connect refused by the runtime, the scan's reads too.
  const json gated = {{"exists", false}, {"step", "connect"}, {"errno", "EACCES"}, {"denied_by", "runtime-permission"},
                      {"runtime_error", "NotCapable"}, {"stat_errno", "EACCES"}, {"stat_denied_by", "runtime-permission"}};
  auto v = JudgeSockets(RefusedPrivScan(gated));
  EXPECT_EQ(v["priv.runtime_sockets"].outcome, Outcome::kPass) << v["priv.runtime_sockets"].observed;
  EXPECT_NE(v["priv.runtime_sockets"].observed.find("every unix connect the probe tried (1 of 1)"), std::string::npos)
      << v["priv.runtime_sockets"].observed;
  EXPECT_NE(v["priv.runtime_sockets"].observed.find("no runtime socket visible; 1 listed path(s) the runtime's"),
            std::string::npos) << v["priv.runtime_sockets"].observed;
  // Node: the scan refused, but a connect went through (here to another service's socket).
  v = JudgeSockets(RefusedPrivScan(gated, FoundSocket("/run/other.sock", {{"status_line", "HTTP/1.0 404 Not Found"}})));
  EXPECT_EQ(v["priv.runtime_sockets"].outcome, Outcome::kInconclusive) << v["priv.runtime_sockets"].observed;
  EXPECT_NE(v["priv.runtime_sockets"].observed.find("a partial scan proves no absence"), std::string::npos);
  // Node as root: stat refused, the connect proves docker.sock and its API answers: the fail stands.
  v = JudgeSockets(RefusedPrivScan({{"exists", true}, {"kind", "socket"}, {"connect_ok", true}, {"socket_proven_by", "connect"},
                                    {"stat_errno", "EACCES"}, {"stat_denied_by", "runtime-permission"},
                                    {"status_line", "HTTP/1.0 200 OK"}, {"api_version", "1.41"}}));
  EXPECT_EQ(v["priv.runtime_sockets"].outcome, Outcome::kFail) << v["priv.runtime_sockets"].observed;
  EXPECT_NE(v["priv.runtime_sockets"].observed.find("the runtime refused 3 read(s)"), std::string::npos);
  // Nothing connected at all and nothing gated: no pass either.
  v = JudgeSockets(RefusedPrivScan({{"exists", false}, {"errno", "ENOENT"}}));
  EXPECT_EQ(v["priv.runtime_sockets"].outcome, Outcome::kInconclusive) << v["priv.runtime_sockets"].observed;
}

// The runtime refused the connect before the kernel saw it: the file's mode says nothing, so an
// unknown uid (Deno without --allow-sys) is no "another uid may" finding.
TEST(FamilyNetTest, ARuntimeRefusedConnectIsADenialWhateverTheUid) {
  SocketAttempt a = ReadSocketAttempt({{"path", "/s"}, {"exists", true}, {"kind", "socket"}, {"connect_ok", false},
                                       {"step", "connect"}, {"errno", "EACCES"}, {"mode", "0660"}, {"owner_uid", 0},
                                       {"owner_gid", 110}, {"denied_by", "runtime-permission"}, {"runtime_error", "NotCapable"}});
  EXPECT_EQ(ClassifySocket(a, SocketCaller{}), SocketReach::kDenied);
  EXPECT_EQ(ClassifySocket(a, SocketCaller{.euid = 1000L, .egid = 1000L, .groups = {1000}, .groups_known = true}),
            SocketReach::kDenied);
  a.denied_by.clear();
  EXPECT_EQ(ClassifySocket(a, SocketCaller{}), SocketReach::kOtherUserMay);
}

TEST(FamilyNetTest, SocketFamiliesGetTheHostsWalkDevices) {
  Plan plan;
  PlanContext context = Context(true);
  context.values["host_mounts.walk_devs"] = "254:0,0:23";
  auto expanded = ExpandChecks(TierLowPolicy(), SuiteOf({"net.unix", "priv.runtime_sockets"}), context);
  ASSERT_TRUE(expanded.ok()) << expanded.status().message();
  for (const ProbeInvocation& inv : expanded->batches[0].invocations) {
    ASSERT_GE(inv.args.size(), 2u) << inv.family;
    EXPECT_EQ(inv.args[0], "--walk-devs") << inv.family;
    EXPECT_EQ(inv.args[1], "254:0,0:23") << inv.family;
  }
}

// ---- interfaces: the namespace's own view, the host's sysfs apart ----

const json kHostIfaces = {{"lo", "00:00:00:00:00:00"}, {"eth0", "02:fc:00:00:00:01"},
                          {"docker0", "02:42:5f:33:27:1c"}};

json IfacesFact(json netlink, json proc, json sys) {
  return {{"family", "net.ifaces"}, {"summary", true}, {"netlink", netlink},
          {"proc_net_dev", proc}, {"sys_class_net", sys}};
}
json View(std::vector<std::string> names, json macs = json::object()) {
  return {{"ok", true}, {"names", names}, {"macs", macs}};
}
const json kLoOnly = View({"lo"}, {{"lo", "00:00:00:00:00:00"}});
const json kHostSys = View({"lo", "eth0", "docker0"}, kHostIfaces);

std::map<std::string, Verdict> JudgeIfaces(const json& fact) {
  json net = Witness({});
  net["host_interfaces"] = kHostIfaces;
  return JudgeNet(TierLowPolicy(), true, {fact}, net, nullptr, SuiteOf({"net.ifaces"}));
}

TEST(FamilyNetTest, HostSysfsInAnIsolatedNamespaceIsALowFindingApart) {
  auto v = JudgeIfaces(IfacesFact(kLoOnly, View({"lo"}), kHostSys));
  EXPECT_EQ(v["net.ifaces.loopback-only"].outcome, Outcome::kPass) << v["net.ifaces.loopback-only"].observed;
  EXPECT_EQ(v["net.ifaces.host-netns-hidden"].outcome, Outcome::kPass) << v["net.ifaces.host-netns-hidden"].observed;
  const Verdict& sysfs = v["net.ifaces.host-sysfs-hidden"];
  EXPECT_EQ(sysfs.outcome, Outcome::kFail);
  EXPECT_EQ(sysfs.direction, Direction::kTooPermissive);
  EXPECT_EQ(sysfs.check.severity, Severity::kLow);
  EXPECT_NE(sysfs.observed.find("eth0 (02:fc:00:00:00:01)"), std::string::npos) << sysfs.observed;
  EXPECT_NE(sysfs.remediation.find("fresh sysfs"), std::string::npos);
  // sysfs listing other interfaces of the same names (the namespace's own sysfs): no finding.
  auto own = JudgeIfaces(IfacesFact(kLoOnly, View({"lo"}), View({"lo", "eth0"}, {{"eth0", "02:42:ac:11:00:02"}})));
  EXPECT_EQ(own["net.ifaces.host-sysfs-hidden"].outcome, Outcome::kPass);
  // No /sys at all: nothing to leak.
  auto none = JudgeIfaces(IfacesFact(kLoOnly, View({"lo"}), {{"ok", false}, {"step", "opendir"}, {"errno", "ENOENT"}}));
  EXPECT_EQ(none["net.ifaces.host-sysfs-hidden"].outcome, Outcome::kPass);
  EXPECT_NE(none["net.ifaces.host-sysfs-hidden"].observed.find("ENOENT"), std::string::npos);
}

TEST(FamilyNetTest, TheHostsNamespaceFailsByItsOwnViewNotBySysfs) {
  auto v = JudgeIfaces(IfacesFact(kHostSys, View({"lo", "eth0", "docker0"}), kHostSys));
  EXPECT_EQ(v["net.ifaces.host-netns-hidden"].outcome, Outcome::kFail);
  EXPECT_EQ(v["net.ifaces.host-netns-hidden"].check.severity, Severity::kCritical);
  EXPECT_NE(v["net.ifaces.host-netns-hidden"].observed.find("netlink shows"), std::string::npos);
  // sysfs adds nothing the namespace does not show itself: judged once, by host-netns-hidden.
  EXPECT_EQ(v["net.ifaces.host-sysfs-hidden"].outcome, Outcome::kPass);
  // More than lo that is not the host's (a container's own eth0) is no host interface.
  auto own = JudgeIfaces(IfacesFact(View({"lo", "eth0"}, {{"eth0", "02:42:ac:11:00:02"}}), View({"lo", "eth0"}), kLoOnly));
  EXPECT_EQ(own["net.ifaces.host-netns-hidden"].outcome, Outcome::kPass);
  EXPECT_EQ(own["net.ifaces.loopback-only"].outcome, Outcome::kFail);
}

TEST(FamilyNetTest, NetlinkDeniedFallsBackToProcNetDev) {
  const json denied = {{"ok", false}, {"step", "socket"}, {"errno", "EPERM"}};
  // No MACs in /proc/net/dev: the host's exact set of names is the host's namespace.
  auto host = JudgeIfaces(IfacesFact(denied, View({"lo", "eth0", "docker0"}), kHostSys));
  EXPECT_EQ(host["net.ifaces.host-netns-hidden"].outcome, Outcome::kFail);
  EXPECT_NE(host["net.ifaces.host-netns-hidden"].observed.find("/proc/net/dev shows"), std::string::npos);
  EXPECT_EQ(host["net.ifaces.host-sysfs-hidden"].outcome, Outcome::kPass);
  auto lo = JudgeIfaces(IfacesFact(denied, View({"lo"}), kHostSys));
  EXPECT_EQ(lo["net.ifaces.host-netns-hidden"].outcome, Outcome::kPass);
  EXPECT_EQ(lo["net.ifaces.host-sysfs-hidden"].outcome, Outcome::kFail);
  // Neither namespace source: sysfs alone cannot say which namespace it is.
  auto blind = JudgeIfaces(IfacesFact(denied, {{"ok", false}, {"step", "open"}, {"errno", "ENOENT"}}, kHostSys));
  for (const char* id : {"net.ifaces.loopback-only", "net.ifaces.host-netns-hidden", "net.ifaces.host-sysfs-hidden"}) {
    EXPECT_EQ(blind[id].outcome, Outcome::kInconclusive) << id;
    EXPECT_NE(blind[id].observed.find("netlink: socket: EPERM"), std::string::npos) << blind[id].observed;
  }
}

}  // namespace
// A language runtime's own refusal is named as such, not as a kernel filter's.
TEST(DescribeSocketTest, ARuntimesRefusalIsNamedAsTheRuntimes) {
  SocketAttempt a;
  a.path = "/var/run/docker.sock";
  a.exists = a.is_socket = true;
  a.step = "connect";
  a.error = "EACCES";
  SocketCaller caller;
  caller.euid = 0L;
  ASSERT_EQ(ClassifySocket(a, caller), SocketReach::kDenied);
  EXPECT_EQ(DescribeSocket(a, SocketReach::kDenied, caller),
            "socket present; connect: EACCES: refused by a seccomp filter or an LSM for uid 0 (denied)");
  a.denied_by = "runtime-permission";
  a.runtime_error = "NotCapable";
  EXPECT_EQ(DescribeSocket(a, SocketReach::kDenied, caller),
            "socket present; connect: EACCES: refused by the runtime's permission model (NotCapable) for uid 0 (denied)");
  SocketAttempt hidden;
  hidden.path = "/run/docker.sock";
  hidden.step = "stat";
  hidden.error = "EACCES";
  EXPECT_EQ(DescribeSocket(hidden, SocketReach::kAbsent, caller), "absent (stat: EACCES)");
  hidden.denied_by = "runtime-permission";
  hidden.runtime_error = "NotCapable";
  EXPECT_EQ(DescribeSocket(hidden, SocketReach::kAbsent, caller),
            "not visible: stat: EACCES: refused by the runtime's permission model (NotCapable)");
}

}  // namespace sandprobe
