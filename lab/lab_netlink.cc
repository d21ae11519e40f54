#include "lab/lab_netlink.h"

#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
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
    rtmsg route;
  };
  char attributes[448];
};

rtattr* Tail(Request& request) {
  return reinterpret_cast<rtattr*>(reinterpret_cast<char*>(&request) + NLMSG_ALIGN(request.header.nlmsg_len));
}

void AddAttribute(Request& request, unsigned short type, const void* data, std::size_t size) {
  rtattr* rta = Tail(request);
  rta->rta_type = type;
  rta->rta_len = static_cast<unsigned short>(RTA_LENGTH(size));
  std::memcpy(RTA_DATA(rta), data, size);
  request.header.nlmsg_len = NLMSG_ALIGN(request.header.nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

// Opens a nested attribute; EndNest closes it (its length covers what was added in between).
rtattr* BeginNest(Request& request, unsigned short type) {
  rtattr* nest = Tail(request);
  AddAttribute(request, type, nullptr, 0);
  return nest;
}
void EndNest(Request& request, rtattr* nest) {
  nest->rta_len = static_cast<unsigned short>(reinterpret_cast<char*>(Tail(request)) - reinterpret_cast<char*>(nest));
}

// Sends `request` on a fresh NETLINK_ROUTE socket and reads the one reply into `reply`.
Status Exchange(Request& request, const std::string& what, char* reply, std::size_t size, ssize_t& got) {
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return Status::HarnessError(fmt::format("{}: socket(AF_NETLINK): {}", what, ErrnoName(errno)));
  request.header.nlmsg_flags |= NLM_F_REQUEST;
  request.header.nlmsg_seq = 1;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  Status result = Status::Ok();
  if (::sendto(fd, &request, request.header.nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    result = Status::HarnessError(fmt::format("{}: sendto(netlink): {}", what, ErrnoName(errno)));
  } else if ((got = ::recv(fd, reply, size, 0)) < 0) {
    result = Status::HarnessError(fmt::format("{}: recv(netlink): {}", what, ErrnoName(errno)));
  }
  ::close(fd);
  return result;
}

// Sends `request` on a fresh NETLINK_ROUTE socket and reads its acknowledgement.
Status Send(Request& request, const std::string& what) {
  request.header.nlmsg_flags |= NLM_F_ACK;
  alignas(nlmsghdr) char reply[1024];
  ssize_t got = 0;
  if (Status s = Exchange(request, what, reply, sizeof reply, got); !s.ok()) return s;
  const auto* header = reinterpret_cast<const nlmsghdr*>(reply);
  if (!NLMSG_OK(header, static_cast<unsigned>(got)) || header->nlmsg_type != NLMSG_ERROR) {
    return Status::HarnessError(fmt::format("{}: no acknowledgement from the kernel", what));
  }
  if (const int error = static_cast<const nlmsgerr*>(NLMSG_DATA(header))->error; error != 0) {
    return Status::HarnessError(fmt::format("{}: {}", what, ErrnoName(-error)));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<RouteLookup> NetlinkLookUpRoute(const IpAddress& destination) {
  Request request{};
  request.header.nlmsg_len = NLMSG_LENGTH(sizeof(rtmsg));
  request.header.nlmsg_type = RTM_GETROUTE;
  request.route.rtm_family = destination.v6 ? AF_INET6 : AF_INET;
  request.route.rtm_dst_len = destination.v6 ? 128 : 32;
  AddAttribute(request, RTA_DST, destination.bytes.data(), destination.size());
  const std::string what = fmt::format("RTM_GETROUTE({})", destination.Text());
  alignas(nlmsghdr) char reply[4096];
  ssize_t got = 0;
  if (Status s = Exchange(request, what, reply, sizeof reply, got); !s.ok()) return s;
  const auto* header = reinterpret_cast<const nlmsghdr*>(reply);
  if (!NLMSG_OK(header, static_cast<unsigned>(got))) {
    return Status::HarnessError(fmt::format("{}: no answer from the kernel", what));
  }
  RouteLookup lookup;
  if (header->nlmsg_type == NLMSG_ERROR) {
    lookup.error = -static_cast<const nlmsgerr*>(NLMSG_DATA(header))->error;
    if (lookup.error == 0) return Status::HarnessError(fmt::format("{}: acknowledged without a route", what));
  } else if (header->nlmsg_type == RTM_NEWROUTE) {
    lookup.type = static_cast<const rtmsg*>(NLMSG_DATA(header))->rtm_type;
  } else {
    return Status::HarnessError(fmt::format("{}: unexpected answer type {}", what, header->nlmsg_type));
  }
  return lookup;
}

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

Status NetlinkAddVethPair(const std::string& name, const std::string& peer_name, int peer_netns_fd) {
  Request request{};
  request.header.nlmsg_len = NLMSG_LENGTH(sizeof(ifinfomsg));
  request.header.nlmsg_type = RTM_NEWLINK;
  request.header.nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
  request.link.ifi_family = AF_UNSPEC;
  AddAttribute(request, IFLA_IFNAME, name.c_str(), name.size() + 1);
  rtattr* linkinfo = BeginNest(request, IFLA_LINKINFO);
  AddAttribute(request, IFLA_INFO_KIND, "veth", 5);
  rtattr* data = BeginNest(request, IFLA_INFO_DATA);
  rtattr* peer = BeginNest(request, VETH_INFO_PEER);
  // The peer's own ifinfomsg comes first in VETH_INFO_PEER, then its attributes.
  request.header.nlmsg_len += NLMSG_ALIGN(sizeof(ifinfomsg));
  AddAttribute(request, IFLA_IFNAME, peer_name.c_str(), peer_name.size() + 1);
  const std::uint32_t fd = static_cast<std::uint32_t>(peer_netns_fd);
  AddAttribute(request, IFLA_NET_NS_FD, &fd, sizeof fd);
  EndNest(request, peer);
  EndNest(request, data);
  EndNest(request, linkinfo);
  return Send(request, fmt::format("RTM_NEWLINK(veth {} peer {})", name, peer_name));
}

Status NetlinkAddPeerAddress(int ifindex, const IpAddress& local, const IpAddress& peer) {
  Request request{};
  request.header.nlmsg_len = NLMSG_LENGTH(sizeof(ifaddrmsg));
  request.header.nlmsg_type = RTM_NEWADDR;
  request.header.nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
  request.addr.ifa_family = local.v6 ? AF_INET6 : AF_INET;
  request.addr.ifa_prefixlen = local.v6 ? 128 : 32;
  request.addr.ifa_flags = local.v6 ? IFA_F_NODAD : 0;
  request.addr.ifa_index = static_cast<unsigned>(ifindex);
  AddAttribute(request, IFA_LOCAL, local.bytes.data(), local.size());
  AddAttribute(request, IFA_ADDRESS, peer.bytes.data(), peer.size());
  return Send(request, fmt::format("RTM_NEWADDR({} peer {} on index {})", local.Text(), peer.Text(), ifindex));
}

Status NetlinkAddRoute(int ifindex, const IpAddress& gateway, const IpAddress& destination, int prefix_length) {
  Request request{};
  request.header.nlmsg_len = NLMSG_LENGTH(sizeof(rtmsg));
  request.header.nlmsg_type = RTM_NEWROUTE;
  request.header.nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
  rtmsg* route = &request.route;
  route->rtm_family = gateway.v6 ? AF_INET6 : AF_INET;
  route->rtm_table = RT_TABLE_MAIN;
  route->rtm_protocol = RTPROT_STATIC;
  route->rtm_scope = RT_SCOPE_UNIVERSE;
  route->rtm_type = RTN_UNICAST;
  route->rtm_flags = RTNH_F_ONLINK;  // the gateway is the peer at the link's other end
  route->rtm_dst_len = static_cast<unsigned char>(prefix_length);
  if (prefix_length > 0) AddAttribute(request, RTA_DST, destination.bytes.data(), destination.size());
  AddAttribute(request, RTA_GATEWAY, gateway.bytes.data(), gateway.size());
  const std::uint32_t oif = static_cast<std::uint32_t>(ifindex);
  AddAttribute(request, RTA_OIF, &oif, sizeof oif);
  return Send(request, fmt::format("RTM_NEWROUTE({}/{} via {} index {})", destination.Text(), prefix_length,
                                   gateway.Text(), ifindex));
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
