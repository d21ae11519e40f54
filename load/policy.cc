#include "load/policy.h"

#include <algorithm>
#include <unordered_map>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "load/path_text.h"

namespace sandprobe {
namespace {

// An optional member whose value is one of the enum's JSON names; `out` keeps its default when
// the member is absent (or wrong: the reader then holds the error, naming every allowed value).
template <typename E>
void ReadEnum(ObjectReader& r, const char* key, E& out) {
  std::optional<std::string> name = r.String(key, Presence::kOptional);
  if (!name) return;
  std::vector<std::string> allowed;
  for (const NamedValue<E>& named : NamesOf(out)) {
    if (named.name == *name) {
      out = named.value;
      return;
    }
    allowed.emplace_back(named.name);
  }
  r.FailAt(r.PointerTo(key), fmt::format("expected one of {}, got \"{}\"", QuotedList(allowed), *name));
}

using Paths = std::vector<PolicyPath>;

// CAP_[A-Z_]+
bool IsCapabilityName(const std::string& name) {
  return name.size() > 4 && name.rfind("CAP_", 0) == 0 &&
         std::all_of(name.begin() + 4, name.end(), [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; });
}

// Absolute, or one placeholder at the start followed by nothing or "/...". Any other `{...}`
// would be silently literal, so it is refused.
std::optional<std::string> PathProblem(const std::string& path) {
  if (std::optional<std::string> invisible = InvisibleCharacterProblem(path)) return invisible;
  std::string rest = path;
  for (std::string_view prefix : {"{host_canary}", "{workspace}"}) {
    if (path.rfind(prefix, 0) == 0) {
      rest = path.substr(prefix.size());
      if (!rest.empty() && rest[0] != '/') {
        return fmt::format("{} must be followed by nothing or \"/\"", prefix);
      }
    }
  }
  if (rest == path && (path.empty() || path[0] != '/')) {
    return std::string("must be absolute or start with {host_canary} or {workspace}");
  }
  if (rest.find_first_of("{}") != std::string::npos) {
    return std::string("only {host_canary} and {workspace} are allowed, at the start");
  }
  return std::nullopt;
}


Paths ReadPaths(ObjectReader& r, const std::string& key) {
  Paths out;
  std::vector<std::string> list = r.StringList(key, Presence::kOptional).value_or(std::vector<std::string>{});
  for (std::size_t i = 0; i < list.size() && r.ok(); ++i) {
    JsonPointer ptr = r.PointerTo(key) / i;
    if (std::optional<std::string> problem = PathProblem(list[i])) r.FailAt(ptr, *problem);
    out.push_back({list[i], r.doc().RefTo(ptr)});
  }
  return out;
}

// A path in both lists of a contradictory pair, or twice in one list, is an error at the
// occurrence that comes later in the file.
// One pass in file order with a map from normalized path to its first occurrence: policies
// with thousands of paths are expected (one launch checks them all), so no pairwise compare.
void CheckNoOverlap(ObjectReader& r, const Paths& a, const Paths& b) {
  struct Entry {
    std::size_t offset;
    const PolicyPath* path;
  };
  std::vector<Entry> all;
  for (const Paths* list : {&a, &b}) {
    for (const PolicyPath& p : *list) all.push_back({r.doc().OffsetOf(JsonPointer(p.ref.pointer)), &p});
  }
  std::sort(all.begin(), all.end(), [](const Entry& x, const Entry& y) { return x.offset < y.offset; });
  std::unordered_map<std::string, const PolicyPath*> first;
  for (const Entry& e : all) {
    auto [seen, inserted] = first.emplace(NormalizedPath(e.path->path), e.path);
    if (inserted) continue;
    r.FailAt(JsonPointer(e.path->ref.pointer),
             fmt::format("\"{}\" is also listed at {}", e.path->path, seen->second->ref.pointer));
    return;
  }
}

void ReadFilesystem(ObjectReader& parent, FilesystemPolicy& fs) {
  if (!parent.Has("filesystem")) return;
  ObjectReader r(parent.doc(), parent.PointerTo("filesystem"),
                 {"readable", "unreadable", "writable", "unwritable"});
  fs.readable = ReadPaths(r, "readable");
  fs.unreadable = ReadPaths(r, "unreadable");
  fs.writable = ReadPaths(r, "writable");
  fs.unwritable = ReadPaths(r, "unwritable");
  CheckNoOverlap(r, fs.readable, fs.unreadable);
  CheckNoOverlap(r, fs.writable, fs.unwritable);
  parent.Fail(r.status());
}

// network.allow: each entry parsed into its kind (load/network_allow.h); a destination listed
// twice is an error at the later one.
std::vector<AllowEntry> ReadAllowList(ObjectReader& r) {
  std::vector<AllowEntry> out;
  std::vector<std::string> list = r.StringList("allow", Presence::kOptional).value_or(std::vector<std::string>{});
  for (std::size_t i = 0; i < list.size() && r.ok(); ++i) {
    const JsonPointer ptr = r.PointerTo("allow") / i;
    StatusOr<AllowEntry> entry = ParseAllowEntry(list[i]);
    if (!entry.ok()) {
      r.FailAt(ptr, entry.status().message());
      break;
    }
    entry->ref = r.doc().RefTo(ptr);
    for (std::size_t j = 0; j < out.size(); ++j) {
      const AllowEntry& earlier = out[j];
      if (earlier.kind == entry->kind && earlier.host == entry->host && earlier.port == entry->port &&
          earlier.prefix_length == entry->prefix_length) {
        r.FailAt(ptr, fmt::format("\"{}\" is the destination of /network/allow/{} (\"{}\")", list[i], j, earlier.text));
      }
    }
    out.push_back(std::move(*entry));
  }
  return out;
}

void ReadNetwork(ObjectReader& parent, NetworkPolicy& net) {
  if (!parent.Has("network")) return;
  ObjectReader r(parent.doc(), parent.PointerTo("network"),
                 {"egress", "allow", "dns", "unix_sockets", "proxy"});
  ReadEnum(r, "egress", net.egress);
  net.egress_written = r.Has("egress");
  net.allow = ReadAllowList(r);
  ReadEnum(r, "dns", net.dns);
  ReadEnum(r, "unix_sockets", net.unix_sockets);
  if (std::optional<std::string> proxy = r.String("proxy", Presence::kOptional); proxy && r.ok()) {
    StatusOr<NetworkProxy> parsed = ParseNetworkProxy(*proxy);
    if (parsed.ok()) net.proxy = *parsed;
    else r.FailAt(r.PointerTo("proxy"), parsed.status().message());
  }
  parent.Fail(r.status());
}

void ReadTolerance(ObjectReader& parent, LimitsTolerance& t) {
  if (!parent.Has("tolerance")) return;
  ObjectReader r(parent.doc(), parent.PointerTo("tolerance"),
                 {"pids", "memory_percent", "cpus_percent", "wall_seconds", "tmp_percent",
                  "open_files"});
  t.pids = r.Int("pids", Presence::kOptional, 0, kMaxPolicyPids).value_or(t.pids);
  t.wall_seconds =
      r.Int("wall_seconds", Presence::kOptional, 0, kMaxPolicyWallSeconds).value_or(t.wall_seconds);
  t.open_files =
      r.Int("open_files", Presence::kOptional, 0, kMaxPolicyOpenFiles).value_or(t.open_files);
  auto percent = [&](const char* key, double& out) {
    std::optional<std::int64_t> value = r.Int(key, Presence::kOptional, 0, 100);
    if (value) out = static_cast<double>(*value);
  };
  percent("memory_percent", t.memory_percent);
  percent("cpus_percent", t.cpus_percent);
  percent("tmp_percent", t.tmp_percent);
  parent.Fail(r.status());
}

void ReadLimits(ObjectReader& parent, LimitsPolicy& limits) {
  if (!parent.Has("limits")) return;
  ObjectReader r(parent.doc(), parent.PointerTo("limits"),
                 {"pids", "memory_mib", "cpus", "wall_seconds", "tmp_mib", "open_files",
                  "tolerance"});
  limits.pids = r.Int("pids", Presence::kOptional, 1, kMaxPolicyPids);
  limits.memory_mib = r.Int("memory_mib", Presence::kOptional, 1, kMaxPolicyMib);
  limits.cpus = r.Number("cpus", Presence::kOptional,
                         {.min = 0, .max = kMaxPolicyCpus, .min_exclusive = true});
  limits.wall_seconds = r.Int("wall_seconds", Presence::kOptional, 1, kMaxPolicyWallSeconds);
  limits.tmp_mib = r.Int("tmp_mib", Presence::kOptional, 1, kMaxPolicyMib);
  limits.open_files = r.Int("open_files", Presence::kOptional, 1, kMaxPolicyOpenFiles);
  ReadTolerance(r, limits.tolerance);
  parent.Fail(r.status());
}

void ReadPersistence(ObjectReader& parent, PersistencePolicy& persistence) {
  if (!parent.Has("persistence")) return;
  ObjectReader r(parent.doc(), parent.PointerTo("persistence"),
                 {"survives", "survives_turns", "ephemeral", "background_processes"});
  persistence.survives = ReadPaths(r, "survives");
  persistence.survives_turns = ReadPaths(r, "survives_turns");
  persistence.ephemeral = ReadPaths(r, "ephemeral");
  CheckNoOverlap(r, persistence.survives, persistence.ephemeral);
  CheckNoOverlap(r, persistence.survives, persistence.survives_turns);
  CheckNoOverlap(r, persistence.survives_turns, persistence.ephemeral);
  ReadEnum(r, "background_processes", persistence.background_processes);
  parent.Fail(r.status());
}

void ReadPrivileges(ObjectReader& parent, PrivilegesPolicy& priv) {
  if (!parent.Has("privileges")) return;
  ObjectReader r(parent.doc(), parent.PointerTo("privileges"),
                 {"root", "capabilities", "no_new_privs", "seccomp", "user_namespaces"});
  priv.root = r.Bool("root", Presence::kOptional).value_or(priv.root);
  priv.capabilities = r.StringList("capabilities", Presence::kOptional).value_or(std::vector<std::string>{});
  for (std::size_t i = 0; i < priv.capabilities.size() && r.ok(); ++i) {
    JsonPointer ptr = r.PointerTo("capabilities") / i;
    if (!IsCapabilityName(priv.capabilities[i])) {
      r.FailAt(ptr, fmt::format("\"{}\" is not a capability name (CAP_[A-Z_]+)",
                                priv.capabilities[i]));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (priv.capabilities[j] == priv.capabilities[i]) {
        r.FailAt(ptr, fmt::format("duplicate of /privileges/capabilities/{}", j));
      }
    }
  }
  priv.no_new_privs = r.Bool("no_new_privs", Presence::kOptional).value_or(priv.no_new_privs);
  ReadEnum(r, "seccomp", priv.seccomp);
  ReadEnum(r, "user_namespaces", priv.user_namespaces);
  parent.Fail(r.status());
}

void ReadHost(ObjectReader& parent, HostPolicy& host) {
  if (!parent.Has("host")) return;
  ObjectReader r(parent.doc(), parent.PointerTo("host"),
                 {"pid_namespace", "network_namespace", "mount_namespace", "ipc_namespace", "uts_namespace",
                  "cgroup_namespace", "user_namespace", "env_secrets", "runtime_sockets"});
  ReadEnum(r, "pid_namespace", host.pid_namespace);
  ReadEnum(r, "network_namespace", host.network_namespace);
  ReadEnum(r, "mount_namespace", host.mount_namespace);
  ReadEnum(r, "ipc_namespace", host.ipc_namespace);
  ReadEnum(r, "uts_namespace", host.uts_namespace);
  ReadEnum(r, "cgroup_namespace", host.cgroup_namespace);
  ReadEnum(r, "user_namespace", host.user_namespace);
  ReadEnum(r, "env_secrets", host.env_secrets);
  ReadEnum(r, "runtime_sockets", host.runtime_sockets);
  parent.Fail(r.status());
}

// Fields that say opposite things (issue 26, 11). The host's network namespace "shared" says
// the host's loopback is reachable; an explicit egress "deny" says no connection leaves. Both
// judged made a too-restrictive loopback TCP fail and a loopback "allowed" pass at once. The
// explicit field about connections decides: /network/egress (the canaries on the host's
// loopback follow it; /network/allow can still name them).
void FindContradictions(Policy& p) {
  if (p.host.network_namespace == NamespaceSharing::kShared && p.network.egress_written &&
      p.network.egress == Permission::kDeny) {
    p.contradictions.push_back({p.Ref("/host/network_namespace"), p.Ref("/network/egress"),
                                "the host's network namespace, shared, makes the host's loopback reachable; "
                                "egress \"deny\" says no connection leaves: judged by /network/egress (list "
                                "loopback endpoints in /network/allow to allow them)"});
  }
}

}  // namespace

std::optional<HostNamespaceField> HostNamespace(const HostPolicy& host, std::string_view ns) {
  struct Row {
    std::string_view ns;
    const char* pointer;
    NamespaceSharing HostPolicy::*field;
  };
  static constexpr Row kRows[] = {
      {"pid", "/host/pid_namespace", &HostPolicy::pid_namespace},
      {"net", "/host/network_namespace", &HostPolicy::network_namespace},
      {"mnt", "/host/mount_namespace", &HostPolicy::mount_namespace},
      {"ipc", "/host/ipc_namespace", &HostPolicy::ipc_namespace},
      {"uts", "/host/uts_namespace", &HostPolicy::uts_namespace},
      {"cgroup", "/host/cgroup_namespace", &HostPolicy::cgroup_namespace},
      {"user", "/host/user_namespace", &HostPolicy::user_namespace},
  };
  for (const Row& row : kRows) {
    if (row.ns == ns) return HostNamespaceField{row.pointer, host.*row.field};
  }
  return std::nullopt;
}

std::string DescribeContradiction(const PolicyContradiction& c) {
  return fmt::format("{}: contradicts {}: {}", c.first.Text(), c.second.Text(), c.what);
}

std::string NormalizedPath(const std::string& path) {
  std::string out = std::filesystem::path(path).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

PolicyRef Policy::Ref(const std::string& pointer) const {
  if (document) return document->RefTo(JsonPointer(pointer));
  return PolicyRef{.file = source_path, .pointer = pointer};
}

StatusOr<Policy> ParsePolicy(const JsonDocument& doc) {
  return ParsePolicy(JsonDocument(doc));
}

StatusOr<Policy> ParsePolicy(JsonDocument&& parsed) {
  // The policy keeps its document (Policy::Ref locates promises in it): parse from that one
  // copy, not from a second.
  auto shared = std::make_shared<const JsonDocument>(std::move(parsed));
  const JsonDocument& doc = *shared;
  ObjectReader r(doc, JsonPointer(),
                 {"name", "description", "filesystem", "network", "limits", "persistence",
                  "privileges", "host"});
  Policy p;
  p.source_path = doc.file_name();
  p.raw = doc.root();
  p.document = std::move(shared);
  p.name = r.Name("name", Presence::kRequired).value_or("");
  p.description = r.String("description", Presence::kRequired).value_or("");
  if (r.ok() && p.description.empty()) r.FailAt(r.PointerTo("description"), "must not be empty");
  ReadFilesystem(r, p.filesystem);
  ReadNetwork(r, p.network);
  ReadLimits(r, p.limits);
  ReadPersistence(r, p.persistence);
  ReadPrivileges(r, p.privileges);
  ReadHost(r, p.host);
  if (!r.ok()) return r.status();
  FindContradictions(p);
  return p;
}

StatusOr<Policy> LoadPolicy(const std::string& path) {
  StatusOr<JsonDocument> doc = JsonDocument::Load(path);
  if (!doc.ok()) return doc.status();
  return ParsePolicy(std::move(*doc));
}

}  // namespace sandprobe
