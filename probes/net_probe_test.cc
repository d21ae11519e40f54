// Unit tests for the network probes' parsing: endpoints and DNS packets.
#include <arpa/inet.h>

#include <gtest/gtest.h>

#include "probes/net_probes.h"

namespace sandprobe {
namespace {

TEST(NetProbeTest, ParsesNumericEndpointsOnly) {
  auto v4 = ParseNetEndpoint("loopback=127.0.0.1:4000");
  ASSERT_TRUE(v4);
  EXPECT_EQ(v4->name, "loopback");
  EXPECT_EQ(v4->text, "127.0.0.1:4000");
  EXPECT_EQ(ntohs(reinterpret_cast<sockaddr_in*>(&v4->addr)->sin_port), 4000);
  auto v6 = ParseNetEndpoint("lo6=[::1]:53");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->addr.ss_family, AF_INET6);
  for (const char* bad : {"127.0.0.1:80", "x=localhost:80", "x=127.0.0.1:0", "x=127.0.0.1:65536",
                          "x=127.0.0.1", "=127.0.0.1:80", "x=1.2.3.4:8a"}) {
    EXPECT_FALSE(ParseNetEndpoint(bad)) << bad;
  }
  EXPECT_NE(CheckEndpointArgs("net.tcp", {"x=example.com:80"}), "");
  EXPECT_NE(CheckEndpointArgs("net.tcp", {}), "");
}

TEST(NetProbeTest, QueryNameCarriesTheNonceInOneLabel) {
  EXPECT_EQ(CanaryQueryName("abc123"), "abc123.sandprobe.test");
  EXPECT_EQ(CanaryQueryName(std::string(100, 'a')), std::string(63, 'a') + ".sandprobe.test");
}

TEST(NetProbeTest, DnsQueryAndReplyRoundTrip) {
  const std::string q = BuildDnsQuery(0x1234, "n0nce.sandprobe.test");
  ASSERT_GT(q.size(), 12u);
  EXPECT_EQ(q.substr(12, 6), std::string("\x05n0nce", 6));
  // A reply: the query with QR set, one answer (pointer to the question) A 127.0.0.1.
  std::string r = q;
  r[2] = static_cast<char>(0x84);
  r[7] = 1;
  r += std::string{static_cast<char>(0xC0), 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 127, 0, 0, 1};
  DnsReply reply = ParseDnsReply(r, 0x1234);
  EXPECT_TRUE(reply.valid);
  EXPECT_EQ(reply.rcode, 0);
  EXPECT_EQ(reply.a_records, std::vector<std::string>{"127.0.0.1"});
  EXPECT_FALSE(ParseDnsReply(r, 0x4321).valid);  // someone else's id
  EXPECT_FALSE(ParseDnsReply(q, 0x1234).valid);  // not a response
  EXPECT_FALSE(ParseDnsReply(r.substr(0, 30), 0x1234).a_records.size());  // truncated: no crash
}

}  // namespace
}  // namespace sandprobe
