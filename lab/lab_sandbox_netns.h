// SandboxNetns: the network namespace a process sandbox (bwrap, firejail, Deno, Node) runs in
// during a lab run (issue 28 item 3): its own loopback plus one veth link, "eth0", whose other
// end ("sp-sandbox") is in the lab's namespace. Its default routes lead into the lab, so every
// packet it sends reaches the lab or is dropped there; the lab has no way out (lab/lab_netns.h).
//
//   sandbox eth0  203.0.113.2      <-> lab sp-sandbox 203.0.113.1       (IPv4, /32 peers)
//                 2001:db8:ff::2   <->                2001:db8:ff::1    (IPv6, /128 peers)
//
// LabResolvConf() and LabHostsFile() are what the sandbox's /etc/resolv.conf and /etc/hosts
// must say; the launcher bind-mounts them in a private mount namespace only (the host's files
// are never touched).
#pragma once

#include <string>

#include "lab/lab_netns.h"

namespace sandprobe {

class SandboxNetns {
 public:
  // A new namespace joined to `lab` by a veth pair, addressed and routed as above. Freed with
  // this object (the veth pair goes with the namespace).
  static StatusOr<SandboxNetns> Create(const LabNamespace& lab);
  // The same for a namespace that already exists (a docker lab gateway's, run/run_lab_gateway.h):
  // the sandbox end of the pair is named `link` there ("eth0"; another name where docker already
  // made an eth0). The veth pair goes when the namespace does, with this object's descriptor
  // and whatever else holds it (the container).
  static StatusOr<SandboxNetns> Join(const LabNamespace& lab, LabNamespace existing, const std::string& link = "eth0");
  const LabNamespace& network_namespace() const { return netns_; }

 private:
  explicit SandboxNetns(LabNamespace netns) : netns_(std::move(netns)) {}
  LabNamespace netns_;
};

IpAddress SandboxAddressV4();  // 203.0.113.2
IpAddress SandboxAddressV6();  // 2001:db8:ff::2

// "nameserver 203.0.113.53\nnameserver 2001:db8:53::53\n..." for the sandbox's /etc/resolv.conf.
std::string LabResolvConf();
// localhost only: lab names are found through the lab's resolver, as a real host finds them.
std::string LabHostsFile();

}  // namespace sandprobe
