// net.tcp and net.udp: does traffic from inside the sandbox reach the harness's canaries?
//
// The probe's own view ("connected", "sent", "acked") is reported as a fact, but it proves
// nothing by itself: a transparent proxy can accept any connection. Egress is proven on the
// host, when the canary listener logs this run's nonce (witnesses/witness_net.cc).
#include <arpa/inet.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <nlohmann/json.hpp>

#include "contract/errno_name.h"
#include "probes/net_probes.h"

namespace sandprobe {
namespace {

using nlohmann::json;

long ElapsedMs(std::chrono::steady_clock::time_point since) {
  return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::steady_clock::now() - since)
                               .count());
}

// Waits for `events` on fd, at most kNetWaitMs; returns the revents (0 on timeout).
short WaitFor(int fd, short events) {
  pollfd p{fd, events, 0};
  for (int tries = 0; tries < 8; ++tries) {  // EINTR retries, bounded
    int n = ::poll(&p, 1, kNetWaitMs);
    if (n >= 0) return n == 0 ? 0 : p.revents;
    if (errno != EINTR) return POLLERR;
  }
  return 0;
}

void Fail(json& fact, const char* step, int err) {
  fact["ok"] = false;
  fact["step"] = step;
  fact["errno"] = ErrnoName(err);
}

// Reads the canary's one-line ack (if any) after the payload went out.
void ReadAck(int fd, json& fact) {
  fact["acked"] = false;
  if ((WaitFor(fd, POLLIN) & (POLLIN | POLLERR | POLLHUP)) == 0) return;
  char buf[64];
  ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
  if (n < 0) {
    fact["ack_errno"] = ErrnoName(errno);  // ECONNREFUSED on UDP: an ICMP port unreachable
    return;
  }
  fact["acked"] = n >= 13 && std::memcmp(buf, "sandprobe-ack", 13) == 0;
}

// Sends the canary payload on a connected socket; ok once it is all sent, then the
// listener's acknowledgement (if any) is read into the fact.
void SendCanary(int fd, const std::string& payload, int flags, json& fact) {
  ssize_t sent = ::send(fd, payload.data(), payload.size(), flags);
  if (sent != static_cast<ssize_t>(payload.size())) {
    Fail(fact, "send", sent < 0 ? errno : EMSGSIZE);
    return;
  }
  fact["ok"] = true;
  fact["sent"] = sent;
  ReadAck(fd, fact);
}

json TryTcp(const ProbeContext& ctx, const NetEndpoint& ep) {
  json fact = {{"family", "net.tcp"}, {"path", ep.name}, {"addr", ep.text}, {"nonce", ctx.nonce}};
  const auto start = std::chrono::steady_clock::now();
  int fd = ::socket(ep.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    Fail(fact, "socket", errno);
    return fact;
  }
  int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&ep.addr), ep.addr_len);
  int err = rc == 0 ? 0 : errno;
  if (rc != 0 && err == EINPROGRESS) {
    short revents = WaitFor(fd, POLLOUT);
    socklen_t len = sizeof err;
    if (revents == 0) {
      err = ETIMEDOUT;
    } else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
      err = errno;
    }
  }
  fact["connect_ms"] = ElapsedMs(start);
  if (err != 0) {
    Fail(fact, "connect", err);
    ::close(fd);
    return fact;
  }
  fact["connected"] = true;
  SendCanary(fd, CanaryPayload(ctx.nonce, "net.tcp", ep.name), MSG_NOSIGNAL, fact);
  ::close(fd);
  return fact;
}

json TryUdp(const ProbeContext& ctx, const NetEndpoint& ep) {
  json fact = {{"family", "net.udp"}, {"path", ep.name}, {"addr", ep.text}, {"nonce", ctx.nonce}};
  int fd = ::socket(ep.addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    Fail(fact, "socket", errno);
    return fact;
  }
  // connect() on UDP only fixes the peer, so an ICMP unreachable comes back as ECONNREFUSED.
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&ep.addr), ep.addr_len) != 0) {
    Fail(fact, "connect", errno);
    ::close(fd);
    return fact;
  }
  SendCanary(fd, CanaryPayload(ctx.nonce, "net.udp", ep.name), 0, fact);
  ::close(fd);
  return fact;
}

bool ParsePort(const std::string& text, in_port_t& port) {
  if (text.empty() || text.size() > 5) return false;
  unsigned long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<unsigned long>(c - '0');
  }
  if (value == 0 || value > 65535) return false;
  port = htons(static_cast<in_port_t>(value));
  return true;
}

}  // namespace

std::optional<NetEndpoint> ParseNetEndpoint(const std::string& arg) {
  const std::size_t eq = arg.find('=');
  const std::size_t colon = arg.rfind(':');
  if (eq == std::string::npos || eq == 0 || colon == std::string::npos || colon < eq) {
    return std::nullopt;
  }
  NetEndpoint ep;
  ep.name = arg.substr(0, eq);
  ep.text = arg.substr(eq + 1);
  std::string host = arg.substr(eq + 1, colon - eq - 1);
  in_port_t port = 0;
  if (!ParsePort(arg.substr(colon + 1), port)) return std::nullopt;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&ep.addr);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = port;
    if (::inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &v6->sin6_addr) != 1) {
      return std::nullopt;
    }
    ep.addr_len = sizeof(sockaddr_in6);
    return ep;
  }
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ep.addr);
  v4->sin_family = AF_INET;
  v4->sin_port = port;
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) != 1) return std::nullopt;
  ep.addr_len = sizeof(sockaddr_in);
  return ep;
}

std::string CheckEndpointArgs(const std::string& family, const FamilyArgs& args) {
  if (args.empty()) return family + ": no endpoints (NAME=ADDR:PORT)";
  if (args.size() > kMaxNetEndpoints) return family + ": more than 64 endpoints";
  for (const std::string& arg : args) {
    if (!ParseNetEndpoint(arg)) {
      return family + ": not NAME=ADDR:PORT with a numeric address: " + arg;
    }
  }
  return "";
}

std::string CanaryPayload(const std::string& nonce, const std::string& family,
                          const std::string& name) {
  return "sandprobe " + nonce + " " + family + " " + name + "\n";
}

std::string CheckNetTcpArgs(const FamilyArgs& args) { return CheckEndpointArgs("net.tcp", args); }
std::string CheckNetUdpArgs(const FamilyArgs& args) { return CheckEndpointArgs("net.udp", args); }

void RunNetTcp(const ProbeContext& ctx, const FamilyArgs& args) {
  for (const std::string& arg : args) ctx.out.Emit(TryTcp(ctx, *ParseNetEndpoint(arg)));
}

void RunNetUdp(const ProbeContext& ctx, const FamilyArgs& args) {
  for (const std::string& arg : args) ctx.out.Emit(TryUdp(ctx, *ParseNetEndpoint(arg)));
}

}  // namespace sandprobe
