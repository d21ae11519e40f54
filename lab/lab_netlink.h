// The two rtnetlink requests the lab needs to set up a namespace it just made: bring a link up,
// put an address on it. They act on the network namespace of the calling thread (a netlink
// socket belongs to the namespace it was opened in), so lab/lab_netns.cc calls them from a
// thread that entered the lab's namespace, never from one in the host's.
#pragma once

#include "load/network_allow.h"
#include "model/status.h"

namespace sandprobe {

// RTM_NEWLINK with IFF_UP on link `ifindex`. Errors name the request and the errno.
Status NetlinkSetLinkUp(int ifindex);
// RTM_NEWADDR: `address`/`prefix_length` on link `ifindex` (IPv6 without duplicate address
// detection, so it is usable at once).
Status NetlinkAddAddress(int ifindex, const IpAddress& address, int prefix_length);

}  // namespace sandprobe
