// fs.mounts: does the sandbox's mount table hold a whole host filesystem somewhere the host
// does not have it? `-v /:/host` (the host's root) and a bind of a host disk's filesystem are
// doors every path check walks past: the denied paths are there under another name.
//
// The sandbox's facts (probes/fs_mounts.cc) are compared with the host's own mount table
// (observed["host_paths"], witness_host_paths.h) by device and root, which the kernel reports
// alike on both sides; the source the sandbox's table names is not trusted. A mount counts when
// it is a host filesystem's root (the host's "/" mount, or the shortest root of a host block
// device) at a mount point where the host does not have it: so a sandbox whose own "/" is the
// host's root (bwrap --ro-bind / /, firejail) is not a "bind" here (the path checks judge it),
// and docker's single-file binds of /etc/hosts (root /var/lib/docker/...) never count.
#include <fmt/format.h>

#include "families/family_fs.h"

namespace sandprobe {
namespace {

using nlohmann::json;

constexpr const char* kRootBind = "host-root-bind";
constexpr const char* kBlockDevice = "host-block-device";

// A host filesystem root the sandbox must not hold elsewhere.
struct HostFilesystem {
  std::string dev, root, source;
  std::vector<std::string> host_mount_points;  // where the host has that root
};

// From observed["host_paths"]: the host's root filesystem, or the block-device filesystems
// other than it (each by its shortest root).
std::vector<HostFilesystem> HostFilesystems(const json& host, bool root_only) {
  std::vector<HostFilesystem> out;
  const json& root = host.contains("root") ? host["root"] : json();
  std::string root_dev = root.is_object() ? FactString(root, "dev") : "";
  if (root_only) {
    if (!root_dev.empty()) out.push_back({root_dev, FactString(root, "root"), FactString(root, "source"), {"/"}});
    return out;
  }
  if (!host.contains("block_mounts") || !host["block_mounts"].is_array()) return out;
  for (const json& m : host["block_mounts"]) {
    if (!m.is_object() || FactString(m, "dev") == root_dev) continue;
    HostFilesystem* fs = nullptr;
    for (HostFilesystem& known : out) fs = known.dev == FactString(m, "dev") ? &known : fs;
    if (fs == nullptr) {
      out.push_back({FactString(m, "dev"), FactString(m, "root"), FactString(m, "source"), {}});
      fs = &out.back();
    }
    if (FactString(m, "root").size() < fs->root.size()) {
      *fs = {FactString(m, "dev"), FactString(m, "root"), FactString(m, "source"), {}};
    }
  }
  for (HostFilesystem& fs : out) {
    for (const json& m : host["block_mounts"]) {
      if (FactString(m, "dev") == fs.dev && FactString(m, "root") == fs.root) {
        fs.host_mount_points.push_back(FactString(m, "mount_point"));
      }
    }
  }
  return out;
}

Status ExpandOne(BatchBuilder& batch, const char* what, Severity severity) {
  Check check;
  check.family = "fs.mounts";
  check.expect = Expectation::kDenied;
  check.id = fmt::format("fs.mounts.{}", what);
  check.severity = severity;
  check.target = what;
  check.variant = what;
  check.reference = PolicyRef::InWords("the suite's fs.mounts entry");
  return batch.AddCheck(std::move(check));
}

}  // namespace

Status ExpandFsMounts(const ExpandInput& in, BatchBuilder& batch) {
  batch.Invocation("fs.mounts");  // no arguments: the probe reports the whole table
  if (Status s = ExpandOne(batch, kRootBind, Severity::kCritical); !s.ok()) return s;
  if (Status s = ExpandOne(batch, kBlockDevice, Severity::kHigh); !s.ok()) return s;
  return ExpandHostDirs(in, batch);
}

std::optional<std::string> MountTableRefusedByRuntime(const nlohmann::json& summary) {
  if (FactOk(summary) || FactString(summary, "denied_by") != "runtime-permission") return std::nullopt;
  return fmt::format("not expressible here: the runtime's permission model refused /proc/self/mountinfo to the "
                     "code it runs ({}); its code shares the host's mount namespace, so the runtime's "
                     "permissions, judged by fs.read and fs.alias, are the boundary",
                     FactString(summary, "runtime_error").empty() ? "refused" : FactString(summary, "runtime_error"));
}

Verdict JudgeFsMounts(const JudgeInput& in) {
  if (IsHostDirCheck(in.check)) return JudgeHostDirs(in);
  Verdict v = StartVerdict(in);
  bool root_check = in.check.variant == kRootBind;
  v.expected = root_check ? "the host's root filesystem is not mounted inside the sandbox"
                          : "no host disk's filesystem is mounted inside the sandbox";
  v.remediation = root_check
                      ? "remove the bind mount of the host's / (e.g. docker -v /:/host); mount "
                        "only the directories the workload needs"
                      : "remove the mount of the host disk's filesystem; bind only the "
                        "directories the workload needs";
  std::optional<int> summary = in.facts.Find("fs.mounts", "", "summary");
  auto host = in.witnesses.observed.find("host_paths");
  if (summary) {
    if (std::optional<std::string> why = MountTableRefusedByRuntime(in.facts.Fact(*summary))) {
      v.outcome = Outcome::kSkip;
      v.observed = *why;
      v.evidence.frame_indexes.push_back(*summary);
      return v;
    }
  }
  if (!summary || !FactOk(in.facts.Fact(*summary)) || host == in.witnesses.observed.end()) {
    v.outcome = Outcome::kInconclusive;
    v.observed = !summary ? "the probe reported no mount table"
                 : host == in.witnesses.observed.end()
                     ? "the harness has no record of the host's own mount table"
                     : "the probe could not read /proc/self/mountinfo: " +
                           FactString(in.facts.Fact(*summary), "errno");
    return v;
  }
  v.evidence.frame_indexes.push_back(*summary);
  std::vector<HostFilesystem> filesystems = HostFilesystems(host->second, root_check);
  if (filesystems.empty() && root_check) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "the harness could not find its own root mount in /proc/self/mountinfo";
    return v;
  }
  std::vector<std::string> found;
  std::string own_root;
  for (int index : in.facts.OfFamily("fs.mounts")) {
    const json& m = in.facts.Fact(index);
    if (FactString(m, "variant") == "summary") continue;
    for (const HostFilesystem& fs : filesystems) {
      if (FactString(m, "dev") != fs.dev || FactString(m, "root") != fs.root) continue;
      const std::string point = FactString(m, "path");
      bool where_host_has_it = false;
      for (const std::string& p : fs.host_mount_points) where_host_has_it = where_host_has_it || p == point;
      if (where_host_has_it) {
        own_root = point;
        continue;
      }
      v.evidence.frame_indexes.push_back(index);
      found.push_back(fmt::format("{} (dev {}, root {}; the host's {})", point, fs.dev, fs.root,
                                  fs.source.empty() ? "filesystem" : fs.source));
    }
  }
  v.evidence.witness_facts.push_back(fmt::format("host filesystems compared: {}", filesystems.size()));
  if (found.empty()) {
    v.observed = fmt::format("{} mounts, none is {} elsewhere", in.facts.OfFamily("fs.mounts").size() - 1,
                             root_check ? "the host's root filesystem" : "a host disk's filesystem");
    if (!own_root.empty()) {
      v.observed += fmt::format("; the sandbox's {} is the host's own (judged by the path checks)", own_root);
    }
  } else {
    v.observed = "mounted: " + found.front();
    if (found.size() > 1) v.observed += fmt::format(" and {} more", found.size() - 1);
  }
  Judge(v, found.empty(), Direction::kTooPermissive);
  if (in.facts.Fact(*summary).value("truncated", false)) {
    v.observed += "; the mount table was cut at its cap";
    if (v.outcome == Outcome::kPass) v.outcome = Outcome::kInconclusive;  // the rest is unseen
  }
  return v;
}

}  // namespace sandprobe
