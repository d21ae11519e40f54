// fs.mounts, host directories: which of the host's directories can the sandbox see, wherever
// they are mounted? A path check only looks where a path usually is; `-v /etc:/somewhere` or
// `--ro-bind /etc /cfg` puts the host's /etc under a name no list holds.
//
// Each mount of the sandbox's table (probes/fs_mounts.cc) is traced to the host by what the
// kernel reports alike on both sides: its device and its root within that filesystem, matched
// against the host's own mounts of that device (witness_host_mounts.h) — a mount of the host's
// device 254:0 with root /etc is the host's /etc, at whatever mount point. That holds only when
// the sandbox's device numbers are the host kernel's: the probe's own executable (or a
// directory the harness handed in) must show the host's device and inode. Across kernels
// (gVisor, a VM) a critical directory is recognised by its listing instead, where the listing
// is host data (CriticalHostDirs()).
//
// Judged:
//   fs.mounts.host-dir:<dir>  one check per CriticalHostDirs() entry, at its severity: the host
//       directory, or a host directory holding it, is visible in the sandbox. Where the policy
//       declares <dir> readable (the check expects "allowed"), seeing it at its own path is what
//       was promised; seen elsewhere it fails all the same.
//   fs.mounts.host-dirs  every other host directory visible at a path the policy's readable
//       list does not cover (medium; high when it is mounted read-write). The readable list,
//       resolved, is the check's resolved_target (one path per line).
// Never counted: a mount that is not a directory (docker's /etc/hosts, bwrap's /dev/null: a
// file of the host, judged by the read checks by its identity), what the harness handed in (the
// workspace and the probe directory, by device and inode), cgroupfs (its roots are relative to
// the reader's cgroup namespace, so they name no host path) and mounts the host did not have
// both before and after the run (a device number reused by the sandbox's own fresh mount).
#include <fmt/format.h>

#include "contract/mountinfo.h"
#include "families/family_fs.h"

