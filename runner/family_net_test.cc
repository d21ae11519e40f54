// The network families' expansion and judgement, with the canary witness's observations made
// up: a leak counts only by receipt of this launch's nonce, both directions, skips with reasons;
// a runtime socket gets one judgement in net.unix and priv.runtime_sockets.
#include <gtest/gtest.h>

#include "runner/evaluate.h"
#include "runner/plan.h"
#include "runner/runtime_socket_judgement.h"
#include "runner/test_policies.h"

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
  BatchResult result{.state = BatchResult::State::kRan, .launch_id = "L1", .complete = true};
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
  policy.network.allow = {"loopback-tcp", "pypi.org:443"};
  auto v = JudgeNet(policy, true, {TcpFact("loopback", false), TcpFact("bridge", false)}, Witness({}));
  EXPECT_EQ(v["net.tcp.allowed:loopback"].outcome, Outcome::kFail);
  EXPECT_EQ(v["net.tcp.allowed:loopback"].direction, Direction::kTooRestrictive);
  EXPECT_EQ(v["net.tcp.denied:bridge"].outcome, Outcome::kPass);
  EXPECT_EQ(v["net.allow.untested:pypi.org:443"].outcome, Outcome::kSkip);
}

TEST(FamilyNetTest, EgressAllowCoversTheBridgeButNotTheHostLoopback) {
  Policy policy = TierLowPolicy();
  policy.network.egress = "allow";
  const json ours = {{"endpoint", "bridge-tcp"}, {"peer", "172.17.0.2:3"}, {"nonce", kNonce}};
  auto v = JudgeNet(policy, true, {TcpFact("loopback", false), TcpFact("bridge", true)}, Witness({ours}));
  EXPECT_EQ(v["net.tcp.allowed:bridge"].outcome, Outcome::kPass);
  EXPECT_EQ(v["net.tcp.denied:loopback"].outcome, Outcome::kPass);
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

TEST(FamilyNetTest, EaccesForANonRootProbeIsAMediumFindingInBothFamilies) {
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
  EXPECT_EQ(ClassifySocket(a, std::nullopt), SocketReach::kOtherUserMay);
  EXPECT_EQ(ClassifySocket(a, 0L), SocketReach::kDenied);
  a.error = "EAGAIN";  // a full backlog: the connect was permitted
  EXPECT_EQ(ClassifySocket(a, 1000L), SocketReach::kReachable);
}

}  // namespace
}  // namespace sandprobe
