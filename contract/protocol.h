// The host/sandbox protocol: what the probe (probes/) and the host side must spell the
// same way, defined once for both sides of the sandbox boundary. The probe's family names are
// the other half of the contract; families/probe_contract_test.cc checks that every family a
// shipped suite expands to is one the built probe knows (`sandprobe-probe --families`).
#pragma once

#include <array>
#include <string_view>

namespace sandprobe {

// A frame: `@@sandprobe <NONCE> <json object>\n` (contract/frame_writer.h writes, contract/frame_reader.h reads).
inline constexpr std::string_view kFrameMarker = "@@sandprobe";
inline constexpr std::string_view kFramePrefix = "@@sandprobe ";
// A last line `@@sandprobe-exit N` carrying the probe's exit status, for sandboxes whose own
// exit status says nothing (a VM: scripts/microvm/init writes it; contract/frame_reader.h reads it).
inline constexpr std::string_view kExitLinePrefix = "@@sandprobe-exit ";

// DNS probes ask for <nonce>.sandprobe.test, and only the harness's canary responder
// (witnesses/witness_net_listeners.cc) answers names under it.
inline constexpr std::string_view kDnsZone = "sandprobe.test";

// The container runtimes' well-known control sockets: the probe tries them (net.unix with no
// paths, priv.runtime_sockets), the net witness looks for them on the host.
inline constexpr std::array<std::string_view, 8> kRuntimeSocketPaths = {
    "/var/run/docker.sock",           "/run/docker.sock",
    "/run/containerd/containerd.sock", "/var/run/containerd/containerd.sock",
    "/run/podman/podman.sock",        "/var/run/podman/podman.sock",
    "/run/crio/crio.sock",            "/var/run/crio/crio.sock",
};

}  // namespace sandprobe
