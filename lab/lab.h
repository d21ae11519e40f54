// Lab: the harness-owned fake internet of one run (issue 28). In a network namespace of its own
// (lab/lab_netns.h) it serves
//   - the resolver (lab/lab_dns.h) on UDP and TCP port 53 at 203.0.113.53 and 2001:db8:53::53;
//   - sinks (lab/lab_sinks.h) on every lab address, at the ports asked for (80, 443, 8080 by
//     default), recording peer, address reached, HTTP Host, CONNECT target and TLS SNI.
// Every lab name's addresses are on the namespace's loopback, so connections to them land here;
// nothing else is reachable from inside. The receipts are the facts: what reached the lab, never
// what a probe says it sent.
//
// Rebinding (net.bypass): a request whose target ends in "/rebinding-arm" with the Host of an
// allowed name arms that name: its next kRebindAnswers answers (within kRebindWindow) are the
// rebind target's addresses (lab/lab_names.h kRebindTarget) instead of its own. Any later HTTP request to any sink
// ends it, so a rebinding never outlives the one request that tests it.
//
// Threads: one polls the listeners and answers UDP queries; kSinkWorkers serve accepted
// connections (each bounded by lab/lab_sinks.h's limits). All stop in the destructor.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "lab/lab_dns.h"
#include "lab/lab_names.h"
#include "lab/lab_netns.h"
#include "lab/lab_sinks.h"
#include "lab/lab_tls.h"

namespace sandprobe {

struct LabOptions {
  std::vector<int> sink_ports = {80, 443, 8080};  // TCP ports the sinks listen on, at every lab address
};

class Lab {
 public:
  // Creates the namespace, binds every socket inside it and starts serving. An error names the
  // step (no CAP_SYS_ADMIN: "lab network namespace: unshare(CLONE_NEWNET): EPERM").
  static StatusOr<std::unique_ptr<Lab>> Start(LabNames names, const LabOptions& options = {});
  ~Lab();
  Lab(const Lab&) = delete;
  Lab& operator=(const Lab&) = delete;

  const LabNames& names() const { return names_; }
  // The namespace (setns(2) takes the descriptor; a sandbox joins through a veth pair to it).
  const LabNamespace& network_namespace() const { return netns_; }
  // What reached the lab so far (at most kMaxLabReceipts of each, the first ones kept).
  std::vector<DnsReceipt> DnsReceipts() const;
  std::vector<SinkReceipt> SinkReceipts() const;

  static constexpr std::size_t kMaxLabReceipts = 1024;
  static constexpr int kSinkWorkers = 4;
  static constexpr std::size_t kMaxQueuedConnections = 64;
  static constexpr int kRebindAnswers = 8;
  static constexpr std::chrono::milliseconds kRebindWindow{5000};

 private:
  struct Listener {
    int fd = -1;
    bool udp = false;
  };
  explicit Lab(LabNames names) : names_(std::move(names)) {}
  Status Bind(const LabOptions& options);
  void Serve();
  void Work();
  void AnswerDatagrams(int fd);
  void ServeDnsOverTcp(int fd, const std::string& peer);
  void Record(DnsReceipt receipt);
  void Record(SinkReceipt receipt);
  void OnSinkRequest(const std::string& host, const std::string& target);
  const LabName* Rebound(const LabName& asked);

  LabNames names_;
  LabNamespace netns_;
  std::unique_ptr<LabTlsContext> tls_;
  std::vector<Listener> listeners_;
  int stop_fd_ = -1;
  std::thread server_;
  std::vector<std::thread> workers_;
  mutable std::mutex mu_;
  std::condition_variable work_ready_;
  bool stopping_ = false;
  std::deque<int> queued_;     // accepted, not yet served
  std::vector<int> serving_;   // being served: shut down to stop
  std::vector<DnsReceipt> dns_receipts_;
  std::vector<SinkReceipt> sink_receipts_;
  // The armed rebinding (guarded by mu_): the name, answers left, until when.
  std::string rebind_name_;
  int rebind_left_ = 0;
  std::chrono::steady_clock::time_point rebind_until_;
};

// "192.0.2.10:80", "[2001:db8:a::a]:443"; an IPv4-mapped IPv6 address as the IPv4 one.
std::string SocketAddressText(const sockaddr_storage& address);

}  // namespace sandprobe
