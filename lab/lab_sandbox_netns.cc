#include "lab/lab_sandbox_netns.h"

#include <net/if.h>
#include <sched.h>

#include <cerrno>

#include <fmt/format.h>

#include "contract/errno_name.h"
#include "lab/lab_names.h"
#include "lab/lab_netlink.h"

namespace sandprobe {
namespace {

constexpr char kLabEnd[] = "sp-sandbox";
constexpr char kSandboxEnd[] = "eth0";

IpAddress Parse(const char* text) { return *ParseIpAddress(text); }
// The lab's end of the pair.
IpAddress LabPeerV4() { return Parse("203.0.113.1"); }
IpAddress LabPeerV6() { return Parse("2001:db8:ff::1"); }

StatusOr<int> IndexOf(const char* name) {
  const int index = static_cast<int>(::if_nametoindex(name));
  if (index == 0) return Status::HarnessError(fmt::format("if_nametoindex({}): {}", name, ErrnoName(errno)));
  return index;
}

// The lab's address ranges (lab_names.h: the documentation ranges): the only destinations the
// sandbox's namespace has a route to. No default route: a packet to any other address fails at
// once with ENETUNREACH, so the canary probes toward the host's bridge are refused in
// microseconds instead of waiting out their timeouts in a lab that drops them (4 s per network
// suite), and still nothing leaves.
struct LabRange {
  const char* network;
  int prefix_length;
};
constexpr LabRange kLabRanges[] = {
    {"192.0.2.0", 24}, {"198.51.100.0", 24}, {"203.0.113.0", 24}, {"2001:db8::", 32}};

// Moves the calling thread into the namespace `fd` refers to.
Status Enter(int fd, const char* which) {
  if (::setns(fd, CLONE_NEWNET) == 0) return Status::Ok();
  return Status::HarnessError(fmt::format("setns({}, CLONE_NEWNET): {}", which, ErrnoName(errno)));
}

// The IPv6 routes across the pair in place before anyone connects (lab/lab_netns.h
// WaitForRoute): the kernel adds an address's own route and its peer's route from a work queue.
// On a thread in the sandbox's namespace: its own address (the lab's replies come to it; the
// routes to the lab are static, in place at once).
Status WaitForLabEnd() { return WaitForRoute(SandboxAddressV6(), RouteReady::kLocal); }
// On a thread in the lab's namespace: the sandbox's end, through the pair.
Status WaitForSandboxEnd() { return WaitForRoute(SandboxAddressV6(), RouteReady::kOutward); }

// On a thread inside a namespace: link `name` gets `local` <-> `peer` for both families, goes up,
// and (`route`) the lab's ranges are routed via the peers.
Status AddressLink(const char* name, const IpAddress& local4, const IpAddress& peer4, const IpAddress& local6,
                   const IpAddress& peer6, bool route) {
  StatusOr<int> index = IndexOf(name);
  if (!index.ok()) return index.status();
  // Up first: IPv6 adds an address's routes only on a link that is up.
  if (Status s = NetlinkSetLinkUp(*index); !s.ok()) return s;
  if (Status s = NetlinkAddPeerAddress(*index, local4, peer4); !s.ok()) return s;
  if (Status s = NetlinkAddPeerAddress(*index, local6, peer6); !s.ok()) return s;
  if (!route) return Status::Ok();
  for (const LabRange& range : kLabRanges) {
    const IpAddress network = Parse(range.network);
    if (Status s = NetlinkAddRoute(*index, network.v6 ? peer6 : peer4, network, range.prefix_length); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

IpAddress SandboxAddressV4() { return Parse("203.0.113.2"); }
IpAddress SandboxAddressV6() { return Parse("2001:db8:ff::2"); }

StatusOr<SandboxNetns> SandboxNetns::Create(const LabNamespace& lab) {
  // All on the one thread that made the namespace: the pair from here (its peer straight into
  // the lab), into the lab for that end, back here for this one, in the order Join keeps (the
  // lab's end first).
  StatusOr<LabNamespace> netns = LabNamespace::Create({}, [&](const LabNamespace& self) -> Status {
    if (Status s = NetlinkAddVethPair(kSandboxEnd, kLabEnd, lab.fd()); !s.ok()) return s;
    if (Status s = Enter(lab.fd(), "lab"); !s.ok()) return s;
    if (Status s = AddressLink(kLabEnd, LabPeerV4(), SandboxAddressV4(), LabPeerV6(), SandboxAddressV6(), false);
        !s.ok()) {
      return s;
    }
    if (Status s = Enter(self.fd(), "sandbox"); !s.ok()) return s;
    if (Status s = AddressLink(kSandboxEnd, SandboxAddressV4(), LabPeerV4(), SandboxAddressV6(), LabPeerV6(), true);
        !s.ok()) {
      return s;
    }
    if (Status s = WaitForLabEnd(); !s.ok()) return s;
    if (Status s = Enter(lab.fd(), "lab"); !s.ok()) return s;
    return WaitForSandboxEnd();
  });
  if (!netns.ok()) return netns.status().WithContext("sandbox network namespace");
  return SandboxNetns(std::move(*netns));
}

StatusOr<SandboxNetns> SandboxNetns::Join(const LabNamespace& lab, LabNamespace existing, const std::string& link) {
  SandboxNetns sandbox(std::move(existing));
  const IpAddress lab4 = LabPeerV4(), lab6 = LabPeerV6();
  Status status = lab.RunInside([&]() -> Status {
    if (Status s = NetlinkAddVethPair(kLabEnd, link.c_str(), sandbox.netns_.fd()); !s.ok()) return s;
    return AddressLink(kLabEnd, lab4, SandboxAddressV4(), lab6, SandboxAddressV6(), false);
  });
  if (status.ok()) {
    status = sandbox.netns_.RunInside([&] {
      if (Status s = AddressLink(link.c_str(), SandboxAddressV4(), lab4, SandboxAddressV6(), lab6, true); !s.ok()) {
        return s;
      }
      if (Status s = WaitForLabEnd(); !s.ok()) return s;
      return sandbox.netns_.KeepLinkTable();
    });
  }
  if (status.ok()) status = lab.RunInside(WaitForSandboxEnd);
  if (!status.ok()) return status.WithContext("sandbox network namespace");
  return sandbox;
}

std::string LabResolvConf() {
  return fmt::format("# sandprobe egress lab: the only resolver this sandbox has\nnameserver {}\nnameserver {}\n"
                     "options timeout:1 attempts:1\n",
                     LabResolverV4().Text(), LabResolverV6().Text());
}

std::string LabHostsFile() { return "127.0.0.1 localhost\n::1 localhost ip6-localhost\n"; }

}  // namespace sandprobe
