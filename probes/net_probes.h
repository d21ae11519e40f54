// The network probe families (net_inet.cc, net_dns.cc, net_unix.cc, net_ifaces.cc) and the
// endpoint syntax they share.
//
// Safety: the probe sends traffic only to the numeric addresses the runner passes it (the
// harness's own canaries on loopback or this machine's bridge). It never resolves a name, never
// reads /etc/resolv.conf, and every wait is capped (2 s per connect or reply) -- except net.lab,
// which resolves through /etc/resolv.conf only when it names a lab resolver (net_lab.cc).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probes/families.h"

namespace sandprobe {

inline constexpr int kNetWaitMs = 2000;    // connect / reply cap per endpoint
inline constexpr std::size_t kMaxNetEndpoints = 64;

// `NAME=ADDR:PORT`: NAME is the canary's name the host judges by ("loopback", "bridge"); ADDR
// is a numeric IPv4 address or a bracketed IPv6 one ("[::1]:53").
struct NetEndpoint {
  std::string name;
  std::string text;  // "ADDR:PORT" as given
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
};

std::optional<NetEndpoint> ParseNetEndpoint(const std::string& arg);
// "" or the usage error for a list of NAME=ADDR:PORT arguments.
std::string CheckEndpointArgs(const std::string& family, const FamilyArgs& args);
// What the probe sends to a canary: "sandprobe NONCE FAMILY NAME\n". The host recognises the
// run by the nonce; the family and name say which attempt it was.
std::string CanaryPayload(const std::string& nonce, const std::string& family,
                          const std::string& name);

// The DNS question net.dns asks: "<nonce>.sandprobe.test" (the nonce cut to one 63-byte label).
std::string CanaryQueryName(const std::string& nonce);
// A DNS query packet (RD set, one question, type A, class IN).
std::string BuildDnsQuery(unsigned short id, const std::string& name);
struct DnsReply {
  bool valid = false;       // a response to our id
  int rcode = -1;
  int answer_count = 0;
  std::vector<std::string> a_records;  // dotted quads of the A answers
};
DnsReply ParseDnsReply(const std::string& packet, unsigned short id);

// One RTM_NEWLINK of a netlink link dump: the interface's name and MAC ("" when it has none).
struct LinkInfo {
  std::string name;
  std::string mac;  // "02:42:ac:11:00:02", as /sys/class/net/*/address writes it
};
struct LinkDump {
  std::vector<LinkInfo> links;  // at most 256
  bool done = false;            // NLMSG_DONE seen
  int error = 0;                // errno from an NLMSG_ERROR, or EBADMSG for a malformed message
};
// Adds one recv()'s worth of netlink messages to `dump`; messages of another sequence number
// are ignored. Reads by copying, so `chunk` needs no alignment.
void ParseLinkDump(std::string_view chunk, std::uint32_t seq, LinkDump& dump);

// Runtime sockets net.unix always tries, besides the paths it is given.
const std::vector<std::string>& DefaultRuntimeSockets();

std::string CheckNetTcpArgs(const FamilyArgs& args);
std::string CheckNetUdpArgs(const FamilyArgs& args);
std::string CheckNetDnsArgs(const FamilyArgs& args);
std::string CheckNetUnixArgs(const FamilyArgs& args);
std::string CheckNetIfacesArgs(const FamilyArgs& args);
std::string CheckNetLabArgs(const FamilyArgs& args);
std::string CheckNetBypassArgs(const FamilyArgs& args);

// net.tcp NAME=ADDR:PORT...: non-blocking connect (2 s cap), send the canary payload, wait
// up to 2 s for the canary's ack line.
void RunNetTcp(const ProbeContext& ctx, const FamilyArgs& args);
// net.udp NAME=ADDR:PORT...: one datagram with the payload; wait up to 2 s for an ack.
void RunNetUdp(const ProbeContext& ctx, const FamilyArgs& args);
// net.dns NAME=ADDR:PORT...: an A query for <nonce>.sandprobe.test to each given responder.
void RunNetDns(const ProbeContext& ctx, const FamilyArgs& args);
// net.unix [--walk-devs MAJOR:MINOR,...] [PATH...]: the default runtime sockets plus PATHs,
// then every other socket the sandbox can see (unix_sockets.h): stat, connect, at most one
// read-only `GET /_ping HTTP/1.0` (and an HTTP/2 preface when no HTTP/1 answer came); one fact
// per socket, then a summary.
void RunNetUnix(const ProbeContext& ctx, const FamilyArgs& args);
// net.ifaces: interfaces from a netlink RTM_GETLINK dump (with MACs), /proc/net/dev (names)
// and /sys/class/net (names, MACs), each reported as its own source with its errno.
void RunNetIfaces(const ProbeContext& ctx, const FamilyArgs& args);
// net.lab NAME...: in the egress lab only (net_lab.cc): getaddrinfo each name, then one HTTP
// request with Host: NAME and the nonce to its first (documentation-range) address; the only
// family that resolves names, and only through a resolver in a documentation range.
void RunNetLab(const ProbeContext& ctx, const FamilyArgs& args);
// net.bypass VARIANT=SPELLING...: the same for spellings of a denied destination (numeric forms
// of an address, a trailing dot, mixed case); the request's target ends in /VARIANT.
void RunNetBypass(const ProbeContext& ctx, const FamilyArgs& args);

}  // namespace sandprobe
