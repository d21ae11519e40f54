#include "lab/lab_netns.h"

#include <fcntl.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "contract/errno_name.h"
#include "lab/lab_netlink.h"

namespace sandprobe {
namespace {

constexpr char kThreadNetns[] = "/proc/thread-self/ns/net";
constexpr char kThreadNetDev[] = "/proc/thread-self/net/dev";
constexpr std::size_t kMaxLinkTable = 1 << 20;  // a namespace of ours has a handful of links

// Runs `body` on a new thread and returns its Status: namespace changes stay on that thread.
Status OnOwnThread(const std::function<Status()>& body) {
  Status result = Status::Ok();
  std::thread([&] { result = body(); }).join();
  return result;
}

}  // namespace

StatusOr<LabNamespace> LabNamespace::Create(const std::vector<IpAddress>& addresses,
                                            const std::function<Status(const LabNamespace&)>& inside) {
  LabNamespace lab(-1);  // closes its descriptors on the error path too
  Status status = OnOwnThread([&]() -> Status {
    if (::unshare(CLONE_NEWNET) != 0) {
      return Status::HarnessError(fmt::format("unshare(CLONE_NEWNET): {}", ErrnoName(errno)));
    }
    lab.fd_ = ::open(kThreadNetns, O_RDONLY | O_CLOEXEC);
    if (lab.fd_ < 0) return Status::HarnessError(fmt::format("open({}): {}", kThreadNetns, ErrnoName(errno)));
    if (Status s = lab.KeepLinkTable(); !s.ok()) return s;
    const int lo = static_cast<int>(::if_nametoindex("lo"));
    if (lo == 0) return Status::HarnessError(fmt::format("if_nametoindex(lo): {}", ErrnoName(errno)));
    if (Status s = NetlinkSetLinkUp(lo); !s.ok()) return s;
    for (const IpAddress& address : addresses) {
      if (Status s = NetlinkAddAddress(lo, address, address.v6 ? 128 : 32); !s.ok()) return s;
    }
    for (const IpAddress& address : addresses) {
      if (!address.v6) continue;  // IPv4 routes are in place when the request is acknowledged
      if (Status s = WaitForRoute(address, RouteReady::kLocal); !s.ok()) return s;
    }
    return inside ? inside(lab) : Status::Ok();
  });
  if (!status.ok()) return status.WithContext("lab network namespace");
  return lab;
}

Status WaitForRoute(const IpAddress& destination, RouteReady ready) {
  const int wanted = [&] {
    switch (ready) {
      case RouteReady::kLocal: return RTN_LOCAL;
      case RouteReady::kOutward: return RTN_UNICAST;
    }
    return RTN_UNSPEC;
  }();
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kAddressReadyLimitMs);
  for (;;) {
    StatusOr<RouteLookup> route = NetlinkLookUpRoute(destination);
    if (!route.ok()) return route.status();
    if (route->error == 0 && route->type == wanted) return Status::Ok();
    if (std::chrono::steady_clock::now() > until) {
      const std::string found =
          route->error != 0 ? ErrnoName(route->error) : fmt::format("a route of type {}", route->type);
      return Status::HarnessError(fmt::format("the route to {} is not {} after {} ms: {}", destination.Text(),
                                              ready == RouteReady::kLocal ? "local" : "out a link",
                                              kAddressReadyLimitMs, found));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

Status LabNamespace::KeepLinkTable() {
  if (link_table_fd_ >= 0) ::close(link_table_fd_);
  link_table_fd_ = ::open(kThreadNetDev, O_RDONLY | O_CLOEXEC);
  if (link_table_fd_ < 0) return Status::HarnessError(fmt::format("open({}): {}", kThreadNetDev, ErrnoName(errno)));
  return Status::Ok();
}

StatusOr<std::vector<std::string>> LabNamespace::LinkNames() const {
  std::vector<std::string> names;
  if (link_table_fd_ < 0) {
    Status status = RunInside([&] {
      if (struct if_nameindex* list = ::if_nameindex()) {
        for (struct if_nameindex* i = list; i->if_index != 0; ++i) names.push_back(i->if_name);
        ::if_freenameindex(list);
        return Status::Ok();
      }
      return Status::HarnessError(fmt::format("if_nameindex: {}", ErrnoName(errno)));
    });
    if (!status.ok()) return status;
    return names;
  }
  // /proc/net/dev: two header lines, then "  NAME: counters..." per link.
  std::string table;
  char buf[4096];
  for (off_t offset = 0; table.size() < kMaxLinkTable;) {
    const ssize_t n = ::pread(link_table_fd_, buf, sizeof buf, offset);
    if (n < 0) return Status::HarnessError(fmt::format("read({}): {}", kThreadNetDev, ErrnoName(errno)));
    if (n == 0) break;
    table.append(buf, static_cast<std::size_t>(n));
    offset += n;
  }
  std::size_t line_start = 0;
  for (int line = 0; line_start < table.size(); ++line) {
    std::size_t line_end = table.find('\n', line_start);
    if (line_end == std::string::npos) line_end = table.size();
    const std::string_view text(table.data() + line_start, line_end - line_start);
    line_start = line_end + 1;
    const std::size_t colon = text.find(':');
    if (line < 2 || colon == std::string_view::npos) continue;
    const std::size_t first = text.find_first_not_of(' ');
    names.emplace_back(text.substr(first, colon - first));
  }
  return names;
}

StatusOr<LabNamespace> LabNamespace::Open(const std::string& ns_path) {
  const int fd = ::open(ns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::HarnessError(fmt::format("open({}): {}", ns_path, ErrnoName(errno)));
  return LabNamespace(fd);
}

LabNamespace& LabNamespace::operator=(LabNamespace&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    if (link_table_fd_ >= 0) ::close(link_table_fd_);
    fd_ = other.fd_;
    link_table_fd_ = other.link_table_fd_;
    other.fd_ = -1;
    other.link_table_fd_ = -1;
  }
  return *this;
}

LabNamespace::~LabNamespace() {
  if (link_table_fd_ >= 0) ::close(link_table_fd_);
  if (fd_ >= 0) ::close(fd_);
}

Status LabNamespace::RunInside(const std::function<Status()>& inside) const {
  return RunInNetworkNamespace(fd_, inside);
}

Status RunInNetworkNamespace(int ns_fd, const std::function<Status()>& inside) {
  return OnOwnThread([&]() -> Status {
    if (::setns(ns_fd, CLONE_NEWNET) != 0) {
      return Status::HarnessError(fmt::format("setns(CLONE_NEWNET): {}", ErrnoName(errno)));
    }
    return inside();
  });
}

unsigned long ThreadNetworkNamespaceInode() {
  struct stat st{};
  return ::stat(kThreadNetns, &st) == 0 ? st.st_ino : 0;
}

}  // namespace sandprobe
