// LabNames: the names the egress lab's resolver answers, each with its lab addresses, made once
// per run from the policy's network.allow. Two kinds:
//   allowed  - a name the policy lets the sandbox reach (an exact entry, or a sample subdomain of
//              a "*." entry); it resolves to addresses in 192.0.2.0/24 and 2001:db8:a::/64;
//   control  - a name the policy does not allow, made to look like an allowed one (look-alikes,
//              prefix and suffix tricks) or unrelated; it resolves to 198.51.100.0/24 and
//              2001:db8:c::/64, so a receipt at a control address proves a denied name was reached.
// Every address is in a documentation range (RFC 5737, RFC 3849): never routed anywhere real.
// The lab's resolver listens on 203.0.113.53 and 2001:db8:53::53.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "load/network_allow.h"
#include "model/status.h"

namespace sandprobe {

enum class LabNameKind {
  kAllowed,          // allowed by a policy entry
  kUnrelated,        // a name unlike any allowed one ("unrelated.evil.test")
  kAllowedAsPrefix,  // "ALLOWED.evil.test": the allowed name as the start of a denied one
  kGluedPrefix,      // "evilALLOWED": a denied label glued before the allowed name
  kGluedSuffix,      // "ALLOWED-evil.test": the allowed name glued before a denied suffix
  kSubdomain,        // "evil.ALLOWED": a subdomain of an exactly allowed name (another name)
  kWildcardBase,     // "base" of a "*.base" entry: the wildcard allows strict subdomains only
  kRebindTarget,     // "rebound.sandprobe-control.test": where an armed rebinding points an allowed
                     // name (lab/lab.h); a control address of its own, so no other check sees it
};
std::string_view LabNameKindName(LabNameKind kind);  // "allowed", "unrelated", ...

struct LabName {
  std::string name;      // lower case, no trailing dot
  LabNameKind kind = LabNameKind::kAllowed;
  std::string based_on;  // the policy entry's text it is made from; "" for kUnrelated
  IpAddress v4;
  IpAddress v6;
};

struct LabNames {
  std::vector<LabName> names;  // allowed ones first, in policy order; then the controls
  // The name `query` means (any case, a trailing dot ignored), or nullptr.
  const LabName* Find(std::string_view query) const;
};

// At most this many names of each kind (allowed, control): the address ranges hold 240 each.
constexpr std::size_t kMaxLabNamesPerRange = 200;

// The lab's names for `allow` (canary and address entries add none). An error when the policy
// names more than kMaxLabNamesPerRange names.
StatusOr<LabNames> MakeLabNames(const std::vector<AllowEntry>& allow);

// The resolver's addresses: 203.0.113.53 and 2001:db8:53::53.
IpAddress LabResolverV4();
IpAddress LabResolverV6();

}  // namespace sandprobe
