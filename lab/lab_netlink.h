// The rtnetlink requests the lab needs to set up a namespace it just made: bring a link up, put
// an address on it, add a route, ask which route an address takes. They act on the network namespace of the calling thread (a netlink
// socket belongs to the namespace it was opened in), so lab/lab_netns.cc calls them from a
// thread that entered the lab's namespace, never from one in the host's.
#pragma once

#include <string>

#include "load/network_allow.h"
#include "model/status.h"

namespace sandprobe {

// RTM_NEWLINK with IFF_UP on link `ifindex`. Errors name the request and the errno.
Status NetlinkSetLinkUp(int ifindex);
// RTM_NEWADDR: `address`/`prefix_length` on link `ifindex` (IPv6 without duplicate address
// detection, so it is usable at once).
Status NetlinkAddAddress(int ifindex, const IpAddress& address, int prefix_length);

// RTM_NEWLINK: a veth pair, `name` in the caller's namespace and `peer_name` in the namespace
// `peer_netns_fd` refers to. Both ends start down.
Status NetlinkAddVethPair(const std::string& name, const std::string& peer_name, int peer_netns_fd);
// RTM_NEWADDR: `local` (/32 or /128) on link `ifindex` with `peer` as the other end of the link,
// so the kernel adds the route to `peer` through it.
Status NetlinkAddPeerAddress(int ifindex, const IpAddress& local, const IpAddress& peer);
// The kernel's answer to RTM_GETROUTE for `destination` in the calling thread's namespace: the
// route a packet to it would take now. `type` is RTN_LOCAL (delivered in this namespace) or
// RTN_UNICAST (sent out a link); `error` is the errno of a lookup that found none (ENETUNREACH).
// Note: an address on loopback also gets a prefix route that the kernel turns into a reject route
// of type RTN_UNICAST (its packets are dropped): only RTN_LOCAL says a loopback address is usable.
struct RouteLookup {
  int type = 0;   // RTN_* of linux/rtnetlink.h
  int error = 0;  // errno, when the lookup found no route
};
StatusOr<RouteLookup> NetlinkLookUpRoute(const IpAddress& destination);

// RTM_NEWROUTE: `destination`/`prefix_length` (of `gateway`'s family) via `gateway` on link
// `ifindex`; prefix length 0 is the default route.
Status NetlinkAddRoute(int ifindex, const IpAddress& gateway, const IpAddress& destination, int prefix_length);

}  // namespace sandprobe
