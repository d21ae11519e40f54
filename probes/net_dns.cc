// net.dns: can the sandbox get a DNS question out? The query names this run's nonce
// (<nonce>.sandprobe.test) and goes only to the responders the runner names, which are the
// harness's own canary responders: never a server from /etc/resolv.conf, never a lookup
// through libc (the probe is static and NSS-free).
#include <arpa/inet.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>

#include <nlohmann/json.hpp>

#include "contract/protocol.h"
#include "contract/errno_name.h"
#include "probes/net_probes.h"

namespace sandprobe {
namespace {

using nlohmann::json;

constexpr std::size_t kDnsHeader = 12;
constexpr int kMaxAnswers = 16;
const char* kRcodeNames[] = {"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"};

unsigned Get16(const std::string& p, std::size_t at) {
  return (static_cast<unsigned char>(p[at]) << 8) | static_cast<unsigned char>(p[at + 1]);
}

// Skips a (possibly compressed) name; returns the offset after it, or npos.
std::size_t SkipName(const std::string& p, std::size_t at) {
  for (int labels = 0; labels < 128 && at < p.size(); ++labels) {
    const auto len = static_cast<unsigned char>(p[at]);
    if (len == 0) return at + 1;
    if ((len & 0xC0) == 0xC0) return at + 2 <= p.size() ? at + 2 : std::string::npos;
    at += 1 + len;
  }
  return std::string::npos;
}

unsigned short QueryId(const std::string& nonce) {
  unsigned short id = 0x5350;
  for (char c : nonce) id = static_cast<unsigned short>(id * 31 + static_cast<unsigned char>(c));
  return id;
}

json Ask(const ProbeContext& ctx, const NetEndpoint& ep) {
  const std::string qname = CanaryQueryName(ctx.nonce);
  json fact = {{"family", "net.dns"}, {"path", ep.name}, {"server", ep.text},
               {"qname", qname},     {"nonce", ctx.nonce}};
  auto fail = [&](const char* step, int err) {
    fact["ok"] = false;
    fact["step"] = step;
    fact["errno"] = ErrnoName(err);
    return fact;
  };
  const unsigned short id = QueryId(ctx.nonce);
  const std::string query = BuildDnsQuery(id, qname);
  int fd = ::socket(ep.addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail("socket", errno);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&ep.addr), ep.addr_len) != 0) {
    int err = errno;
    ::close(fd);
    return fail("connect", err);
  }
  const ssize_t sent = ::send(fd, query.data(), query.size(), 0);
  if (sent != static_cast<ssize_t>(query.size())) {
    int err = sent < 0 ? errno : EMSGSIZE;
    ::close(fd);
    return fail("send", err);
  }
  fact["sent"] = sent;  // bytes, as net.tcp and net.udp report it
  pollfd p{fd, POLLIN, 0};
  int ready = -1;
  for (int tries = 0; tries < 8 && ready < 0; ++tries) {
    ready = ::poll(&p, 1, kNetWaitMs);
    if (ready < 0 && errno != EINTR) break;
  }
  if (ready <= 0) {
    ::close(fd);
    return fail("reply", ETIMEDOUT);
  }
  std::string packet(512, '\0');
  ssize_t n = ::recv(fd, packet.data(), packet.size(), MSG_DONTWAIT);
  int err = errno;
  ::close(fd);
  if (n < 0) return fail("reply", err);
  packet.resize(static_cast<std::size_t>(n));
  DnsReply reply = ParseDnsReply(packet, id);
  if (!reply.valid) return fail("reply", EBADMSG);
  fact["ok"] = true;
  fact["rcode"] = reply.rcode < 6 ? kRcodeNames[reply.rcode] : std::to_string(reply.rcode);
  fact["answers"] = reply.a_records;
  return fact;
}

}  // namespace

std::string CanaryQueryName(const std::string& nonce) {
  return nonce.substr(0, 63) + "." + std::string(kDnsZone);
}

std::string BuildDnsQuery(unsigned short id, const std::string& name) {
  std::string q = {static_cast<char>(id >> 8), static_cast<char>(id & 0xFF),
                   0x01, 0x00,  // RD
                   0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t dot = name.find('.', start);
    if (dot == std::string::npos) dot = name.size();
    const std::string label = name.substr(start, std::min<std::size_t>(dot - start, 63));
    if (!label.empty()) q += static_cast<char>(label.size()) + label;
    start = dot + 1;
  }
  q += std::string{0x00, 0x00, 0x01, 0x00, 0x01};  // root, type A, class IN
  return q;
}

DnsReply ParseDnsReply(const std::string& p, unsigned short id) {
  DnsReply reply;
  if (p.size() < kDnsHeader || Get16(p, 0) != id || (p[2] & 0x80) == 0) return reply;
  reply.valid = true;
  reply.rcode = p[3] & 0x0F;
  const unsigned questions = Get16(p, 4);
  reply.answer_count = static_cast<int>(Get16(p, 6));
  std::size_t at = kDnsHeader;
  for (unsigned i = 0; i < questions && i < 4 && at != std::string::npos; ++i) {
    at = SkipName(p, at);
    if (at != std::string::npos) at += 4;
  }
  for (int i = 0; i < reply.answer_count && i < kMaxAnswers; ++i) {
    if (at == std::string::npos) break;
    at = SkipName(p, at);
    if (at == std::string::npos || at + 10 > p.size()) break;
    const unsigned type = Get16(p, at), rdlen = Get16(p, at + 8);
    at += 10;
    if (at + rdlen > p.size()) break;
    if (type == 1 && rdlen == 4) {
      char text[INET_ADDRSTRLEN];
      ::inet_ntop(AF_INET, p.data() + at, text, sizeof text);
      reply.a_records.emplace_back(text);
    }
    at += rdlen;
  }
  return reply;
}

std::string CheckNetDnsArgs(const FamilyArgs& args) { return CheckEndpointArgs("net.dns", args); }

void RunNetDns(const ProbeContext& ctx, const FamilyArgs& args) {
  for (const std::string& arg : args) ctx.out.Emit(Ask(ctx, *ParseNetEndpoint(arg)));
}

}  // namespace sandprobe
