#include "lab/lab_netns.h"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include <fmt/format.h>

#include "contract/errno_name.h"
#include "lab/lab_netlink.h"

namespace sandprobe {
namespace {

constexpr char kThreadNetns[] = "/proc/thread-self/ns/net";

// Runs `body` on a new thread and returns its Status: namespace changes stay on that thread.
Status OnOwnThread(const std::function<Status()>& body) {
  Status result = Status::Ok();
  std::thread([&] { result = body(); }).join();
  return result;
}

}  // namespace

StatusOr<LabNamespace> LabNamespace::Create(const std::vector<IpAddress>& addresses) {
  int fd = -1;
  Status status = OnOwnThread([&]() -> Status {
    if (::unshare(CLONE_NEWNET) != 0) {
      return Status::HarnessError(fmt::format("unshare(CLONE_NEWNET): {}", ErrnoName(errno)));
    }
    fd = ::open(kThreadNetns, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::HarnessError(fmt::format("open({}): {}", kThreadNetns, ErrnoName(errno)));
    const int lo = static_cast<int>(::if_nametoindex("lo"));
    if (lo == 0) return Status::HarnessError(fmt::format("if_nametoindex(lo): {}", ErrnoName(errno)));
    if (Status s = NetlinkSetLinkUp(lo); !s.ok()) return s;
    for (const IpAddress& address : addresses) {
      if (Status s = NetlinkAddAddress(lo, address, address.v6 ? 128 : 32); !s.ok()) return s;
    }
    return Status::Ok();
  });
  LabNamespace lab(fd);  // closes fd on the error path too
  if (!status.ok()) return status.WithContext("lab network namespace");
  return lab;
}

StatusOr<LabNamespace> LabNamespace::Open(const std::string& ns_path) {
  const int fd = ::open(ns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::HarnessError(fmt::format("open({}): {}", ns_path, ErrnoName(errno)));
  return LabNamespace(fd);
}

LabNamespace& LabNamespace::operator=(LabNamespace&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

LabNamespace::~LabNamespace() {
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
