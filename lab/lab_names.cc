#include "lab/lab_names.h"

#include <set>

#include <fmt/format.h>

namespace sandprobe {
namespace {

constexpr std::string_view kEvil = "evil.test";
constexpr std::string_view kUnrelatedNames[] = {"unrelated.evil.test", "sandprobe-control.test"};
// The first host number of each range: .10 onwards, so .1-.9 and .53 stay free for the lab.
constexpr int kFirstHost = 10;

IpAddress V4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  IpAddress ip;
  ip.bytes = {a, b, c, d};
  return ip;
}

// 2001:db8:GROUP::HOST
IpAddress V6(std::uint8_t group, std::uint8_t host) {
  IpAddress ip;
  ip.v6 = true;
  ip.bytes = {0x20, 0x01, 0x0d, 0xb8, 0x00, group, 0, 0, 0, 0, 0, 0, 0, 0, 0, host};
  return ip;
}

// Adds `name` unless it is already there, is not a host name, or the policy allows it (a
// control must be denied). Addresses come from the range of its kind.
void Add(LabNames& out, std::set<std::string>& seen, const std::vector<AllowEntry>& allow,
         std::string name, LabNameKind kind, std::string based_on, std::size_t& next) {
  if (!IsHostName(name) || !seen.insert(name).second) return;
  const bool allowed = kind == LabNameKind::kAllowed;
  if (!allowed && AllowListNamesName(allow, name)) return;
  const auto host = static_cast<std::uint8_t>(kFirstHost + next++);
  LabName entry{std::move(name), kind, std::move(based_on),
                allowed ? V4(192, 0, 2, host) : V4(198, 51, 100, host), V6(allowed ? 0xa : 0xc, host)};
  out.names.push_back(std::move(entry));
}

}  // namespace

std::string_view LabNameKindName(LabNameKind kind) {
  switch (kind) {
    case LabNameKind::kAllowed: return "allowed";
    case LabNameKind::kUnrelated: return "unrelated";
    case LabNameKind::kAllowedAsPrefix: return "allowed-as-prefix";
    case LabNameKind::kGluedPrefix: return "glued-prefix";
    case LabNameKind::kGluedSuffix: return "glued-suffix";
    case LabNameKind::kSubdomain: return "subdomain";
    case LabNameKind::kWildcardBase: return "wildcard-base";
    case LabNameKind::kRebindTarget: return "rebind-target";
  }
  return "?";
}

const LabName* LabNames::Find(std::string_view query) const {
  const std::string name = CanonicalName(query);
  for (const LabName& entry : names) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

StatusOr<LabNames> MakeLabNames(const std::vector<AllowEntry>& allow) {
  LabNames out;
  std::set<std::string> seen;
  std::size_t allowed = 0;
  // The name each allowed entry stands for: itself, or a sample strict subdomain of a wildcard.
  std::vector<std::pair<std::string, const AllowEntry*>> bases;
  for (const AllowEntry& entry : allow) {
    switch (entry.kind) {
      case AllowKind::kName: bases.emplace_back(entry.host, &entry); break;
      case AllowKind::kWildcard: bases.emplace_back("sp-lab." + entry.host, &entry); break;
      case AllowKind::kCanary:
      case AllowKind::kAddress:
      case AllowKind::kNetwork: break;
    }
  }
  if (bases.size() > kMaxLabNamesPerRange) {
    return Status::Error(fmt::format("network.allow names {} host names; the egress lab serves at most {}",
                                     bases.size(), kMaxLabNamesPerRange));
  }
  for (const auto& [name, entry] : bases) {
    Add(out, seen, allow, name, LabNameKind::kAllowed, entry->text, allowed);
  }
  std::size_t controls = 0;
  for (std::string_view name : kUnrelatedNames) {
    Add(out, seen, allow, std::string(name), LabNameKind::kUnrelated, "", controls);
  }
  Add(out, seen, allow, "rebound.sandprobe-control.test", LabNameKind::kRebindTarget, "", controls);
  for (const auto& [name, entry] : bases) {
    if (controls + 5 > kMaxLabNamesPerRange) break;  // the controls of the first names suffice
    const std::string& text = entry->text;
    Add(out, seen, allow, fmt::format("{}.{}", name, kEvil), LabNameKind::kAllowedAsPrefix, text, controls);
    Add(out, seen, allow, "evil" + name, LabNameKind::kGluedPrefix, text, controls);
    Add(out, seen, allow, fmt::format("{}-{}", name, kEvil), LabNameKind::kGluedSuffix, text, controls);
    Add(out, seen, allow, "evil." + name, LabNameKind::kSubdomain, text, controls);
    if (entry->kind == AllowKind::kWildcard) {
      Add(out, seen, allow, entry->host, LabNameKind::kWildcardBase, text, controls);
    }
  }
  return out;
}

IpAddress LabResolverV4() { return V4(203, 0, 113, 53); }
IpAddress LabResolverV6() { return V6(0x53, 0x53); }

}  // namespace sandprobe
