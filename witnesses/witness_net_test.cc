// CanaryListeners on loopback: what they log, what they answer, and that they are gone after.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include <gtest/gtest.h>

#include "launch/fake_launcher.h"
#include "witnesses/witness.h"
#include "witnesses/witness_net.h"

namespace sandprobe {
namespace {

sockaddr_in Addr(const std::string& text) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  const std::size_t colon = text.rfind(':');
  sa.sin_port = htons(static_cast<uint16_t>(std::stoi(text.substr(colon + 1))));
  inet_pton(AF_INET, text.substr(0, colon).c_str(), &sa.sin_addr);
  return sa;
}

// Sends `payload` and returns the reply (up to 2 s), "" when none.
std::string Exchange(int type, const std::string& addr, const std::string& payload) {
  int fd = ::socket(AF_INET, type, 0);
  sockaddr_in sa = Addr(addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    ::close(fd);
    return "connect failed";
  }
  ::send(fd, payload.data(), payload.size(), MSG_NOSIGNAL);
  pollfd p{fd, POLLIN, 0};
  std::string reply;
  if (::poll(&p, 1, 2000) == 1) {
    char buf[512];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) reply.assign(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return reply;
}

std::vector<CanaryReceipt> WaitForReceipts(const CanaryListeners& l, std::size_t n) {
  for (int i = 0; i < 100; ++i) {
    auto got = l.Receipts();
    if (got.size() >= n) return got;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return l.Receipts();
}

TEST(WitnessNetTest, ParsesOnlyCanaryPayloads) {
  std::string nonce, detail;
  EXPECT_TRUE(ParseCanaryPayload("sandprobe abc-1 net.tcp loopback\n", nonce, detail));
  EXPECT_EQ(nonce, "abc-1");
  EXPECT_EQ(detail, "net.tcp loopback");
  EXPECT_FALSE(ParseCanaryPayload("GET / HTTP/1.0\r\n", nonce, detail));
  EXPECT_FALSE(ParseCanaryPayload("sandprobe a/b net.tcp x\n", nonce, detail));
  EXPECT_FALSE(ParseCanaryPayload("sandprobe  x\n", nonce, detail));
}

TEST(WitnessNetTest, LogsTcpUdpAndDnsWithTheNonceAndPeerThenCloses) {
  std::map<std::string, std::string> endpoints;
  {
    auto started = CanaryListeners::Start({{"loopback", "127.0.0.1"}});
    ASSERT_TRUE(started.ok()) << started.status().message();
    CanaryListeners& l = **started;
    endpoints = l.endpoints();
    ASSERT_EQ(endpoints.size(), 3u);
    EXPECT_EQ(Exchange(SOCK_STREAM, endpoints["loopback-tcp"], "sandprobe n1 net.tcp loopback\n"),
              "sandprobe-ack\n");
    EXPECT_EQ(Exchange(SOCK_DGRAM, endpoints["loopback-udp"], "sandprobe n2 net.udp loopback\n"),
              "sandprobe-ack\n");
    const std::string query = std::string("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", 12) +
                              "\x02n3\x09sandprobe\x04test" + std::string("\x00\x00\x01\x00\x01", 5);
    std::string answer = Exchange(SOCK_DGRAM, endpoints["loopback-dns"], query);
    ASSERT_GE(answer.size(), query.size() + 16);
    EXPECT_EQ(answer.substr(answer.size() - 4), std::string("\x7f\x00\x00\x01", 4));
    EXPECT_EQ(Exchange(SOCK_DGRAM, endpoints["loopback-udp"], "hello\n"), "");  // no reply to junk

    auto got = WaitForReceipts(l, 4);
    ASSERT_EQ(got.size(), 4u);
    std::map<std::string, std::string> nonce_by_endpoint;
    for (const CanaryReceipt& r : got) {
      EXPECT_EQ(r.peer.rfind("127.0.0.1:", 0), 0u) << r.peer;
      if (!r.nonce.empty()) nonce_by_endpoint[r.endpoint] = r.nonce;
    }
    EXPECT_EQ(nonce_by_endpoint["loopback-tcp"], "n1");
    EXPECT_EQ(nonce_by_endpoint["loopback-udp"], "n2");
    EXPECT_EQ(nonce_by_endpoint["loopback-dns"], "n3");
  }
  // Destroyed: the TCP port refuses connections.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa = Addr(endpoints["loopback-tcp"]);
  EXPECT_NE(::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  ::close(fd);
}

TEST(WitnessNetTest, RefusesNamesOutsideItsZone) {
  std::string qname;
  const std::string query = std::string("\x00\x01\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", 12) +
                            "\x07" "example\x03" "com" + std::string("\x00\x00\x01\x00\x01", 5);
  std::string answer = AnswerDnsQuery(query, qname);
  EXPECT_EQ(qname, "example.com");
  ASSERT_GE(answer.size(), 12u);
  EXPECT_EQ(answer[3] & 0x0F, 5);  // REFUSED, no answer record
  EXPECT_EQ(answer.size(), query.size());
  EXPECT_EQ(AnswerDnsQuery("short", qname), "");
}

TEST(WitnessNetTest, AnAddressThisMachineDoesNotOwnIsAnError) {
  auto started = CanaryListeners::Start({{"bridge", "203.0.113.254"}});  // TEST-NET-3: bind only, nothing sent
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.status().message().find("bridge"), std::string::npos);
}

TEST(NetWitnessTest, OnlyDockersSandboxesNeedDockersBridgeAnswer) {
  for (const NamedValue<Backend>& backend : kBackendNames) {
    const bool docker_runs_it = backend.value == Backend::kDocker || backend.value == Backend::kGvisor;
    EXPECT_EQ(BridgeNeedsDockersAnswer(backend.value), docker_runs_it) << backend.name;
  }
}

// dockerd makes docker0; scripts/setup.sh starts it, so CI (backends required) never skips.
constexpr const char* kNoDocker0 = "no docker0 with an IPv4 address on this host (dockerd not running?)";

// The tests that need docker0's address: skipped without it (failed when backends are required).
class NetWitnessOnDocker0Test : public ::testing::Test {
 protected:
  void SetUp() override {
    docker0_ = InterfaceIpv4("docker0");
    if (!docker0_.empty()) return;
    if (std::getenv("SANDPROBE_REQUIRE_BACKENDS") != nullptr) FAIL() << kNoDocker0;
    GTEST_SKIP() << kNoDocker0;
  }
  std::string docker0_;
};

// The net witness's row; the table always has one.
const WitnessRow& NetRow() { return *FindWitness("net"); }

// A bwrap sandbox reaches no docker network: its bridge canary takes docker0's address from
// the host's interface table, and docker is not asked.
TEST_F(NetWitnessOnDocker0Test, BridgeAddressFromTheHostAndDockerIsNotAskedForBwrap) {
  Profile bwrap;
  bwrap.backend = Backend::kBwrap;
  testing::FakeLauncher launcher;
  auto witness = NetRow().start(WitnessSetup{"r", "/nonexistent", bwrap, launcher, "token"});
  ASSERT_TRUE(witness.ok()) << witness.status().message();
  EXPECT_EQ((*witness)->PlanValues().count("bridge-tcp"), 1u);
  nlohmann::json seen = (*witness)->Collect();
  EXPECT_TRUE(launcher.specs.empty()) << "asked: " << launcher.specs.front().argv[0];
  EXPECT_EQ(seen.value("bridge_source", "").rfind("host interface docker0 (", 0), 0u) << seen.dump();
}

// A docker sandbox gets docker0's address at once, and docker is asked beside the launches:
// the bridge checks stand only when docker names the same gateway. Otherwise (another address,
// or no answer) the bridge endpoints are withdrawn and the reason is the skip's.
TEST_F(NetWitnessOnDocker0Test, DockerSandboxesKeepTheBridgeOnlyWhenDockerConfirmsIt) {
  const std::string& docker0 = docker0_;
  Profile docker;
  docker.backend = Backend::kDocker;
  struct Case {
    LaunchResult reply;
    bool kept;
    std::string why;
  } cases[] = {
      {testing::Exit(0, docker0 + " |docker0\n", ""), true, ""},
      {testing::Exit(0, "10.99.0.1 |br-other\n", ""), false, "docker's bridge gateway is 10.99.0.1, not the address of docker0"},
      {testing::Exit(1, "", "no daemon"), false, "no bridge canary: docker network inspect"},
  };
  for (const Case& c : cases) {
    testing::FakeLauncher launcher;
    launcher.replies.push_back(c.reply);
    auto witness = NetRow().start(WitnessSetup{"r", "/nonexistent", docker, launcher, "token"});
    ASSERT_TRUE(witness.ok()) << witness.status().message();
    EXPECT_EQ((*witness)->PlanValues().at("bridge-tcp").rfind(docker0 + ":", 0), 0u);
    nlohmann::json seen = (*witness)->Collect();
    ASSERT_EQ(launcher.specs.size(), 1u);
    EXPECT_EQ(launcher.specs[0].argv[0], "docker");
    EXPECT_EQ(launcher.specs[0].extra_env, (std::vector<std::pair<std::string, std::string>>{{"GOMAXPROCS", "1"}}))
        << "beside the launches, docker's CLI is kept to one CPU (HostCommandSpec)";
    EXPECT_EQ(seen["endpoints"].contains("bridge-tcp"), c.kept) << seen.dump();
    EXPECT_EQ(seen.contains("bridge_source"), c.kept) << seen.dump();
    if (!c.kept) {
      EXPECT_NE(seen.value("bridge_unavailable", "").find(c.why), std::string::npos) << seen.dump();
    }
  }
}

// Where the docker CLI would ask the default socket, the witness asks docker's Engine API there
// (WitnessSetup::docker_engine) and runs no CLI; the same rule keeps or withdraws the bridge.
// When the API cannot answer (a socket the harness may not open), the CLI is asked as before.
TEST_F(NetWitnessOnDocker0Test, DockersApiAnswersWithoutTheCliAndTheCliIsTheFallback) {
  const std::string& docker0 = docker0_;
  Profile docker;
  docker.backend = Backend::kDocker;
  auto network = [](const std::string& gateway) {
    return nlohmann::json{{"Name", "bridge"},
                          {"IPAM", {{"Config", {{{"Subnet", "fd00::/64"}, {"Gateway", "fd00::1"}},
                                                {{"Subnet", "10.0.0.0/8"}, {"Gateway", gateway}}}}}},
                          {"Options", {{"com.docker.network.bridge.name", "docker0"}}}};
  };
  struct Case {
    StatusOr<nlohmann::json> answer;
    bool kept;
    std::string source_or_why;
    std::size_t cli_calls;
  } cases[] = {
      {network(docker0), true, "confirmed by docker's API (GET /networks/bridge)", 0},
      {network("10.99.0.1"), false, "docker's bridge gateway is 10.99.0.1", 0},
      {Status::Error("GET /networks/bridge on unix:///var/run/docker.sock: connect: Permission denied"), true,
       "confirmed by docker network inspect bridge", 1},
      // An answer of another shape names no gateway: the bridge is withdrawn, nothing throws.
      {nlohmann::json{{"IPAM", nullptr}, {"Options", {{"com.docker.network.bridge.name", 7}}}}, false,
       "names no IPv4 gateway", 0},
      {nlohmann::json{{"IPAM", {{"Config", {{{"Gateway", 1}}, "x"}}}}, {"Options", nullptr}}, false,
       "names no IPv4 gateway", 0},
      {nlohmann::json::array(), false, "names no IPv4 gateway", 0},
  };
  for (const Case& c : cases) {
    testing::FakeLauncher launcher;
    launcher.replies.push_back(testing::Exit(0, docker0 + " |docker0\n", ""));
    std::vector<std::string> asked;
    WitnessSetup setup{"r", "/nonexistent", docker, launcher, "token"};
    setup.docker_engine = [&](const std::string& target, std::chrono::milliseconds) {
      asked.push_back(target);
      return c.answer;
    };
    auto witness = NetRow().start(setup);
    ASSERT_TRUE(witness.ok()) << witness.status().message();
    nlohmann::json seen = (*witness)->Collect();
    EXPECT_EQ(asked, std::vector<std::string>{"/networks/bridge"});
    EXPECT_EQ(launcher.specs.size(), c.cli_calls) << seen.dump();
    EXPECT_EQ(seen["endpoints"].contains("bridge-tcp"), c.kept) << seen.dump();
    const std::string said = c.kept ? seen.value("bridge_source", "") : seen.value("bridge_unavailable", "");
    EXPECT_NE(said.find(c.source_or_why), std::string::npos) << seen.dump();
  }
}

// The witness's own host command shares the run's deadline: with 1.5 s left it gets 1.5 s, not
// its own 10 s; with nothing left it does not start, and the report says why.
TEST(NetWitnessTest, DockersAnswerIsBoundedByTheRunsDeadline) {
  Profile docker;
  docker.backend = Backend::kDocker;
  std::chrono::steady_clock::time_point now{};
  Deadline deadline(std::chrono::milliseconds(1500), [&now] { return now; });
  testing::FakeLauncher launcher;
  launcher.replies.push_back(testing::Exit(1, "", "no daemon"));
  {
    auto witness = NetRow().start(WitnessSetup{"r", "/nonexistent", docker, launcher, "token", &deadline});
    ASSERT_TRUE(witness.ok()) << witness.status().message();
    (*witness)->Collect();  // docker may be asked beside the launches: its answer is in by now
    ASSERT_EQ(launcher.specs.size(), 1u);
    EXPECT_EQ(launcher.specs[0].timeout, std::chrono::milliseconds(1500));
  }
  now += std::chrono::seconds(2);
  auto witness = NetRow().start(WitnessSetup{"r", "/nonexistent", docker, launcher, "token", &deadline});
  ASSERT_TRUE(witness.ok()) << witness.status().message();
  EXPECT_EQ(launcher.specs.size(), 1u) << "docker was asked after the run's deadline";
  EXPECT_NE((*witness)->Collect().dump().find("the run's deadline had passed"), std::string::npos)
      << (*witness)->Collect().dump();
}

}  // namespace
}  // namespace sandprobe
