#include "lab/lab.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "contract/errno_name.h"

namespace sandprobe {
namespace {

constexpr int kDnsPort = 53;
constexpr int kMaxDnsOverTcpMessages = 8;

sockaddr_storage SocketAddress(const IpAddress& ip, int port) {
  sockaddr_storage storage{};
  if (ip.v6) {
    auto* sa = reinterpret_cast<sockaddr_in6*>(&storage);
    sa->sin6_family = AF_INET6;
    sa->sin6_port = htons(static_cast<std::uint16_t>(port));
    std::memcpy(&sa->sin6_addr, ip.bytes.data(), 16);
  } else {
    auto* sa = reinterpret_cast<sockaddr_in*>(&storage);
    sa->sin_family = AF_INET;
    sa->sin_port = htons(static_cast<std::uint16_t>(port));
    std::memcpy(&sa->sin_addr, ip.bytes.data(), 4);
  }
  return storage;
}

// A socket bound to `address`:`port` (`any`: every address, both families), listening when TCP.
StatusOr<int> BoundSocket(const sockaddr_storage& address, int type) {
  const int fd = ::socket(address.ss_family, type | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::HarnessError(fmt::format("socket(): {}", ErrnoName(errno)));
  const int zero = 0;
  if (address.ss_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  const socklen_t length = address.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0 ||
      (type == SOCK_STREAM && ::listen(fd, 64) != 0)) {
    const int err = errno;
    ::close(fd);
    return Status::HarnessError(fmt::format("bind({}): {}", SocketAddressText(address), ErrnoName(err)));
  }
  return fd;
}

// Reads exactly `size` bytes (false on close, timeout or error).
bool ReadFull(int fd, char* buf, std::size_t size) {
  for (std::size_t got = 0; got < size;) {
    const ssize_t n = ::recv(fd, buf + got, size - got, 0);
    if (n <= 0) return false;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

std::string SocketAddressText(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (address.ss_family == AF_INET) {
    const auto* sa = reinterpret_cast<const sockaddr_in*>(&address);
    ::inet_ntop(AF_INET, &sa->sin_addr, text, sizeof text);
    return fmt::format("{}:{}", text, ntohs(sa->sin_port));
  }
  const auto* sa = reinterpret_cast<const sockaddr_in6*>(&address);
  if (IN6_IS_ADDR_V4MAPPED(&sa->sin6_addr)) {
    ::inet_ntop(AF_INET, sa->sin6_addr.s6_addr + 12, text, sizeof text);
    return fmt::format("{}:{}", text, ntohs(sa->sin6_port));
  }
  ::inet_ntop(AF_INET6, &sa->sin6_addr, text, sizeof text);
  return fmt::format("[{}]:{}", text, ntohs(sa->sin6_port));
}

StatusOr<std::unique_ptr<Lab>> Lab::Start(LabNames names, const LabOptions& options) {
  std::vector<IpAddress> addresses = {LabResolverV4(), LabResolverV6()};
  for (const LabName& name : names.names) {
    addresses.push_back(name.v4);
    addresses.push_back(name.v6);
  }
  // The TLS context is made by the first TLS connection (lab/lab_tls.h).
  StatusOr<std::unique_ptr<LabTlsContext>> tls = LabTlsContext::Create();
  if (!tls.ok()) return tls.status();
  std::unique_ptr<Lab> lab(new Lab(std::move(names)));
  lab->tls_ = std::move(*tls);
  lab->stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (lab->stop_fd_ < 0) return Status::HarnessError(fmt::format("eventfd: {}", ErrnoName(errno)));
  Lab* raw = lab.get();
  StatusOr<LabNamespace> netns = LabNamespace::Create(addresses, [&](const LabNamespace&) {
    return raw->Bind(options).WithContext("lab listeners");
  });
  if (!netns.ok()) return netns.status();
  lab->netns_ = std::move(*netns);
  lab->server_ = std::thread([raw] { raw->Serve(); });
  for (int i = 0; i < kSinkWorkers; ++i) lab->workers_.emplace_back([raw] { raw->Work(); });
  return lab;
}

Status Lab::Bind(const LabOptions& options) {
  for (const IpAddress& resolver : {LabResolverV4(), LabResolverV6()}) {
    for (int type : {SOCK_DGRAM, SOCK_STREAM}) {
      StatusOr<int> fd = BoundSocket(SocketAddress(resolver, kDnsPort), type);
      if (!fd.ok()) return fd.status();
      listeners_.push_back({*fd, type == SOCK_DGRAM});
    }
  }
  IpAddress any;
  any.v6 = true;  // [::], dual-stack: every lab address of both families
  for (int port : options.sink_ports) {
    StatusOr<int> fd = BoundSocket(SocketAddress(any, port), SOCK_STREAM);
    if (!fd.ok()) return fd.status();
    listeners_.push_back({*fd, false});
  }
  return Status::Ok();
}

Lab::~Lab() {
  if (server_.joinable()) {
    const std::uint64_t one = 1;
    ssize_t ignored = ::write(stop_fd_, &one, sizeof one);
    (void)ignored;
    server_.join();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (int fd : serving_) ::shutdown(fd, SHUT_RDWR);  // unblocks a worker in recv or SSL_accept
  }
  work_ready_.notify_all();
  for (std::thread& worker : workers_) worker.join();
  for (int fd : queued_) ::close(fd);
  for (const Listener& listener : listeners_) ::close(listener.fd);
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

std::vector<DnsReceipt> Lab::DnsReceipts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dns_receipts_;
}

std::vector<SinkReceipt> Lab::SinkReceipts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sink_receipts_;
}

void Lab::Record(DnsReceipt receipt) {
  std::lock_guard<std::mutex> lock(mu_);
  if (dns_receipts_.size() < kMaxLabReceipts) dns_receipts_.push_back(std::move(receipt));
}

void Lab::Record(SinkReceipt receipt) {
  std::lock_guard<std::mutex> lock(mu_);
  if (sink_receipts_.size() < kMaxLabReceipts) sink_receipts_.push_back(std::move(receipt));
}

void Lab::OnSinkRequest(const std::string& host, const std::string& target) {
  constexpr std::string_view kArm = "/rebinding-arm";
  const LabName* name = names_.Find(host);
  std::lock_guard<std::mutex> lock(mu_);
  rebind_left_ = 0;  // any request ends an armed rebinding
  if (name == nullptr || name->kind != LabNameKind::kAllowed || !target.starts_with("/sandprobe/") ||
      !target.ends_with(kArm)) {
    return;
  }
  rebind_name_ = name->name;
  rebind_left_ = kRebindAnswers;
  rebind_until_ = std::chrono::steady_clock::now() + kRebindWindow;
}

const LabName* Lab::Rebound(const LabName& asked) {
  std::lock_guard<std::mutex> lock(mu_);
  if (rebind_left_ <= 0 || asked.name != rebind_name_ || std::chrono::steady_clock::now() > rebind_until_) {
    return nullptr;
  }
  for (const LabName& name : names_.names) {
    if (name.kind != LabNameKind::kRebindTarget) continue;
    --rebind_left_;
    return &name;
  }
  return nullptr;
}

void Lab::Serve() {
  std::vector<pollfd> fds;
  fds.push_back({stop_fd_, POLLIN, 0});
  for (const Listener& listener : listeners_) fds.push_back({listener.fd, POLLIN, 0});
  for (;;) {
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) return;
    for (std::size_t i = 0; i < listeners_.size(); ++i) {
      if ((fds[i + 1].revents & POLLIN) == 0) continue;
      if (listeners_[i].udp) {
        AnswerDatagrams(listeners_[i].fd);
        continue;
      }
      const int fd = ::accept4(listeners_[i].fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::lock_guard<std::mutex> lock(mu_);
      if (queued_.size() >= kMaxQueuedConnections) {
        ::close(fd);  // over the bound: refused unread (and unrecorded)
        continue;
      }
      queued_.push_back(fd);
      work_ready_.notify_one();
    }
  }
}

void Lab::AnswerDatagrams(int fd) {
  // Bounded: at most 64 datagrams per wake-up, the rest wait for the next round.
  for (int i = 0; i < 64; ++i) {
    char buf[kMaxLabDnsMessage];
    sockaddr_storage peer{};
    socklen_t length = sizeof peer;
    const ssize_t n =
        ::recvfrom(fd, buf, sizeof buf, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&peer), &length);
    if (n < 0) return;
    DnsReceipt receipt{.peer = SocketAddressText(peer), .transport = "udp"};
    const std::string reply = AnswerLabQuery(names_, std::string(buf, static_cast<std::size_t>(n)), receipt,
                                               [this](const LabName& asked) { return Rebound(asked); });
    Record(std::move(receipt));  // before the reply: whoever got an answer finds the receipt
    if (!reply.empty()) {
      ::sendto(fd, reply.data(), reply.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&peer), length);
    }
  }
}

void Lab::Work() {
  for (;;) {
    int fd = -1;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_ready_.wait(lock, [&] { return stopping_ || !queued_.empty(); });
      if (stopping_) return;
      fd = queued_.front();
      queued_.pop_front();
      serving_.push_back(fd);
    }
    sockaddr_storage peer{}, local{};
    socklen_t peer_length = sizeof peer, local_length = sizeof local;
    ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_length);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_length);
    const std::string local_text = SocketAddressText(local);
    const int port = ntohs(reinterpret_cast<const sockaddr_in*>(&local)->sin_port);  // same offset in v6
    if (port == kDnsPort) {
      ServeDnsOverTcp(fd, SocketAddressText(peer));
    } else {
      SinkReceipt receipt{.peer = SocketAddressText(peer), .local = local_text, .port = port};
      ServeSinkConnection(fd, *tls_, receipt,
                          [this](const std::string& host, const std::string& target) { OnSinkRequest(host, target); });
      Record(std::move(receipt));
    }
    std::lock_guard<std::mutex> lock(mu_);
    std::erase(serving_, fd);
    ::close(fd);
  }
}

void Lab::ServeDnsOverTcp(int fd, const std::string& peer) {
  const timeval timeout{kSinkReadMs / 1000, (kSinkReadMs % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  for (int i = 0; i < kMaxDnsOverTcpMessages; ++i) {
    unsigned char prefix[2];
    if (!ReadFull(fd, reinterpret_cast<char*>(prefix), 2)) return;
    const std::size_t size = (std::size_t{prefix[0]} << 8) | prefix[1];
    if (size > kMaxLabDnsMessage) return;  // larger than any query the lab answers
    std::string query(size, '\0');
    if (!ReadFull(fd, query.data(), size)) return;
    DnsReceipt receipt{.peer = peer, .transport = "tcp"};
    const std::string reply =
        AnswerLabQuery(names_, query, receipt, [this](const LabName& asked) { return Rebound(asked); });
    Record(receipt);
    if (reply.empty()) return;
    const std::string framed = std::string{static_cast<char>(reply.size() >> 8), static_cast<char>(reply.size() & 0xff)} + reply;
    if (::send(fd, framed.data(), framed.size(), MSG_NOSIGNAL) < 0) return;
  }
}

}  // namespace sandprobe
