// Unit tests for the network probes' parsing: endpoints, DNS packets and netlink link dumps.
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <cstring>

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

// One netlink message as the kernel lays it out: header, payload, padding to 4 bytes.
std::string NetlinkMessage(std::uint16_t type, std::uint32_t seq, const std::string& payload) {
  nlmsghdr h{};
  h.nlmsg_len = static_cast<std::uint32_t>(NLMSG_LENGTH(payload.size()));
  h.nlmsg_type = type;
  h.nlmsg_seq = seq;
  std::string out(reinterpret_cast<const char*>(&h), sizeof h);
  out += payload;
  out.resize(NLMSG_ALIGN(out.size()), '\0');
  return out;
}

std::string Attr(std::uint16_t type, const std::string& data) {
  rtattr a{};
  a.rta_len = static_cast<unsigned short>(RTA_LENGTH(data.size()));
  a.rta_type = type;
  std::string out(reinterpret_cast<const char*>(&a), sizeof a);
  out += data;
  out.resize(RTA_ALIGN(out.size()), '\0');
  return out;
}

std::string Link(std::uint32_t seq, const std::string& name, const std::string& mac) {
  ifinfomsg info{};
  std::string payload(reinterpret_cast<const char*>(&info), sizeof info);
  payload += Attr(IFLA_IFNAME, name + '\0');
  if (!mac.empty()) payload += Attr(IFLA_ADDRESS, mac);
  payload += Attr(IFLA_MTU, std::string(4, '\0'));
  return NetlinkMessage(RTM_NEWLINK, seq, payload);
}

TEST(NetProbeTest, ParsesALinkDumpAcrossReads) {
  LinkDump dump;
  // A message of another sequence number is someone else's: ignored.
  ParseLinkDump(Link(1, "lo", std::string(6, '\0')) + Link(7, "other", ""), 1, dump);
  EXPECT_FALSE(dump.done);
  ParseLinkDump(Link(1, "eth0", std::string("\x02\xfc\x00\x00\x00\x01", 6)) + Link(1, "tun0", "") +
                    NetlinkMessage(NLMSG_DONE, 1, std::string(4, '\0')),
                1, dump);
  EXPECT_TRUE(dump.done);
  EXPECT_EQ(dump.error, 0);
  ASSERT_EQ(dump.links.size(), 3u);
  EXPECT_EQ(dump.links[0].name, "lo");
  EXPECT_EQ(dump.links[0].mac, "00:00:00:00:00:00");
  EXPECT_EQ(dump.links[1].name, "eth0");
  EXPECT_EQ(dump.links[1].mac, "02:fc:00:00:00:01");  // the format of /sys/class/net/*/address
  EXPECT_EQ(dump.links[2].mac, "");
}

TEST(NetProbeTest, LinkDumpErrorsAndTruncationAreFacts) {
  LinkDump denied;
  int err = -EPERM;
  ParseLinkDump(NetlinkMessage(NLMSG_ERROR, 1, std::string(reinterpret_cast<const char*>(&err), sizeof err) +
                                                   std::string(sizeof(nlmsghdr), '\0')),
                1, denied);
  EXPECT_EQ(denied.error, EPERM);
  LinkDump cut;
  const std::string whole = Link(1, "eth0", std::string("\x02\x42\x00\x00\x00\x01", 6));
  ParseLinkDump(whole.substr(0, whole.size() - 8), 1, cut);
  EXPECT_EQ(cut.error, EBADMSG);
  EXPECT_TRUE(cut.links.empty());
}

}  // namespace
}  // namespace sandprobe
