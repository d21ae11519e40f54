// The network families, host side: egress to the harness's canaries (net.tcp, net.udp,
// net.dns; family_net_egress.cc) and local exposure (net.unix, net.ifaces; family_net_local.cc).
//
// Canary endpoint names a policy's network.allow may list (see witnesses/witness_net.h):
//   "loopback-tcp", "loopback-udp": the host's 127.0.0.1. Reaching it means the sandbox shares
//       the host's network namespace (or forwards to it), so `egress: allow` does NOT imply it;
//       it is expected only when listed or when host.network_namespace is "shared".
//   "bridge-tcp", "bridge-udp": this host's address on the sandbox's link (docker0's gateway,
//       or the profile var canary_bridge_ip). It stands for "another machine": expected when
//       listed or when egress is "allow".
// DNS is judged by network.dns (responders "loopback-dns", "bridge-dns"; "filtered" resolves
// the canary zone only when network.allow names it). Every other allow entry (a name, a
// wildcard, an address, a network) and network.proxy are never contacted: the egress lab that
// would judge them is not built yet, so each becomes a skipped check saying so (never a pass).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "families/family.h"

namespace sandprobe {

std::vector<FamilyRow> NetworkEgressFamilies();  // family_net_egress.cc
std::vector<FamilyRow> NetworkLocalFamilies();   // family_net_local.cc
std::vector<FamilyRow> NetworkLabFamilies();     // family_net_lab.cc (net.lab, the egress lab)
std::vector<FamilyRow> NetworkBypassFamilies();  // family_net_bypass.cc (net.bypass, in the lab)

// Puts "--proxy SPEC" in front of a lab family's arguments when the policy declares the proxy
// the sandbox's traffic goes through (network.proxy: "env" or its URL): the probe then sends
// its requests through it, as the sandbox's programs are meant to.
void AddLabProxy(const ExpandInput& in, ProbeInvocation& invocation);

// Read from the lab witness (observed["lab"]) without trusting it: lab[key] when it is an
// array, else an empty one.
const nlohmann::json& LabList(const nlohmann::json& lab, const char* key);
// "203.0.113.2:40000" or "[2001:db8:ff::2]:40000" (a receipt's peer) -> the address alone.
std::string AddressOfPeer(const std::string& socket_text);
// Whether a receipt's peer ("ADDRESS:PORT") is one of the sandbox's own lab addresses.
bool PeerIsSandbox(const nlohmann::json& lab, const std::string& peer);

// The "net" witness's observations, or null (verdict set to error) when it reported none.
const nlohmann::json* NetObservations(const JudgeInput& in, Verdict& v);
// The well-known runtime socket paths (witness_net.cc; the probe tries the same list).
const std::vector<std::string>& RuntimeSocketPaths();

}  // namespace sandprobe
