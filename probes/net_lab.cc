// net.lab NAME...: what the sandbox's own resolver and network do with a host name, in the
// harness's egress lab (run/run_lab.h). For each name: getaddrinfo (the system resolver, so the
// sandbox's /etc/resolv.conf, the lab's, is what answers), then a TCP connect to port 80 of the
// first address and one HTTP request "GET /sandprobe/NONCE HTTP/1.1" with "Host: NAME", and
// the status line of the answer. The lab's sinks record what arrived; the host judges by that
// (families/family_net_lab.cc), never by this fact.
//
// net.bypass's spellings may say more (families/family_net_bypass.cc): "NAME@HOST" connects to
// NAME and sends Host HOST (through a proxy: a CONNECT to NAME:80, then the request inside the
// tunnel); a first label "NONCE" is replaced by the launch's nonce, and such a name is also
// looked up with getaddrinfo when a proxy is declared; an IPv6 zone id ("%1") is kept for
// getaddrinfo and written "%25" in Host.
//
// With "--proxy env|URL" first (the policy declares the proxy the sandbox's traffic goes
// through; probes/net_lab_proxy.h) each request goes to that proxy as a forward-proxy request
// instead, and the proxy resolves and connects.
//
// Safety: the probe resolves only when every nameserver in /etc/resolv.conf is in a
// documentation range (the lab's resolver is 203.0.113.53 and 2001:db8:53::53), so outside a lab
// it never asks a real resolver; and it connects only to documentation-range addresses
// (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32), never anywhere real.
// Bounded: at most kMaxLabNames names, each connect and reply waits at most kNetWaitMs, at most
// kParallelAttempts attempts at once.
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/errno_name.h"
#include "probes/net_lab_proxy.h"
#include "probes/net_probes.h"

namespace sandprobe {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxLabNames = 512;
constexpr std::size_t kParallelAttempts = 8;  // threads per family, the calling one included

bool InDocumentationRange(const sockaddr* sa) {
  if (sa->sa_family == AF_INET) {
    const auto* b = reinterpret_cast<const unsigned char*>(&reinterpret_cast<const sockaddr_in*>(sa)->sin_addr);
    return (b[0] == 192 && b[1] == 0 && b[2] == 2) || (b[0] == 198 && b[1] == 51 && b[2] == 100) ||
           (b[0] == 203 && b[1] == 0 && b[2] == 113);
  }
  if (sa->sa_family == AF_INET6) {
    const auto* b = reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr.s6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr)) {
      sockaddr_in v4{};
      v4.sin_family = AF_INET;
      std::memcpy(&v4.sin_addr, b + 12, 4);
      return InDocumentationRange(reinterpret_cast<const sockaddr*>(&v4));
    }
    return b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8;
  }
  return false;
}

std::string AddressText(const sockaddr* sa) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (sa->sa_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, text, sizeof text);
  } else if (sa->sa_family == AF_INET6) {
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, text, sizeof text);
  }
  return text;
}

// "" when every nameserver of /etc/resolv.conf is a documentation-range address (a lab's),
// else why the probe will not resolve.
std::string ResolverOutsideLab() {
  std::ifstream in("/etc/resolv.conf");
  if (!in) return "/etc/resolv.conf: unreadable";
  int servers = 0;
  for (std::string line; std::getline(in, line) && servers < 64;) {
    std::istringstream words(line);
    std::string key, address;
    if (!(words >> key >> address) || key != "nameserver") continue;
    ++servers;
    sockaddr_storage sa{};
    auto* v4 = reinterpret_cast<sockaddr_in*>(&sa);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&sa);
    if (::inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
      sa.ss_family = AF_INET;
    } else if (::inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
      sa.ss_family = AF_INET6;
    }
    if (!InDocumentationRange(reinterpret_cast<sockaddr*>(&sa))) {
      return "/etc/resolv.conf names nameserver " + address + ", not a lab resolver";
    }
  }
  return servers == 0 ? "/etc/resolv.conf names no nameserver" : "";
}

