// The closed choices of a policy (and a profile's backend), as types: a misspelt value no longer compiles into a check
// that silently takes the other branch ("allowed" == "allow" is false). Each enum has one
// table of its JSON names; the loader reads through it (load/policy.cc) and messages name
// values with NameOf.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace sandprobe {

template <typename E>
struct NamedValue {
  std::string_view name;
  E value;
};

// network.egress, network.unix_sockets, privileges.user_namespaces
enum class Permission { kDeny, kAllow };
// network.dns: no name resolution at all; any name; only the names network.allow lets the
// sandbox reach (resolved by the sandbox or by its proxy: a query for any other name that reaches
// a resolver is a leak).
enum class DnsPermission { kDeny, kAllow, kFiltered };
// host.pid_namespace, host.network_namespace
enum class NamespaceSharing { kIsolated, kShared };
// host.env_secrets, host.runtime_sockets
enum class Visibility { kHidden, kVisible };
// privileges.seccomp: a seccomp filter is required, or optional
enum class SeccompRequirement { kRequired, kOptional };
// persistence.background_processes: gone when the launch ends, alive in the next turn only,
// alive in a new session too
enum class BackgroundProcesses { kDie, kSurviveTurns, kSurvive };

inline constexpr NamedValue<Permission> kPermissionNames[] = {{"deny", Permission::kDeny},
                                                              {"allow", Permission::kAllow}};
inline constexpr NamedValue<DnsPermission> kDnsPermissionNames[] = {
    {"deny", DnsPermission::kDeny}, {"allow", DnsPermission::kAllow}, {"filtered", DnsPermission::kFiltered}};
inline constexpr NamedValue<NamespaceSharing> kNamespaceSharingNames[] = {
    {"isolated", NamespaceSharing::kIsolated}, {"shared", NamespaceSharing::kShared}};
inline constexpr NamedValue<Visibility> kVisibilityNames[] = {{"hidden", Visibility::kHidden},
                                                              {"visible", Visibility::kVisible}};
inline constexpr NamedValue<SeccompRequirement> kSeccompRequirementNames[] = {
    {"required", SeccompRequirement::kRequired}, {"optional", SeccompRequirement::kOptional}};
inline constexpr NamedValue<BackgroundProcesses> kBackgroundProcessesNames[] = {
    {"die", BackgroundProcesses::kDie},
    {"survive_turns", BackgroundProcesses::kSurviveTurns},
    {"survive", BackgroundProcesses::kSurvive}};

inline constexpr std::span<const NamedValue<Permission>> NamesOf(Permission) { return kPermissionNames; }
inline constexpr std::span<const NamedValue<DnsPermission>> NamesOf(DnsPermission) { return kDnsPermissionNames; }
inline constexpr std::span<const NamedValue<NamespaceSharing>> NamesOf(NamespaceSharing) { return kNamespaceSharingNames; }
inline constexpr std::span<const NamedValue<Visibility>> NamesOf(Visibility) { return kVisibilityNames; }
inline constexpr std::span<const NamedValue<SeccompRequirement>> NamesOf(SeccompRequirement) { return kSeccompRequirementNames; }
inline constexpr std::span<const NamedValue<BackgroundProcesses>> NamesOf(BackgroundProcesses) { return kBackgroundProcessesNames; }

// A profile's `backend`: which kind of sandbox it launches, so a remediation hint can name that
// backend's flags and a witness can ask the backend what only it knows (docker's bridge).
// "other" is any command line sandprobe has no hints for (a microVM, an agent's wrapper).
enum class Backend { kHost, kBwrap, kDocker, kPodman, kFirejail, kGvisor, kOther };
inline constexpr NamedValue<Backend> kBackendNames[] = {
    {"host", Backend::kHost},         {"bwrap", Backend::kBwrap},   {"docker", Backend::kDocker},
    {"podman", Backend::kPodman},     {"firejail", Backend::kFirejail}, {"gvisor", Backend::kGvisor},
    {"other", Backend::kOther}};
inline constexpr std::span<const NamedValue<Backend>> NamesOf(Backend) { return kBackendNames; }

// The value of a JSON name, nullopt for a name the enum does not have.
template <typename E>
constexpr std::optional<E> ValueOf(std::string_view name) {
  for (const NamedValue<E>& named : NamesOf(E{})) {
    if (named.name == name) return named.value;
  }
  return std::nullopt;
}

// The JSON name of a value ("deny").
template <typename E>
constexpr std::string_view NameOf(E value) {
  for (const NamedValue<E>& named : NamesOf(value)) {
    if (named.value == value) return named.name;
  }
  return "?";
}

}  // namespace sandprobe
