// The probe runtimes: the implementations of the probe contract, one per kind of sandbox they
// can run in (docs/probe-protocol.md). A profile names the one it runs ("probe": "js"); the
// probe says which it is in its hello fact ("runtime": "js"); the build puts each in a
// directory of its own (load/data_dir.h): the names and files here are what both sides spell.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace sandprobe {

enum class ProbeRuntime {
  kNative,  // "native": the static C++ binary (probes/), for sandboxes that run Linux programs
  kWasi,    // "wasi": the same sources built for wasm32-wasi, for WebAssembly runtimes
  kJs,      // "js": probes/js/sandprobe-probe.js, for Deno and Node with their permission flags
  kPython,  // "python": probes/python/sandprobe_probe.py, for in-process Python sandboxes
};

struct ProbeRuntimeRow {
  ProbeRuntime runtime;
  std::string_view name;        // as profiles and the hello spell it
  std::string_view file;        // the probe's file name in its directory
  std::string_view dir_suffix;  // its directory: the native probe's, plus this ("probe-js")
};

// Every runtime, native first.
std::span<const ProbeRuntimeRow> ProbeRuntimes();
const ProbeRuntimeRow& ProbeRuntimeInfo(ProbeRuntime runtime);
std::string_view ProbeRuntimeName(ProbeRuntime runtime);  // "native", "js", ...
std::string_view ProbeFileName(ProbeRuntime runtime);     // "sandprobe-probe", ...
std::optional<ProbeRuntime> ParseProbeRuntime(std::string_view name);

}  // namespace sandprobe