// getaddrinfo's error by its macro's name ("EAI_NONAME").
std::string GaiErrorName(int rc) {
  static const std::pair<int, const char*> kNames[] = {
      {EAI_NONAME, "EAI_NONAME"}, {EAI_AGAIN, "EAI_AGAIN"},   {EAI_FAIL, "EAI_FAIL"},
      {EAI_NODATA, "EAI_NODATA"}, {EAI_FAMILY, "EAI_FAMILY"}, {EAI_SERVICE, "EAI_SERVICE"},
      {EAI_MEMORY, "EAI_MEMORY"}, {EAI_SYSTEM, "EAI_SYSTEM"}, {EAI_ADDRFAMILY, "EAI_ADDRFAMILY"}};
  for (const auto& [value, name] : kNames) {
    if (value == rc) return name;
  }
  return "EAI_OTHER";
}

void Fail(json& fact, const char* step, const std::string& error) {
  fact["ok"] = false;
  fact["step"] = step;
  fact["errno"] = error;
}

// Connects (non-blocking, kNetWaitMs cap) and returns the fd, or -1 with errno set.
int ConnectWithin(const sockaddr* sa, socklen_t length) {
  const int fd = ::socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int err = ::connect(fd, sa, length) == 0 ? 0 : errno;
  if (err == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    socklen_t len = sizeof err;
    if (::poll(&p, 1, kNetWaitMs) <= 0) err = ETIMEDOUT;
    else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  }
  if (err != 0) {
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

// The HTTP exchange on a connected socket: the request, then the status code of the reply.
void Exchange(int fd, const std::string& request, json& fact) {
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    return Fail(fact, "send", ErrnoName(errno));
  }
  fact["sent"] = true;
  pollfd p{fd, POLLIN, 0};
  char reply[128] = {};
  if (::poll(&p, 1, kNetWaitMs) <= 0) return Fail(fact, "recv", "ETIMEDOUT");
  const ssize_t n = ::recv(fd, reply, sizeof reply - 1, MSG_DONTWAIT);
  if (n <= 0) return Fail(fact, "recv", n < 0 ? ErrnoName(errno) : "ENODATA");  // ENODATA: closed unanswered
  int status = 0;
  if (std::sscanf(reply, "HTTP/1.%*d %d", &status) != 1) return Fail(fact, "recv", "EBADMSG");  // not HTTP
  fact["ok"] = true;
  fact["status"] = status;
}

// The request as a forward-proxy request to `proxy`, which resolves and connects itself. When
// `host` differs from `connect_to` (fronting), a CONNECT to `connect_to`:80 instead, and the
// request with Host `host` inside the tunnel.
json& ThroughProxy(const LabProxy& proxy, const std::string& connect_to, const std::string& host,
                   const std::string& target, json& fact) {
  fact["proxy"] = proxy.address;
  const int fd = ConnectWithin(reinterpret_cast<const sockaddr*>(&proxy.sockaddr), proxy.sockaddr_length);
  if (fd < 0) {
    Fail(fact, "connect", ErrnoName(errno));
    return fact;
  }
  const std::string authorization =
      proxy.authorization.empty() ? "" : "Proxy-Authorization: " + proxy.authorization + "\r\n";
  if (connect_to == host) {
    Exchange(fd,
             "GET http://" + host + target + " HTTP/1.1\r\nHost: " + host + "\r\n" + authorization +
                 "User-Agent: sandprobe\r\nConnection: close\r\n\r\n",
             fact);
  } else {
    Exchange(fd, "CONNECT " + connect_to + ":80 HTTP/1.1\r\nHost: " + connect_to + ":80\r\n" + authorization + "\r\n",
             fact);
    if (fact.value("ok", false) && fact.value("status", 0) == 200) {
      fact.erase("status");
      Exchange(fd, "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: sandprobe\r\nConnection: close\r\n\r\n",
               fact);
    } else if (fact.value("ok", false)) {
      Fail(fact, "connect", "EACCES");  // the proxy refused the CONNECT
    }
  }
  ::close(fd);
  return fact;
}

// One attempt: `family` "net.lab" (arg NAME: path NAME, target /sandprobe/NONCE) or
// "net.bypass" (arg VARIANT=SPELLING: path VARIANT, target /sandprobe/NONCE/VARIANT).
// Why a family tries nothing: the step that refused ("resolv.conf", "proxy") and what it saw.
struct Refusal {
  const char* step = "";
  std::string detail;  // "" when nothing refuses
};

json TryName(const ProbeContext& ctx, const std::string& family, const std::string& arg, const Refusal& refuse,
            const LabProxy& proxy) {
  const std::size_t eq = arg.find('=');
  const std::string path = eq == std::string::npos ? arg : arg.substr(0, eq);
  const std::string spelling = eq == std::string::npos ? arg : arg.substr(eq + 1);
  // "NAME@HOST": connect to NAME, say Host HOST (fronting); a first label "NONCE" is this
  // launch's nonce (a name no cache or earlier launch has seen: DNS exfiltration).
  const std::size_t at = spelling.find('@');
  std::string name = spelling.substr(0, at);
  const bool nonce_name = name.starts_with("NONCE.");
  if (nonce_name) name = ctx.nonce + name.substr(5);
  const std::string target = "/sandprobe/" + ctx.nonce + (eq == std::string::npos ? "" : "/" + path);
  json fact = {{"family", family}, {"path", path}, {"nonce", ctx.nonce}};
  if (eq != std::string::npos) fact["spelling"] = spelling;
  if (!refuse.detail.empty()) {
    Fail(fact, refuse.step, "EPERM");
    fact["detail"] = refuse.detail;
    return fact;
  }
  // Host as a client writes it for that URL: an IPv6 literal in brackets, its zone id's "%"
  // as "%25" (RFC 6874).
  const auto url_host = [](std::string text) {
    if (text.find(':') == std::string::npos) return text;
    if (const std::size_t zone = text.find('%'); zone != std::string::npos) text.insert(zone + 1, "25");
    return "[" + text + "]";
  };
  const std::string connect_host = url_host(name);
  const std::string host = at == std::string::npos ? connect_host : spelling.substr(at + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (!proxy.spec.empty()) {
    // A nonce name is looked up here first as well: the sandbox's own resolver is the DNS
    // path out that a proxy does not close.
    if (nonce_name) {
      const int rc = ::getaddrinfo(name.c_str(), "80", &hints, &found);
      if (rc == 0) ::freeaddrinfo(found);
      else fact["gai_error"] = GaiErrorName(rc);
    }
    return ThroughProxy(proxy, connect_host, host, target, fact);
  }
  const int rc = ::getaddrinfo(name.c_str(), "80", &hints, &found);
  if (rc != 0) {
    fact["ok"] = false;
    fact["step"] = "resolve";
    if (rc == EAI_SYSTEM) fact["errno"] = ErrnoName(errno);
    fact["gai_error"] = GaiErrorName(rc);
    return fact;
  }
  json addresses = json::array();
  const addrinfo* first_lab = nullptr;
  for (const addrinfo* a = found; a != nullptr && addresses.size() < 16; a = a->ai_next) {
    addresses.push_back(AddressText(a->ai_addr));
    if (first_lab == nullptr && InDocumentationRange(a->ai_addr)) first_lab = a;
  }
  fact["resolved"] = addresses;
  if (first_lab == nullptr) {  // never connected to: not an address of the lab
    Fail(fact, "address", "EPERM");
    ::freeaddrinfo(found);
    return fact;
  }
  fact["address"] = AddressText(first_lab->ai_addr);
  const int fd = ConnectWithin(first_lab->ai_addr, first_lab->ai_addrlen);
  ::freeaddrinfo(found);
  if (fd < 0) {
    Fail(fact, "connect", ErrnoName(errno));
    return fact;
  }
  Exchange(fd,
           "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: sandprobe\r\nConnection: close\r\n\r\n",
           fact);
  ::close(fd);
  return fact;
}

}  // namespace

namespace {

constexpr char kHostChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-";

bool IsSpelling(const std::string& text, const char* chars) {
  return !text.empty() && text.size() <= 253 && text.find_first_not_of(chars) == std::string::npos;
}

}  // namespace

std::string CheckNetLabArgs(const FamilyArgs& all) {
  FamilyArgs args;
  if (std::string error = SplitLabProxyArgs("net.lab", all, nullptr, &args); !error.empty()) return error;
  if (args.empty()) return "net.lab: no host names";
  if (args.size() > kMaxLabNames) return "net.lab: more than 512 host names";
  for (const std::string& name : args) {
    if (!IsSpelling(name, kHostChars)) return "net.lab: not a host name: " + name;
  }
  return "";
}

std::string CheckNetBypassArgs(const FamilyArgs& all) {
  FamilyArgs args;
  if (std::string error = SplitLabProxyArgs("net.bypass", all, nullptr, &args); !error.empty()) return error;
  if (args.empty()) return "net.bypass: no VARIANT=SPELLING";
  if (args.size() > kMaxLabNames) return "net.bypass: more than 512 spellings";
  for (const std::string& arg : args) {
    const std::size_t eq = arg.find('=');
    if (eq == std::string::npos || !IsSpelling(arg.substr(0, eq), kHostChars) ||
        !IsSpelling(arg.substr(eq + 1), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:%@")) {
      return "net.bypass: not VARIANT=SPELLING (a host name or a numeric address, [@HOST]): " + arg;
    }
  }
  return "";
}

namespace {

// Whether `arg` must run alone, after every other attempt: net.bypass's rebinding pair. The arming
// request makes the lab answer the allowed name's next lookups with a denied address until
// the next request reaches any sink (lab/lab.h), so nothing may run beside or between the two.
bool RunsAlone(const std::string& arg) {
  return arg.starts_with("rebinding-arm=") || arg.starts_with("rebinding=");
}

// Both families: the resolver guard, the proxy if the host named one, then each argument. The
// attempts are independent (each its own lookup, connection and request path), so they run side
// by side on up to kParallelAttempts threads: each waits mostly on the lab's threads and on
// the network, and one after another those waits add up (the lab's budget, issue 28). The
// rebinding pair runs afterwards, alone and in order. Facts are emitted in argument order.
void RunLabFamily(const ProbeContext& ctx, const char* family, const FamilyArgs& all) {
  std::string spec;
  FamilyArgs args;
  SplitLabProxyArgs(family, all, &spec, &args);
  const LabProxy proxy = FindLabProxy(spec);
  Refusal refuse{"resolv.conf", ResolverOutsideLab()};
  if (refuse.detail.empty()) refuse = {"proxy", proxy.refuse};
  std::vector<json> facts(args.size());
  std::vector<std::size_t> side_by_side, alone;
  for (std::size_t i = 0; i < args.size(); ++i) (RunsAlone(args[i]) ? alone : side_by_side).push_back(i);
  std::atomic<std::size_t> next{0};
  const auto attempt = [&] {
    for (std::size_t k; (k = next.fetch_add(1)) < side_by_side.size();) {
      const std::size_t i = side_by_side[k];
      facts[i] = TryName(ctx, family, args[i], refuse, proxy);
    }
  };
  std::vector<std::thread> threads;
  const std::size_t helpers = std::min(side_by_side.size(), kParallelAttempts) - (side_by_side.empty() ? 0 : 1);
  for (std::size_t t = 0; t < helpers; ++t) {
    try {
      threads.emplace_back(attempt);
    } catch (const std::system_error&) {
      break;  // no thread to be had: the calling thread does the rest
    }
  }
  attempt();
  for (std::thread& thread : threads) thread.join();
  for (std::size_t i : alone) facts[i] = TryName(ctx, family, args[i], refuse, proxy);
  for (const json& fact : facts) ctx.out.Emit(fact);
}

}  // namespace

void RunNetLab(const ProbeContext& ctx, const FamilyArgs& args) { RunLabFamily(ctx, "net.lab", args); }

void RunNetBypass(const ProbeContext& ctx, const FamilyArgs& args) { RunLabFamily(ctx, "net.bypass", args); }

}  // namespace sandprobe