namespace sandprobe {
namespace {

using nlohmann::json;

constexpr const char* kOtherDirs = "fs.mounts.host-dirs";
constexpr const char* kDirPrefix = "fs.mounts.host-dir:";
constexpr std::size_t kMinListingEntries = 4;  // fewer names identify nothing

std::string Ino(const json& fact) {
  auto it = fact.find("ino");
  return it != fact.end() && it->is_number_unsigned() ? it->dump() : it != fact.end() && it->is_number() ? it->dump() : "";
}

// `base` + the part of `path` below `prefix` (which `path` is within).
std::string Rebase(const std::string& path, const std::string& prefix, const std::string& base) {
  const std::string rest = prefix == "/" ? path : path.substr(prefix.size());
  if (rest.empty() || rest == "/") return base;
  return base == "/" ? rest : base + rest;
}

struct SandboxMount {
  int index = -1;  // fact index
  const json* fact = nullptr;
  std::string point, root, dev, fstype, kind, ino;
  bool read_only = false;
};

struct HostMount {
  std::string dev, root, point, fstype;
};

struct Identity {
  std::string dev, ino;
  bool operator==(const Identity& o) const { return !dev.empty() && !ino.empty() && dev == o.dev && ino == o.ino; }
};

// One host directory seen in the sandbox.
struct Sighting {
  const SandboxMount* mount;
  std::string host_path;  // the host directory the mount shows (its root)
  std::string at;         // where the judged directory appears in the sandbox
  std::string how;        // "a bind of host directory /etc" / "the same listing as the host's /etc"
};

std::vector<SandboxMount> SandboxMounts(const FactIndex& facts) {
  std::vector<SandboxMount> out;
  for (int index : facts.OfFamily("fs.mounts")) {
    const json& f = facts.Fact(index);
    if (FactString(f, "variant") == "summary") continue;
    out.push_back({index, &f, FactString(f, "path"), FactString(f, "root"), FactString(f, "dev"), FactString(f, "fstype"), FactString(f, "kind"),
                   Ino(f), HasMountOption(FactString(f, "mount_options"), "ro")});
  }
  return out;
}

// The sandbox mount that shows `path` (the last of the longest mount points holding it).
const SandboxMount* Holding(const std::vector<SandboxMount>& mounts, const std::string& path) {
  const SandboxMount* best = nullptr;
  for (const SandboxMount& m : mounts) {
    if (PathWithin(path, m.point) && (best == nullptr || m.point.size() >= best->point.size())) best = &m;
  }
  return best;
}

// The host directory a sandbox mount shows: the host mount of its device and type whose root
// holds the mount's root most closely; "" when the host has no such mount.
std::string HostPathOf(const SandboxMount& m, const std::vector<HostMount>& host) {
  if (m.root.empty() || m.root[0] != '/' || m.fstype == "cgroup" || m.fstype == "cgroup2") return "";
  const HostMount* best = nullptr;
  for (const HostMount& h : host) {
    if (h.dev != m.dev || h.fstype != m.fstype || !PathWithin(m.root, h.root)) continue;
    if (best == nullptr || h.root.size() >= best->root.size()) best = &h;
  }
  return best == nullptr ? "" : Rebase(m.root, best->root, best->point);
}

struct WitnessedHost {
  bool ok = false;
  std::string why_not;  // when !ok
  std::vector<HostMount> mounts;
  std::vector<std::pair<std::string, Identity>> handed_in;  // (path, identity)
  std::vector<Identity> probe_files;
  json critical;
};

WitnessedHost ReadWitnessedHost(const WitnessFacts& witnesses) {
  WitnessedHost view;
  auto it = witnesses.observed.find("host_mounts");
  if (it == witnesses.observed.end() || !it->second.is_object()) {
    view.why_not = "the harness has no record of the host's mounts (no host_mounts witness)";
    return view;
  }
  const json& w = it->second;
  if (w.contains("mountinfo_error")) {
    view.why_not = "the harness could not read its own mount table: " + FactString(w, "mountinfo_error");
    return view;
  }
  for (const json& m : w.value("mounts", json::array())) {
    view.mounts.push_back({FactString(m, "dev"), FactString(m, "root"), FactString(m, "mount_point"), FactString(m, "fstype")});
  }
  for (const json& h : w.value("handed_in", json::array())) {
    Identity id{FactString(h, "dev"), Ino(h)};
    if (FactString(h, "what") == "probe") {
      view.probe_files.push_back(id);
    } else {
      view.handed_in.emplace_back(FactString(h, "path"), id);
    }
  }
  view.critical = w.value("critical", json::object());
  view.ok = !view.mounts.empty();
  if (!view.ok) view.why_not = "the harness's record of its own mounts is empty";
  return view;
}

// Whether the sandbox's device numbers are the host kernel's: something the harness handed in
// shows the host's device and inode inside.
bool Anchored(const WitnessedHost& host, const std::vector<SandboxMount>& mounts, const json* summary, std::string* how) {
  if (summary != nullptr) {
    const Identity exe{FactString(*summary, "exe_dev"), summary->contains("exe_ino") ? (*summary)["exe_ino"].dump() : ""};
    for (const Identity& probe : host.probe_files) {
      if (probe == exe) {
        *how = "the probe's executable shows the host's device and inode";
        return true;
      }
    }
  }
  for (const SandboxMount& m : mounts) {
    for (const auto& [path, id] : host.handed_in) {
      if (id == Identity{m.dev, m.ino}) {
        *how = fmt::format("{} shows the host's {} by device and inode", m.point, path);
        return true;
      }
    }
  }
  return false;
}

bool HandedIn(const WitnessedHost& host, const SandboxMount& m, const std::string& host_path) {
  for (const auto& [path, id] : host.handed_in) {
    if (id == Identity{m.dev, m.ino} || (!path.empty() && PathWithin(host_path, path))) return true;
  }
  return false;
}

std::string Describe(const Sighting& s) {
  return fmt::format("{} ({}; mount {}, dev {}, {})", s.at, s.how, s.mount->fact->value("mount_id", 0), s.mount->dev,
                     s.mount->read_only ? "ro" : "rw");
}

// Everything the two checks need, from the launch's facts and the witness.
struct Survey {
  bool ok = false;
  std::string why_not;
  bool anchored = false;
  std::string anchor;
  std::vector<SandboxMount> mounts;
  std::map<std::string, std::vector<Sighting>> critical;  // by critical dir
  std::vector<Sighting> others;                            // host dirs exposing no critical dir
  std::size_t host_sourced = 0;
};

void AddCriticalByIdentity(Survey& s, const SandboxMount& m, const std::string& host_path) {
  for (const CriticalHostDir& dir : CriticalHostDirs()) {
    if (!PathWithin(dir.path, host_path)) continue;
    const std::string at = Rebase(dir.path, host_path, m.point);
    if (Holding(s.mounts, at) != &m) continue;  // covered there by another mount
    s.critical[dir.path].push_back({&m, host_path, at, fmt::format("a bind of host directory {}", host_path)});
  }
}

void AddCriticalByListing(Survey& s, const WitnessedHost& host) {
  for (const CriticalHostDir& dir : CriticalHostDirs()) {
    const json c = host.critical.value(dir.path, json::object());
    if (!dir.listing_identifies || !c.value("ok", false) || c.value("truncated", true) ||
        c.value("entries", 0) < static_cast<int>(kMinListingEntries)) {
      continue;
    }
    for (const SandboxMount& m : s.mounts) {
      if (FactString(*m.fact, "sha256") != FactString(c, "sha256") || Holding(s.mounts, m.point) != &m) continue;
      bool known = false;
      for (const Sighting& seen : s.critical[dir.path]) known = known || seen.mount == &m;
      if (!known) {
        s.critical[dir.path].push_back({&m, dir.path, m.point,
                                        fmt::format("the same {} names as the host's {}", c.value("entries", 0), dir.path)});
      }
    }
  }
}

Survey Look(const JudgeInput& in, Verdict& v) {
  Survey s;
  std::optional<int> summary = in.facts.Find("fs.mounts", "", "summary");
  if (!summary || !FactOk(in.facts.Fact(*summary))) {
    s.why_not = !summary ? "the probe reported no mount table"
                         : "the probe could not read /proc/self/mountinfo: " + FactString(in.facts.Fact(*summary), "errno");
    return s;
  }
  v.evidence.frame_indexes.push_back(*summary);
  const WitnessedHost host = ReadWitnessedHost(in.witnesses);
  if (!host.ok) {
    s.why_not = host.why_not;
    return s;
  }
  s.ok = true;
  s.mounts = SandboxMounts(in.facts);
  s.anchored = Anchored(host, s.mounts, &in.facts.Fact(*summary), &s.anchor);
  if (s.anchored) {
    for (const SandboxMount& m : s.mounts) {
      if (!m.kind.empty() && m.kind != "dir") continue;  // a file, a device node: not a directory
      const std::string host_path = HostPathOf(m, host.mounts);
      if (host_path.empty()) continue;
      ++s.host_sourced;
      if (HandedIn(host, m, host_path) || Holding(s.mounts, m.point) != &m) continue;
      bool critical = false;
      for (const CriticalHostDir& dir : CriticalHostDirs()) critical = critical || PathWithin(dir.path, host_path);
      if (critical) {
        AddCriticalByIdentity(s, m, host_path);
      } else {
        s.others.push_back({&m, host_path, m.point, fmt::format("a bind of host directory {}", host_path)});
      }
    }
  }
  AddCriticalByListing(s, host);
  return s;
}

std::string Scope(const Survey& s) {
  return s.anchored ? fmt::format("{} host-sourced mount(s) among {} ({})", s.host_sourced, s.mounts.size(), s.anchor)
                    : fmt::format("{} mounts compared by listing only: the sandbox's device numbers are not the "
                                  "host kernel's (nothing the harness handed in shows the host's device and inode)",
                                  s.mounts.size());
}

Verdict JudgeCriticalDir(const JudgeInput& in, const Survey& s, Verdict v) {
  const std::string& dir = in.check.target;
  const bool declared = in.check.expect == Expectation::kAllowed;
  v.expected = declared ? fmt::format("the host's {} visible only at {} (the policy declares it readable)", dir, dir)
                        : fmt::format("the host's {} not visible anywhere in the sandbox", dir);
  v.remediation = fmt::format("do not mount the host's {} (or a directory holding it) into the sandbox under any "
                              "name: bind only the directories the workload needs", dir);
  std::vector<std::string> seen, allowed;
  auto it = s.critical.find(dir);
  if (it != s.critical.end()) {
    for (const Sighting& sighting : it->second) {
      v.evidence.frame_indexes.push_back(sighting.mount->index);
      (declared && sighting.at == dir ? allowed : seen).push_back(Describe(sighting));
    }
  }
  v.observed = seen.empty() ? fmt::format("the host's {} is not visible; {}", dir, Scope(s))
                            : fmt::format("the host's {} is visible at {}", dir, JoinedFirst(seen, 6));
  if (!allowed.empty()) v.observed += "; at its own path, as the policy declares: " + JoinedFirst(allowed, 6);
  Judge(v, seen.empty(), Direction::kTooPermissive);
  return v;
}

Verdict JudgeOtherDirs(const JudgeInput& in, const Survey& s, Verdict v) {
  const std::vector<std::string> readable = NonEmptyLines(in.check.resolved_target);
  v.expected = "no host directory visible beyond what the harness hands in and the policy declares readable";
  v.remediation = "mount only the host directories the workload needs, and declare them in the policy's "
                  "filesystem.readable (and writable) lists";
  std::vector<std::string> seen;
  bool writable = false;
  for (const Sighting& sighting : s.others) {
    bool covered = false;
    for (const std::string& path : readable) covered = covered || PathWithin(sighting.at, path);
    if (covered) continue;
    v.evidence.frame_indexes.push_back(sighting.mount->index);
    writable = writable || !sighting.mount->read_only;
    seen.push_back(Describe(sighting));
  }
  v.observed = seen.empty() ? "no undeclared host directory is visible; " + Scope(s)
                            : "host directories the policy does not declare readable: " + JoinedFirst(seen, 6);
  Judge(v, seen.empty(), Direction::kTooPermissive);
  if (writable && v.outcome == Outcome::kFail) v.check.severity = Severity::kHigh;
  return v;
}

}  // namespace

const std::vector<CriticalHostDir>& CriticalHostDirs() {
  static const std::vector<CriticalHostDir> kDirs = {
      {"/", Severity::kCritical, false},
      {"/etc", Severity::kHigh, true},
      {"/root", Severity::kHigh, true},
      {"/home", Severity::kHigh, true},
      {"/var/lib/docker", Severity::kCritical, true},
      {"/proc", Severity::kCritical, false},
      {"/sys", Severity::kHigh, false},
      {"/dev", Severity::kCritical, false},
  };
  return kDirs;
}

bool IsHostDirCheck(const Check& check) {
  return check.id == kOtherDirs || check.id.rfind(kDirPrefix, 0) == 0;
}

Status ExpandHostDirs(const ExpandInput& in, BatchBuilder& batch) {
  std::vector<std::string> readable;
  for (const PolicyPath& path : in.policy.filesystem.readable) {
    StatusOr<std::string> resolved = ResolvePolicyPath(path, in);
    if (!resolved.ok()) return resolved.status();
    readable.push_back(*resolved);
  }
  for (const CriticalHostDir& dir : CriticalHostDirs()) {
    bool declared = false;
    for (const std::string& path : readable) declared = declared || PathWithin(dir.path, path);
    Check check;
    check.family = "fs.mounts";
    check.expect = declared ? Expectation::kAllowed : Expectation::kDenied;
    check.id = std::string(kDirPrefix) + dir.path;
    check.severity = dir.severity;
    check.target = check.resolved_target = dir.path;
    check.variant = "host-dir";
    // Declared or not, the readable list is the promise: a host directory it does not cover
    // must not be visible (a reference with file:line:col for SARIF and the console).
    check.reference = in.policy.Ref("/filesystem/readable");
    if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
  }
  Check other;
  other.family = "fs.mounts";
  other.expect = Expectation::kDenied;
  other.id = kOtherDirs;
  other.severity = Severity::kMedium;
  other.target = "host directories the policy does not declare readable";
  for (const std::string& path : readable) other.resolved_target += (other.resolved_target.empty() ? "" : "\n") + path;
  other.variant = "host-dirs";
  other.reference = in.policy.Ref("/filesystem/readable");
  return batch.AddCheck(std::move(other));
}

std::string HostDirectoryOfMount(const WitnessFacts& witnesses, const nlohmann::json& summary,
                                 const SandboxMountId& mount) {
  const WitnessedHost host = ReadWitnessedHost(witnesses);
  std::string how;
  if (!host.ok || !Anchored(host, {}, &summary, &how)) return "";
  SandboxMount m;
  m.dev = mount.dev;
  m.fstype = mount.fstype;
  m.root = mount.root;
  return HostPathOf(m, host.mounts);
}

std::vector<std::string> NonEmptyLines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

Verdict JudgeHostDirs(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  if (std::optional<int> summary = in.facts.Find("fs.mounts", "", "summary")) {
    if (std::optional<std::string> why = MountTableRefusedByRuntime(in.facts.Fact(*summary))) {
      v.outcome = Outcome::kSkip;
      v.expected = "the sandbox's mounts compared with the host's";
      v.observed = *why;
      v.evidence.frame_indexes.push_back(*summary);
      return v;
    }
  }
  const Survey s = Look(in, v);
  if (!s.ok) {
    v.outcome = Outcome::kInconclusive;
    v.observed = s.why_not;
    v.expected = "the sandbox's mounts compared with the host's";
    return v;
  }
  const CriticalHostDir* dir = nullptr;
  for (const CriticalHostDir& d : CriticalHostDirs()) dir = in.check.target == d.path ? &d : dir;
  if (!s.anchored && (dir == nullptr || !dir->listing_identifies)) {
    // Nothing to compare: another kernel's device numbers name no host mount, and this
    // directory's listing is no host data.
    v.outcome = Outcome::kSkip;
    v.expected = "the sandbox's mounts compared with the host's";
    v.observed = fmt::format("not applicable here: {}; the host's directories are recognised by their listing only "
                             "where it is host data (/etc, /root, /home, /var/lib/docker), and the fs.alias "
                             "mount_root checks look for the denied paths under every mount", Scope(s));
    return v;
  }
  if (dir == nullptr) return JudgeOtherDirs(in, s, std::move(v));
  return JudgeCriticalDir(in, s, std::move(v));
}

}  // namespace sandprobe
