// The network families: canary egress (net.tcp, net.udp, net.dns), runtime unix sockets
// (net.unix) and the interfaces the sandbox sees (net.ifaces). See net_probes.h.
#include "probes/families.h"
#include "probes/net_probes.h"

namespace sandprobe {

std::vector<ProbeFamilyRow> NetworkProbeFamilies() {
  return {
      {"net.tcp", "NAME=ADDR:PORT...", CheckNetTcpArgs, RunNetTcp},
      {"net.udp", "NAME=ADDR:PORT...", CheckNetUdpArgs, RunNetUdp},
      {"net.dns", "NAME=ADDR:PORT...", CheckNetDnsArgs, RunNetDns},
      {"net.unix", "[PATH...]", CheckNetUnixArgs, RunNetUnix},
      {"net.ifaces", "", CheckNetIfacesArgs, RunNetIfaces},
      {"net.lab", "[--proxy env|URL] NAME...", CheckNetLabArgs, RunNetLab},
      {"net.bypass", "[--proxy env|URL] VARIANT=SPELLING...", CheckNetBypassArgs, RunNetBypass},
  };
}

}  // namespace sandprobe
