// The context privilege facts are read in (see family_priv.h): which user namespace the probe
// answered from, which kernel answered its syscalls (families/kernel_identity.h), and which
// backend and kernel versions the harness runs on. Pure functions over the facts and the
// "priv" and "kernel" witnesses.
#include <cctype>
#include <sstream>

#include <fmt/format.h>

#include "families/family_priv.h"
#include "families/kernel_identity.h"

namespace sandprobe {
namespace {

using nlohmann::json;

// One blank between fields, no newline: "0 0 4294967295".
std::string OneLine(const std::string& text) {
  std::istringstream in(text);
  std::string word, out;
  while (in >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

// The initial user namespace maps every uid to itself.
constexpr const char* kIdentityMap = "0 0 4294967295";

}  // namespace

std::optional<long> MapToParent(const std::string& uid_map, long uid) {
  std::istringstream lines(uid_map);
  long inside = 0, outside = 0, count = 0;
  while (lines >> inside >> outside >> count) {
    if (uid >= inside && uid - inside < count) return outside + (uid - inside);
  }
  return std::nullopt;
}

UsernsView ReadUserns(const JudgeInput& in, const json& fact) {
  UsernsView u;
  if (!fact.is_object() || !fact.contains("euid") || !fact["euid"].is_number()) {
    u.text = "no user namespace context reported";
    return u;
  }
  u.euid = fact["euid"].get<long>();
  u.cap_sys_admin = fact.value("cap_sys_admin", false);
  const std::string link = fact.value("link", "");
  const std::string map = OneLine(fact.value("uid_map", ""));
  const json& w = PrivWitnessFacts(in);
  const std::string harness = w.is_object() && w.contains("host_namespaces") ? w["host_namespaces"].value("user", "") : "";
  const bool harness_initial = w.is_object() && w.value("harness_userns_initial", false);
  if (!link.empty() && !harness.empty() && link == harness) {
    u.place = harness_initial ? UsernsPlace::kInitial : UsernsPlace::kChild;
  } else if (!link.empty() && !harness.empty()) {
    u.place = UsernsPlace::kChild;
  } else if (map == kIdentityMap) {
    u.place = UsernsPlace::kInitial;  // no link to compare: inferred from the identity map
  } else if (!map.empty()) {
    u.place = UsernsPlace::kChild;
  }
  if (u.place == UsernsPlace::kChild) u.host_euid = MapToParent(fact.value("uid_map", ""), u.euid);
  const std::string where = u.place == UsernsPlace::kInitial ? "the initial user namespace"
                            : u.place == UsernsPlace::kChild ? "a child user namespace"
                                                             : "an unknown user namespace";
  u.text = fmt::format("{} ({}{}), euid {}{}{}", where, link.empty() ? "no link" : link,
                       map.empty() ? "" : ", uid_map '" + map + "'", u.euid,
                       u.place != UsernsPlace::kChild ? ""
                       : u.host_euid                  ? fmt::format(" -> host uid {}", *u.host_euid)
                                                      : std::string(" (unmapped)"),
                       u.cap_sys_admin ? ", CAP_SYS_ADMIN" : "");
  return u;
}

WriteReading SysctlWrite(const UsernsView& u) {
  switch (u.place) {
    case UsernsPlace::kInitial:
      return {HostWrite::kHostRoot, "as the host sees it: " + u.text};
    case UsernsPlace::kChild:
      if (u.host_euid && *u.host_euid == 0) {
        return {HostWrite::kHostRoot, "its euid is the host's root: " + u.text +
                                          "; sysctls check the global euid, so this write would reach the host"};
      }
      return {HostWrite::kOwnNamespace,
              "only in its own user namespace: " + u.text +
                  "; sysctls check the euid against the host's root, which this one is not"};
    case UsernsPlace::kUnknown:
      return {HostWrite::kHostRoot, u.text + ": taken as the host's"};
  }
  return {HostWrite::kHostRoot, u.text};
}

WriteReading ReleaseAgentWrite(const UsernsView& u, const std::string& host_kernel) {
  const std::optional<VersionNumber> kernel = ParseVersion(host_kernel);
  const bool checks_init_ns = kernel && kernel->AtLeast(5, 17);
  const std::string kernel_text = host_kernel.empty() ? "the host's kernel unknown" : "host kernel " + host_kernel;
  switch (u.place) {
    case UsernsPlace::kInitial:
      if (u.euid == 0 || u.cap_sys_admin || !checks_init_ns) {
        return {HostWrite::kHostRoot, "as the host sees it: " + u.text};
      }
      return {HostWrite::kOwnNamespace, fmt::format("by its file mode only: {}; since Linux 5.17 ({}) a "
                                                    "release_agent write needs CAP_SYS_ADMIN", u.text, kernel_text)};
    case UsernsPlace::kChild:
      if (checks_init_ns) {
        return {HostWrite::kOwnNamespace,
                fmt::format("only in its own user namespace: {}; since Linux 5.17 ({}) the kernel refuses "
                            "release_agent writes without CAP_SYS_ADMIN in the initial user namespace",
                            u.text, kernel_text)};
      }
      if (u.host_euid && *u.host_euid == 0) {
        return {HostWrite::kHostRoot, fmt::format("its euid is the host's root: {}; before Linux 5.17 ({}) "
                                                  "file permission was the only check (CVE-2022-0492)",
                                                  u.text, kernel_text)};
      }
      return {HostWrite::kOwnNamespace, "only in its own user namespace: " + u.text};
    case UsernsPlace::kUnknown:
      return {HostWrite::kHostRoot, u.text + ": taken as the host's"};
  }
  return {HostWrite::kHostRoot, u.text};
}

std::optional<std::string> AnotherKernelOf(const JudgeInput& in, Verdict& v) {
  const KernelComparison kernel = LaunchKernel(in, v);
  if (!kernel.another) return std::nullopt;
  v.evidence.witness_facts.push_back("the harness's kernel: " + HostKernelIdentity(in).dump());
  return kernel.text;
}

std::optional<VersionNumber> ParseVersion(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size() && !std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == text.size()) return std::nullopt;
  int parts[3] = {0, 0, 0};
  for (int k = 0; k < 3 && i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++k) {
    int n = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && n < 100000) n = n * 10 + (text[i++] - '0');
    parts[k] = n;
    if (i < text.size() && text[i] == '.') ++i;
  }
  return VersionNumber{parts[0], parts[1], parts[2]};
}

std::optional<VersionNumber> BackendVersion(const JudgeInput& in) {
  const json& w = PrivWitnessFacts(in);
  if (!w.is_object() || !w.contains("backend_version") || !w["backend_version"].is_string()) return std::nullopt;
  return ParseVersion(w["backend_version"].get<std::string>());
}

std::string HostKernel(const JudgeInput& in) {
  const json& w = PrivWitnessFacts(in);
  return w.is_object() ? w.value("host_kernel", "") : "";
}

}  // namespace sandprobe
