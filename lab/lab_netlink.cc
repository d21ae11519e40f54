#include "lab/lab_netlink.h"

#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "contract/errno_name.h"

namespace sandprobe {
namespace {

// One request with its header and up to two attributes (RTA_* macros of linux/rtnetlink.h).
struct Request {
  nlmsghdr header;
  union {
    ifinfomsg link;
    ifaddrmsg addr;
  };
  char attributes[64];
};

void AddAttribute(Request& request, unsigned short type, const void* data, std::size_t size) {
  auto* rta = reinterpret_cast<rtattr*>(reinterpret_cast<char*>(&request) + NLMSG_ALIGN(request.header.nlmsg_len));
  rta->rta_type = type;
  rta->rta_len = static_cast<unsigned short>(RTA_LENGTH(size));
  std::memcpy(RTA_DATA(rta), data, size);
  request.header.nlmsg_len = NLMSG_ALIGN(request.header.nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

// Sends `request` on a fresh NETLINK_ROUTE socket and reads its acknowledgement.
Status Send(Request& request, const std::string& what) {
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return Status::HarnessError(fmt::format("{}: socket(AF_NETLINK): {}", what, ErrnoName(errno)));
  request.header.nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
  request.header.nlmsg_seq = 1;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  Status result = Status::Ok();
  if (::sendto(fd, &request, request.header.nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    result = Status::HarnessError(fmt::format("{}: sendto(netlink): {}", what, ErrnoName(errno)));
  } else {
    alignas(nlmsghdr) char reply[1024];
    const ssize_t n = ::recv(fd, reply, sizeof reply, 0);
    const auto* header = reinterpret_cast<const nlmsghdr*>(reply);
    if (n < 0) {
      result = Status::HarnessError(fmt::format("{}: recv(netlink): {}", what, ErrnoName(errno)));
    } else if (!NLMSG_OK(header, static_cast<unsigned>(n)) || header->nlmsg_type != NLMSG_ERROR) {
      result = Status::HarnessError(fmt::format("{}: no acknowledgement from the kernel", what));
    } else if (const int error = static_cast<const nlmsgerr*>(NLMSG_DATA(header))->error; error != 0) {
      result = Status::HarnessError(fmt::format("{}: {}", what, ErrnoName(-error)));
    }
  }
  ::close(fd);
  return result;
}

}  // namespace

Status NetlinkSetLinkUp(int ifindex) {
  Request request{};
  request.header.nlmsg_len = NLMSG_LENGTH(sizeof(ifinfomsg));
  request.header.nlmsg_type = RTM_NEWLINK;
  request.link.ifi_family = AF_UNSPEC;
  request.link.ifi_index = ifindex;
  request.link.ifi_flags = IFF_UP;
  request.link.ifi_change = IFF_UP;
  return Send(request, fmt::format("RTM_NEWLINK(index {}, up)", ifindex));
}

Status NetlinkAddAddress(int ifindex, const IpAddress& address, int prefix_length) {
  Request request{};
  request.header.nlmsg_len = NLMSG_LENGTH(sizeof(ifaddrmsg));
  request.header.nlmsg_type = RTM_NEWADDR;
  request.header.nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
  request.addr.ifa_family = address.v6 ? AF_INET6 : AF_INET;
  request.addr.ifa_prefixlen = static_cast<unsigned char>(prefix_length);
  request.addr.ifa_flags = address.v6 ? IFA_F_NODAD : 0;
  request.addr.ifa_scope = RT_SCOPE_UNIVERSE;
  request.addr.ifa_index = static_cast<unsigned>(ifindex);
  AddAttribute(request, IFA_LOCAL, address.bytes.data(), address.size());
  AddAttribute(request, IFA_ADDRESS, address.bytes.data(), address.size());
  return Send(request, fmt::format("RTM_NEWADDR({}/{} on index {})", address.Text(), prefix_length, ifindex));
}

}  // namespace sandprobe
