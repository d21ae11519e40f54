#include "contract/probe_runtime.h"

namespace sandprobe {
namespace {

constexpr ProbeRuntimeRow kRuntimes[] = {
    {ProbeRuntime::kNative, "native", "sandprobe-probe", ""},
    {ProbeRuntime::kWasi, "wasi", "sandprobe-probe.wasm", "-wasi"},
    {ProbeRuntime::kJs, "js", "sandprobe-probe.js", "-js"},
    {ProbeRuntime::kPython, "python", "sandprobe_probe.py", "-python"},
};

}  // namespace

std::span<const ProbeRuntimeRow> ProbeRuntimes() { return kRuntimes; }

const ProbeRuntimeRow& ProbeRuntimeInfo(ProbeRuntime runtime) {
  for (const ProbeRuntimeRow& row : kRuntimes) {
    if (row.runtime == runtime) return row;
  }
  return kRuntimes[0];  // unreachable: every enumerator has a row (names_test)
}

std::string_view ProbeRuntimeName(ProbeRuntime runtime) { return ProbeRuntimeInfo(runtime).name; }

std::string_view ProbeFileName(ProbeRuntime runtime) { return ProbeRuntimeInfo(runtime).file; }

std::optional<ProbeRuntime> ParseProbeRuntime(std::string_view name) {
  for (const ProbeRuntimeRow& row : kRuntimes) {
    if (row.name == name) return row.runtime;
  }
  return std::nullopt;
}

}  // namespace sandprobe
