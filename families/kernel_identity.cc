// The kernel identity decision (kernel_identity.h): signal by signal, then the rule.
#include "families/kernel_identity.h"

#include <cstdlib>

#include <fmt/format.h>

namespace sandprobe {
namespace {

using nlohmann::json;

std::string Text(const json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// "release version" where both sides have the version, else the release alone (an older
// report's priv witness kept only the release).
std::optional<KernelSignal> Build(const json& probe, const json& host) {
  const std::string probe_release = Text(probe, "release"), host_release = Text(host, "release");
  if (probe_release.empty() || host_release.empty()) return std::nullopt;
  const bool versions = !Text(probe, "version").empty() && !Text(host, "version").empty();
  const std::string mine = versions ? probe_release + " " + Text(probe, "version") : probe_release;
  const std::string theirs = versions ? host_release + " " + Text(host, "version") : host_release;
  const bool differs = mine != theirs;
  return KernelSignal{"build", differs,
                      differs ? fmt::format("build '{}' (the harness's '{}')", mine, theirs)
                              : fmt::format("build '{}' as the harness's", mine)};
}

std::optional<KernelSignal> BootId(const json& probe, const json& host) {
  const std::string mine = Text(probe, "boot_id"), theirs = Text(host, "boot_id");
  if (mine.empty() || theirs.empty()) return std::nullopt;
  const bool differs = mine != theirs;
  return KernelSignal{"boot_id", differs,
                      differs ? fmt::format("boot_id {} (the harness's {})", mine, theirs)
                              : "boot_id as the harness's"};
}

std::optional<KernelSignal> BootTime(const json& probe, const json& host) {
  if (!probe.is_object() || !host.is_object()) return std::nullopt;
  auto mine = probe.find("boot_time_ms"), theirs = host.find("boot_time_ms");
  if (mine == probe.end() || theirs == host.end() || !mine->is_number_integer() || !theirs->is_number_integer()) {
    return std::nullopt;
  }
  const long long delta = mine->get<long long>() - theirs->get<long long>();
  const bool differs = std::llabs(delta) > kBootTimeSlackMs;
  return KernelSignal{"boot_time", differs,
                      differs ? fmt::format("booted {:.1f} s {} the harness's kernel", std::llabs(delta) / 1000.0,
                                            delta > 0 ? "after" : "before")
                              : "booted when the harness's kernel did"};
}

// One way: only a different device says anything.
std::optional<KernelSignal> NsfsDevice(const json& probe, const json& host) {
  const std::string mine = Text(probe, "nsfs_dev"), theirs = Text(host, "nsfs_dev");
  if (mine.empty() || theirs.empty() || mine == theirs) return std::nullopt;
  return KernelSignal{"nsfs_dev", true, fmt::format("nsfs device {} (the harness's {})", mine, theirs)};
}

std::string Join(const std::vector<KernelSignal>& signals, bool differing) {
  std::string out;
  for (const KernelSignal& s : signals) {
    if (s.differs != differing) continue;
    out += (out.empty() ? "" : ", ") + s.text;
  }
  return out;
}

}  // namespace

KernelComparison CompareKernels(const json& probe, const json& host) {
  KernelComparison c;
  for (auto signal : {Build, BootId, BootTime, NsfsDevice}) {
    if (std::optional<KernelSignal> s = signal(probe, host)) c.signals.push_back(std::move(*s));
  }
  c.known = !c.signals.empty();
  int differing = 0, same = 0;
  for (const KernelSignal& s : c.signals) (s.differs ? differing : same) += 1;
  c.another = differing >= 2 && differing > same;
  if (!c.known) {
    c.text = "the kernel could not be compared with the harness's (no identity signal on one side)";
  } else if (c.another) {
    c.text = "another kernel: " + Join(c.signals, true);
    if (same > 0) c.text += "; only " + Join(c.signals, false);
  } else if (differing > 0) {
    c.text = fmt::format("the harness's kernel ({}), although {}: not enough independent signals for "
                         "another kernel", Join(c.signals, false), Join(c.signals, true));
  } else {
    c.text = "the harness's kernel (" + Join(c.signals, false) + ")";
  }
  return c;
}

json HostKernelIdentity(const JudgeInput& in) {
  auto kernel = in.witnesses.observed.find("kernel");
  if (kernel != in.witnesses.observed.end() && kernel->second.is_object()) return kernel->second;
  auto priv = in.witnesses.observed.find("priv");
  if (priv == in.witnesses.observed.end() || !priv->second.is_object()) return nullptr;
  json old = json::object();
  if (priv->second.contains("host_kernel")) old["release"] = priv->second["host_kernel"];
  if (priv->second.contains("host_boot_id")) old["boot_id"] = priv->second["host_boot_id"];
  return old.empty() ? json(nullptr) : old;
}

KernelComparison LaunchKernel(const JudgeInput& in, Verdict& v) {
  // The families whose facts attach a "kernel" context, the richest first.
  static const char* const kCarriers[] = {"priv.namespaces", "priv.devices", "priv.kernel_knobs", "priv.cgroups",
                                          "priv.seccomp",    "priv.caps",    "priv.syscalls",     "res.cpu",
                                          "res.pids"};
  const json host = HostKernelIdentity(in);
  for (const char* family : kCarriers) {
    for (int index : in.facts.OfFamily(family)) {
      const json& fact = in.facts.Fact(index);
      auto kernel = fact.find("kernel");
      if (kernel == fact.end() || !kernel->is_object()) continue;
      // An older namespaces fact kept the boot_id beside the kernel context, not in it.
      json probe = *kernel;
      if (!probe.contains("boot_id") && fact.contains("boot_id")) probe["boot_id"] = fact["boot_id"];
      KernelComparison c = CompareKernels(probe, host);
      if (c.known) v.evidence.frame_indexes.push_back(index);
      return c;
    }
  }
  // A namespaces fact from before the kernel context: its boot_id is the only signal.
  for (int index : in.facts.OfFamily("priv.namespaces")) {
    const json& fact = in.facts.Fact(index);
    if (!fact.contains("boot_id")) continue;
    KernelComparison c = CompareKernels({{"boot_id", fact["boot_id"]}}, host);
    if (c.known) v.evidence.frame_indexes.push_back(index);
    return c;
  }
  return CompareKernels(nullptr, host);
}

}  // namespace sandprobe
