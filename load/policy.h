// Policy: what a sandbox promises, as data. Default-deny: every allowance is a named field
// (grep for "allow", "readable", "writable", "survive", "visible", "shared", "root": true).
//
// Every section and field is optional; an absent one keeps the strict default written beside
// it. The planner turns each promise into checks in both directions (too permissive and too
// restrictive), so a path listed as readable is also a promise that reading it works.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/json_document.h"
#include "load/json_source.h"
#include "load/network_allow.h"
#include "model/policy_ref.h"
#include "model/policy_enums.h"
#include "model/status.h"

namespace sandprobe {

// One path from a policy list, with where it was written (for check references).
struct PolicyPath {
  // Absolute ("/etc/shadow"), or starting with a placeholder: "{host_canary}" (a host file
  // planted per run that must stay unreachable) or "{workspace}" (the run's workspace).
  std::string path;
  PolicyRef ref;  // policies/tier-low.json:7:44 /filesystem/unreadable/2
};

// A path may not be in both lists of a pair (readable/unreadable, writable/unwritable).
struct FilesystemPolicy {
  std::vector<PolicyPath> readable;    // reading must work
  std::vector<PolicyPath> unreadable;  // reading must fail
  std::vector<PolicyPath> writable;    // creating/writing must work
  std::vector<PolicyPath> unwritable;  // writing must fail
};

// What the sandbox may reach. The harness's canary endpoints are judged by net.tcp, net.udp and
// net.dns; other destinations and the proxy are parsed and validated, and skipped when run
// (net.allow.untested:, net.proxy.untested) until the egress lab exists.
struct NetworkPolicy {
  Permission egress = Permission::kDeny;        // outbound connections in general
  bool egress_written = false;                  // "egress" is in the file (not the default)
  // Destinations reachable even when egress is "deny" (load/network_allow.h): canary
  // endpoints, host names, "*." wildcards, addresses, CIDR networks, each with an optional
  // port. No two entries may be the same destination.
  std::vector<AllowEntry> allow;
  DnsPermission dns = DnsPermission::kDeny;     // name resolution (see DnsPermission)
  Permission unix_sockets = Permission::kDeny;  // host unix sockets reachable
  NetworkProxy proxy;  // JSON "proxy": the proxy the allowed destinations are reached through
};

// The largest value of each limit the machine can mean; a bigger one (or NaN, infinity) is a
// load error, so no band or ceiling computed from it overflows (cpus 1e308 made a tolerance of
// infinity, written to the report as null).
inline constexpr std::int64_t kMaxPolicyPids = std::int64_t{1} << 22;    // PID_MAX_LIMIT
inline constexpr std::int64_t kMaxPolicyMib = std::int64_t{1} << 30;     // 1 PiB
inline constexpr std::int64_t kMaxPolicyOpenFiles = 2147483584;          // the kernel's nr_open max
inline constexpr std::int64_t kMaxPolicyWallSeconds = 365LL * 24 * 3600; // a year
inline constexpr double kMaxPolicyCpus = 4096;                           // cores

// How far a measured limit may sit from the declared one and still count as "enforced at the
// declared value". JSON "limits": {"tolerance": {...}}; every field optional, >= 0, at most
// the limit's own maximum; percentages are integers 0..100.
struct LimitsTolerance {
  // Tasks (count). The probe itself and a sandbox's init count against pids.max; the probe
  // counts the tasks it saw before forking, so 1 covers one process it could not see.
  std::int64_t pids = 1;        // 0..kMaxPolicyPids
  double memory_percent = 5;    // page tables, the probe binary, the sandbox's own pages
  double cpus_percent = 15;     // CFS quota accounting over a ~2 s window
  std::int64_t wall_seconds = 1;  // 0..kMaxPolicyWallSeconds
  double tmp_percent = 5;       // filesystem metadata, tmpfs rounding
  std::int64_t open_files = 0;  // 0..kMaxPolicyOpenFiles; RLIMIT_NOFILE is exact; the probe
                                // counts inherited fds
};

// Upper bounds the sandbox must enforce; absent means "not promised" (not checked). Ranges
// (inclusive unless said):
struct LimitsPolicy {
  std::optional<std::int64_t> pids;          // processes/threads, 1..2^22
  std::optional<std::int64_t> memory_mib;    // resident memory, 1..2^30
  std::optional<std::int64_t> wall_seconds;  // a launch is killed after this, 1..31536000
  std::optional<std::int64_t> tmp_mib;       // size of /tmp, 1..2^30
  std::optional<std::int64_t> open_files;    // RLIMIT_NOFILE, 1..2147483584
  std::optional<double> cpus;                // CPU share, 1.0 = one core; (0, 4096]
  LimitsTolerance tolerance;                 // JSON "tolerance": the bands of the checks
};

// What outlives a launch. A "turn" is the next launch in the same sandbox instance (a session
// profile's next `exec`, like an agent's next command); a "session" is a fresh instance (a
// one-shot profile's every launch, or a session profile stopped and started again). The
// probe plants a token in /tmp, $HOME, /dev/shm, /var/tmp, its working directory and every
// path listed here; a location listed nowhere is ephemeral (default-deny). The lists must not
// overlap.
struct PersistencePolicy {
  std::vector<PolicyPath> survives;        // still there in the next turn and a new session
  std::vector<PolicyPath> survives_turns;  // there in the next turn, gone in a new session
  std::vector<PolicyPath> ephemeral;       // gone at the next launch, even in the same session
  // A background process started by a launch: "die" (gone when the launch ends),
  // "survive_turns" (alive in the next turn, gone in a new session), "survive".
  BackgroundProcesses background_processes = BackgroundProcesses::kDie;
};

struct PrivilegesPolicy {
  bool root = false;                      // uid 0 inside allowed
  std::vector<std::string> capabilities;  // effective caps allowed ("CAP_NET_BIND_SERVICE")
  bool no_new_privs = true;               // PR_SET_NO_NEW_PRIVS must be set
  SeccompRequirement seccomp = SeccompRequirement::kRequired;  // a seccomp filter
  Permission user_namespaces = Permission::kDeny;  // creating user namespaces
};

struct HostPolicy {
  NamespaceSharing pid_namespace = NamespaceSharing::kIsolated;      // host processes seen
  NamespaceSharing network_namespace = NamespaceSharing::kIsolated;  // host interfaces
  // The host's other namespaces (priv.namespace:<ns>): isolation is hardening, each judged at
  // its exposure (mount high, ipc medium, uts, cgroup, user low); "shared" is the named
  // allowance, as `infer` writes it for a sandbox that shares one (docker without --cgroupns
  // private on cgroup v1, without userns-remap). Not privileges.user_namespaces, which is
  // about making new user namespaces.
  NamespaceSharing mount_namespace = NamespaceSharing::kIsolated;
  NamespaceSharing ipc_namespace = NamespaceSharing::kIsolated;
  NamespaceSharing uts_namespace = NamespaceSharing::kIsolated;
  NamespaceSharing cgroup_namespace = NamespaceSharing::kIsolated;
  NamespaceSharing user_namespace = NamespaceSharing::kIsolated;
  Visibility env_secrets = Visibility::kHidden;      // launcher env leaks
  Visibility runtime_sockets = Visibility::kHidden;  // docker.sock & co.
};

// The host namespace field of a namespace name ("pid", "net", "mnt", "ipc", "uts", "cgroup",
// "user"): its pointer ("/host/mount_namespace") and the policy's value; nullopt for another name.
struct HostNamespaceField {
  std::string pointer;
  NamespaceSharing sharing;
};
std::optional<HostNamespaceField> HostNamespace(const HostPolicy& host, std::string_view ns);

// Two fields of one policy that say opposite things about the same behaviour. The policy
// loads (the run judges by the field `what` names); `sandprobe validate` and `run` say so, with where each
// field is written.
struct PolicyContradiction {
  PolicyRef first, second;  // as written: file:line:col and pointer of each
  std::string what;         // "...: judged by /network/egress"
};

struct Policy {
  std::string name;         // [a-z0-9][a-z0-9._-]*, required
  std::string description;  // required, non-empty
  std::string source_path;  // the file it was loaded from
  FilesystemPolicy filesystem;
  NetworkPolicy network;
  LimitsPolicy limits;
  PersistencePolicy persistence;
  PrivilegesPolicy privileges;
  HostPolicy host;
  std::vector<PolicyContradiction> contradictions;  // found at load; see PolicyContradiction
  nlohmann::json raw;  // as loaded
  // The file with its positions (null for a policy built in code): what Ref locates in.
  std::shared_ptr<const JsonDocument> document;

  // Where the promise at `pointer` ("/limits/pids") comes from: this file, the pointer, and
  // the value's line:col when the file was loaded.
  PolicyRef Ref(const std::string& pointer) const;
};

// "FILE:L:C /host/network_namespace: contradicts FILE:L:C /network/egress: ...": one line per
// contradiction, for validate and run.
std::string DescribeContradiction(const PolicyContradiction& c);

// "/tmp/" and "/tmp/./" name the same place as "/tmp": the form paths are compared in.
std::string NormalizedPath(const std::string& path);

// Loads and validates a policy; the first error is returned as "file:line:col: /ptr: what".
// A string with a NUL and a number out of its range above are errors too.
StatusOr<Policy> LoadPolicy(const std::string& path);
StatusOr<Policy> ParsePolicy(const JsonDocument& doc);
StatusOr<Policy> ParsePolicy(JsonDocument&& doc);  // keeps `doc` without copying it

}  // namespace sandprobe
