// CanaryListeners: the harness's network canaries for one run. On each site (an IPv4 address
// of this machine: loopback, the docker bridge gateway) it listens on ephemeral ports with a
// TCP listener, a UDP socket and a tiny DNS responder, and logs every canary payload and DNS
// question it gets, with the peer's address. Egress is proven by these logs, never by the
// probe's word (families/family_net.cc).
//
// Endpoint names (what policies' network.allow and the check ids use): "<site>-tcp",
// "<site>-udp", "<site>-dns", e.g. "loopback-tcp", "bridge-udp".
//
// The DNS responder answers A queries under sandprobe.test with 127.0.0.1 (TTL 0), so a probe
// can see resolution work without being pointed anywhere but loopback; anything else gets
// REFUSED (it is not a resolver and never forwards). One thread serves all sockets; the
// destructor stops it and closes everything.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/policy_enums.h"
#include "model/status.h"

namespace sandprobe {

struct CanarySite {
  std::string name;  // "loopback", "bridge"
  std::string ip;    // numeric IPv4 this machine owns: "127.0.0.1", "172.17.0.1"
};

// One thing a canary received.
struct CanaryReceipt {
  std::string endpoint;  // "bridge-tcp"
  std::string peer;      // "172.17.0.2:41234"
  std::string nonce;     // from the payload or the DNS name; "" when it carried none
  std::string detail;    // the payload's family and name, or the DNS question
};

class CanaryListeners {
 public:
  // Binds every site (ephemeral ports) and starts the serving thread. A site that cannot be
  // bound is an error naming it.
  static StatusOr<std::unique_ptr<CanaryListeners>> Start(const std::vector<CanarySite>& sites);
  ~CanaryListeners();
  CanaryListeners(const CanaryListeners&) = delete;
  CanaryListeners& operator=(const CanaryListeners&) = delete;

  // Endpoint name -> "ADDR:PORT".
  const std::map<std::string, std::string>& endpoints() const { return endpoints_; }
  // What has been received so far (at most kMaxReceipts, first ones kept).
  std::vector<CanaryReceipt> Receipts() const;

  static constexpr std::size_t kMaxReceipts = 1024;

 private:
  struct Socket {
    int fd = -1;
    std::string endpoint;
    enum class Kind { kTcpListen, kTcpConn, kUdp, kDns } kind = Kind::kUdp;
    std::string buffer;    // kTcpConn: bytes so far
    std::string peer;      // kTcpConn
    long long deadline_ms = 0;  // kTcpConn: closed unread after this
  };
  CanaryListeners() = default;
  Status Bind(const CanarySite& site);
  void Serve();
  void Record(CanaryReceipt receipt);
  void OnDatagram(Socket& s);
  void OnAccept(const Socket& s);
  bool OnConnReadable(Socket& s);  // false: close it
  void FinishConnection(Socket& s);  // logs what a connection sent (possibly nothing)

  std::vector<Socket> sockets_;
  std::map<std::string, std::string> endpoints_;
  int stop_fd_ = -1;
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<CanaryReceipt> receipts_;
};

// Whether the bridge canary's address must come from, or be confirmed by, docker (`docker network
// inspect bridge`) for a profile of this backend: only for sandboxes docker runs (witness_net.cc
// says why).
bool BridgeNeedsDockersAnswer(Backend backend);

// The first IPv4 address of the host's interface `name` (getifaddrs), or "" when it has none.
std::string InterfaceIpv4(const std::string& name);

// "sandprobe NONCE FAMILY NAME": the nonce (only [A-Za-z0-9_-], 1-128 chars) and
// "FAMILY NAME"; false when `payload` is not a canary payload.
bool ParseCanaryPayload(const std::string& payload, std::string& nonce, std::string& detail);
// A DNS response to `query` (nullopt-like empty string when it is no query): A 127.0.0.1 for
// names under sandprobe.test, REFUSED otherwise. `qname` gets the question's name.
std::string AnswerDnsQuery(const std::string& query, std::string& qname);

nlohmann::json ReceiptsToJson(const std::vector<CanaryReceipt>& receipts);

}  // namespace sandprobe
